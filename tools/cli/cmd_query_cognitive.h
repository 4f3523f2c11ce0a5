// The cognitive query commands: amem revise | gaps | analogy | consolidate | drift
// (tools/cli/cmd_query_cognitive.cc; docs/QUERIES.md 12-16).
#ifndef AMEM_TOOLS_CLI_CMD_QUERY_COGNITIVE_H_
#define AMEM_TOOLS_CLI_CMD_QUERY_COGNITIVE_H_

#include "tools/cli/command.h"

namespace amem::cli {

void AddCognitiveQueryCommands(CLI::App& app, Context& ctx);

}  // namespace amem::cli

#endif  // AMEM_TOOLS_CLI_CMD_QUERY_COGNITIVE_H_
