// The replayable history log (docs/LOG.md): `amem log` writes a store's history as
// JSON Lines, one operation per line; `amem replay` applies such a log to a store
// it continues, revision by revision.
//
// A line is an ingest line (tools/io/ingest.h) with every value the store recorded
// and the operation's own attribution, plus the revision it belongs to:
//
//   {"rev":3,"rev_ts":1700000000,"op":"node","key":K,"type":T,"content":S,
//    "meta":{..},"confidence":F,"ts":1700000000,"run":R,"task":T,"scope":S,
//    "vector":[..]}
//
// "rev" and "rev_ts" (the commit timestamp) come first; run, task and scope only
// when not empty; vector, last, only when the node has one.
#ifndef AMEM_TOOLS_IO_HISTORY_LOG_H_
#define AMEM_TOOLS_IO_HISTORY_LOG_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "store/store.h"

namespace amem::io {

// Appends the lines of one revision (each ending in "\n") to `out`.
void AppendLogLines(const LoggedRevision& revision, std::string* out);

struct ParsedLog {
  std::vector<LoggedRevision> revisions;
  // 1-based input line of each operation, per revision.
  std::vector<std::vector<size_t>> op_lines;
  size_t ops = 0;
  size_t lines = 0;  // read, blank ones included
  uint32_t vector_size = 0;  // of the first node with a vector (0: none)
};

// Parses a whole log. Errors are InvalidArgument "line N: ...": malformed or
// truncated JSON, a missing or bad rev/rev_ts, revisions out of order or with a
// gap, a revision whose lines disagree on rev_ts, and anything ingest refuses.
Result<ParsedLog> ParseLog(std::string_view text);

// Rewrites an error of Store::ApplyRevisions on a parsed log ("revision R: [op K: ]
// ...") as "line N: ...": the operation's line, else the revision's first line.
Status ReplayErrorToLine(const Status& status, const ParsedLog& log);

}  // namespace amem::io

#endif  // AMEM_TOOLS_IO_HISTORY_LOG_H_
