// The ranking query commands: amem similar | text-search | hybrid-search |
// centrality (tools/cmd_query_ranking.cc; QUERIES.md 5, 8, 9, 10).
#ifndef AMEM_TOOLS_CMD_QUERY_RANKING_H_
#define AMEM_TOOLS_CMD_QUERY_RANKING_H_

#include "tools/command.h"

namespace amem::cli {

void AddRankingQueryCommands(CLI::App& app, Context& ctx);

}  // namespace amem::cli

#endif  // AMEM_TOOLS_CMD_QUERY_RANKING_H_
