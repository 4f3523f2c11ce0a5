// JSON Lines ingest (DESIGN.md §6): the bulk write path for agents, the MCP server
// and benchmarks. Each non-blank line is one JSON object, one operation:
//
//   {"op":"node","key":K,"type":T,"content":S,"meta":{..},"confidence":F,"vector":[..]}
//   {"op":"edge","src":K,"rel":R,"dst":K,"weight":F,"payload":JSON}
//   {"op":"kv","scope":S,"ns":N,"key":K,"value":S|{..}|[..]}
//   {"op":"del_node","key":K}
//   {"op":"del_edge","src":K,"rel":R,"dst":K}
//   {"op":"del_kv","scope":S,"ns":N,"key":K}
//   {"op":"rel","name":NAME}          defines a custom relation
//
// Required: op; node key and type; edge src, rel, dst; kv scope, ns, key, value;
// del_* their identifying fields; rel name. Any line may also carry "ts" (integer
// Unix seconds), "run", "task" and "scope" (strings); they override the ingest's
// defaults for that operation where the operation records them (nodes and
// del_node: all four; edges, kv and their deletes: ts, run, task; rel: run, task).
// `amem log` lines (docs/LOG.md) are these lines plus "rev" and "rev_ts".
// A kv value that is an object or array is stored as its compact JSON text.
//
// A bad line (malformed JSON, not an object, unknown op or field, a field of the
// wrong type, an unknown node type, a non-finite number, a repeated field) rejects
// the whole input with "line N: ..."; so do errors the store finds when it applies
// the batch (unknown relation, wrong vector dimension, invalid UTF-8, oversized
// text, id collision), which it reports as "op K" and which are mapped back to
// their line. Nothing is written unless every line is good.
#ifndef AMEM_TOOLS_INGEST_H_
#define AMEM_TOOLS_INGEST_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/progress.h"
#include "common/status.h"
#include "store/store.h"

namespace amem::cli {

struct IngestBatch {
  Batch batch;
  std::vector<size_t> op_lines;  // 1-based input line of each batch operation
  size_t lines = 0;              // lines read, blank ones included
};

// Appends the operation described by `op` (one parsed ingest line) to `batch`.
// Errors do not name a line; `batch` is unchanged on error.
Status AddIngestOp(const nlohmann::json& op, Batch* batch);

// Parses one ingest line (JSON text) and appends its operation to `batch`.
Status AddIngestLine(std::string_view line, Batch* batch);

// Parses a whole JSON Lines text; errors are "line N: ...". Lines end with "\n"
// ("\r\n" accepted); blank lines are skipped but counted.
Result<IngestBatch> ParseIngest(std::string_view text, Progress* progress = nullptr);

// Store::Apply names a failing operation "op K: ...". Returns true and sets *k and
// *rest (the message after "op K") if `status` has that form.
bool SplitOpError(const Status& status, size_t* k, std::string* rest);
// `status` with the same code and message `message`.
Status WithMessage(const Status& status, std::string message);

// Rewrites an error of Store::Apply on a parsed batch ("op K: ...") as
// "line N: ...". Other errors are returned unchanged.
Status ApplyErrorToLine(const Status& status, const std::vector<size_t>& op_lines);

struct IngestSummary {
  uint64_t rev = 0;   // the committed revision (unchanged if there were no ops)
  size_t ops = 0;
  size_t lines = 0;
};

// Parses `text` and applies it to `store` in one transaction.
Result<IngestSummary> Ingest(Store* store, std::string_view text,
                             const WriteOptions& options);

}  // namespace amem::cli

#endif  // AMEM_TOOLS_INGEST_H_
