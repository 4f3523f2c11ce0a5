// Recording the questions asked (docs/LOG.md "Query log") and comparing answers.
//
// With --query-log FILE or AMEM_QUERY_LOG=FILE, every query answered through the
// CLI or `amem mcp` appends one line to FILE (writes append nothing):
//
//   {"ts":1700000000,"source":"cli","query":"search","args":["--limit","5"],
//    "revision":12,"digest":"9f0c2a61d4e3b5a7"}
//   {"ts":1700000001,"source":"mcp","query":"traverse","args":{"node":"file:a.cc"},
//    "revision":12,"digest":"..."}
//
// args are the arguments as given: the command line after the command's name
// (global --store and --query-log left out) or the MCP tool call's arguments.
// revision is the store revision the query read (null for --snapshot FILE).
// digest: AnswerDigest of the answer (the JSON document, for CLI text output too).
#ifndef AMEM_TOOLS_IO_QUERY_LOG_H_
#define AMEM_TOOLS_IO_QUERY_LOG_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/status.h"

namespace amem::io {

using OrderedJson = nlohmann::ordered_json;

// The answer without what names a snapshot rather than the memory: the top-level
// "revision" and every "index" field (dense node numbers, which differ between
// two snapshots of the same memory). Answers are compared in this form.
OrderedJson ComparableAnswer(const OrderedJson& answer);
// 16 hex digits of a hash of ComparableAnswer(answer)'s JSON text.
std::string AnswerDigest(const OrderedJson& answer);

struct QueryRecord {
  std::string source;  // "cli" or "mcp"
  std::string query;
  OrderedJson args;
  std::optional<uint64_t> revision;
  std::string digest;
};

// Appends `record` as one line to the file at `path` (created if missing; one
// write with O_APPEND, so concurrent writers do not interleave lines). Anything
// but a regular file (a FIFO, a device) is refused without blocking
// (AppendToFile, common/files.h).
Status AppendQueryLog(const std::string& path, const QueryRecord& record);

// One line of a query log; InvalidArgument naming what is wrong.
Result<QueryRecord> ParseQueryRecord(std::string_view line);

}  // namespace amem::io

#endif  // AMEM_TOOLS_IO_QUERY_LOG_H_
