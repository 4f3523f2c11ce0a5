// The MCP tool index_code: `amem index` for an agent (tools/index/indexer.h,
// docs/CODE.md, docs/MCP.md).
#ifndef AMEM_TOOLS_MCP_CODE_TOOLS_H_
#define AMEM_TOOLS_MCP_CODE_TOOLS_H_

#include "tools/mcp/common.h"
#include "tools/mcp/tool.h"

namespace amem::mcp {

void AddCodeTools(ToolRegistry* registry, ToolContext* ctx);

}  // namespace amem::mcp

#endif  // AMEM_TOOLS_MCP_CODE_TOOLS_H_
