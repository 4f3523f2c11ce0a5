// The navigation query commands: amem traverse | search | temporal | impact |
// context | resolve | path (tools/cli/cmd_query_graph.cc; docs/QUERIES.md 1-4, 6, 7, 11).
#ifndef AMEM_TOOLS_CLI_CMD_QUERY_GRAPH_H_
#define AMEM_TOOLS_CLI_CMD_QUERY_GRAPH_H_

#include "tools/cli/command.h"

namespace amem::cli {

void AddGraphQueryCommands(CLI::App& app, Context& ctx);

}  // namespace amem::cli

#endif  // AMEM_TOOLS_CLI_CMD_QUERY_GRAPH_H_
