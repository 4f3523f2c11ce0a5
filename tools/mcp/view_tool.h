// The MCP tool `view` (docs/MCP.md, docs/VIEW.md): a query's answer drawn as a
// graph, returned as Mermaid (or DOT, GraphML) text, or written as a file (a
// self-contained HTML page) under export_snapshot's rules.
#ifndef AMEM_TOOLS_MCP_VIEW_TOOL_H_
#define AMEM_TOOLS_MCP_VIEW_TOOL_H_

#include "tools/mcp/common.h"

namespace amem::mcp {

// REQUIRES: the query tools are in `registry` already (their schemas check the
// view's `arguments`).
void AddViewTool(ToolRegistry* registry, ToolContext* ctx);

}  // namespace amem::mcp

#endif  // AMEM_TOOLS_MCP_VIEW_TOOL_H_
