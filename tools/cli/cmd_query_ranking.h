// The ranking query commands: amem similar | text-search | hybrid-search |
// centrality (tools/cli/cmd_query_ranking.cc; docs/QUERIES.md 5, 8, 9, 10).
#ifndef AMEM_TOOLS_CLI_CMD_QUERY_RANKING_H_
#define AMEM_TOOLS_CLI_CMD_QUERY_RANKING_H_

#include "tools/cli/command.h"

namespace amem::cli {

void AddRankingQueryCommands(CLI::App& app, Context& ctx);

}  // namespace amem::cli

#endif  // AMEM_TOOLS_CLI_CMD_QUERY_RANKING_H_
