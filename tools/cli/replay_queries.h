// Recorded queries asked again (`amem replay-queries`, docs/LOG.md "Answer
// regressions"), for the CLI and the Python module (python/, replay_queries).
#ifndef AMEM_TOOLS_CLI_REPLAY_QUERIES_H_
#define AMEM_TOOLS_CLI_REPLAY_QUERIES_H_

#include <string>

#include "common/status.h"
#include "tools/cli/command.h"

namespace amem::cli {

// Asks every query of the query log `file` ("-": stdin) again on the snapshot file
// `snapshot`, and compares each answer with the one on `against` (another
// snapshot file) or, when `against` is empty, with the recorded digest. The report
// is what `amem replay-queries --json` prints: {snapshot, against, queries: [{line,
// source, query, args, status: same|changed, ...}], total, same, changed}.
Result<Json> ReplayQueries(const std::string& file, const std::string& snapshot,
                           const std::string& against);

}  // namespace amem::cli

#endif  // AMEM_TOOLS_CLI_REPLAY_QUERIES_H_
