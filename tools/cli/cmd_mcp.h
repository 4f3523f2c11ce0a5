// `amem mcp` (the MCP server on stdio) and `amem import-mcp-memory FILE` (migration
// from the official memory server), and where they find their store.
#ifndef AMEM_TOOLS_CLI_CMD_MCP_H_
#define AMEM_TOOLS_CLI_CMD_MCP_H_

#include <string>

#include "common/status.h"
#include "tools/cli/command.h"

namespace amem::cli {

void AddMcpCommands(CLI::App& app, Context& ctx);

}  // namespace amem::cli

namespace amem::mcp {

// The store `amem mcp` uses: `explicit_dir` when not empty (--store or AMEM_STORE),
// else `.amem` in the git top level of `cwd` (the nearest ancestor holding .git).
// Never a global store: outside a git work tree with no explicit store it is
// NotFound with a message saying how to choose one.
Result<std::string> ResolveStoreDir(const std::string& explicit_dir, const std::string& cwd);

}  // namespace amem::mcp

#endif  // AMEM_TOOLS_CLI_CMD_MCP_H_
