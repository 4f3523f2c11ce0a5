// The amem tools of `amem mcp` (docs/MCP.md "Tools"): policy memory (remember,
// recall, forget), typed memories and links (put_memory, get_memory, delete_memory,
// link, unlink, define_relation, write_batch), history (changes_since) and
// store_stats. The query tools are in tools/mcp/query_tools.h.
#ifndef AMEM_TOOLS_MCP_MEMORY_TOOLS_H_
#define AMEM_TOOLS_MCP_MEMORY_TOOLS_H_

#include <string>

#include "tools/mcp/common.h"

namespace amem::mcp {

void AddMemoryTools(ToolRegistry* registry, ToolContext* ctx);

// Records as the tools (and resources, tools/mcp/resources.h) give them: the CLI's
// JSON (tools/io/json_records.h), so both interfaces name fields alike; a node's
// vector is replaced by has_vector.
Json NodeJson(const NodeRecord& n);
Json KvJson(const KvRecord& kv);
// store_stats's answer: the store's path, then what `amem stats --json` prints.
Result<Json> StoreStatsJson(const Store& store);

// Every tool of `amem mcp`, in tools/list order: the amem tools first, then the
// query tools, then the compatibility tools.
ToolRegistry BuildRegistry(ToolContext* ctx);

// What initialize tells the model about this server (its `instructions`): how to use
// the memory well, in at most kMaxInstructionsBytes (every client puts it into the
// model's context). It names the agent profile's tools (tools/mcp/profiles.h).
inline constexpr size_t kMaxInstructionsBytes = 1200;
std::string ServerInstructions();

}  // namespace amem::mcp

#endif  // AMEM_TOOLS_MCP_MEMORY_TOOLS_H_
