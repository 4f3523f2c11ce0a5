// Which tools `amem mcp` serves (docs/MCP.md "Profiles"): `amem mcp --tools SPEC` or
// AMEM_MCP_TOOLS=SPEC, where SPEC is a profile name or tool names, comma-separated
// (profile names may be mixed in: "agent,traverse").
//
//   agent   (default) the tools an agent needs to record and recall while it codes
//   memory  exactly the official memory server's nine tools, the drop-in
//   all     every registered tool; a tool added to the registry lands here by itself
//
// Every client puts the whole tools/list into the model's context on every turn, so
// each profile's list has a byte budget (kProfileBudgets), checked by the tests.
#ifndef AMEM_TOOLS_MCP_PROFILES_H_
#define AMEM_TOOLS_MCP_PROFILES_H_

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "tools/mcp/tool.h"

namespace amem::mcp {

struct ToolProfile {
  std::string_view name;
  std::string_view summary;             // one line, for --help and docs
  std::vector<std::string_view> tools;  // empty: every registered tool
  size_t list_budget_bytes;             // the tools/list result's JSON, at most
};

inline constexpr std::string_view kDefaultProfile = "agent";
inline constexpr std::string_view kToolsEnv = "AMEM_MCP_TOOLS";

// The profiles, the default first.
const std::vector<ToolProfile>& ToolProfiles();
const ToolProfile* FindProfile(std::string_view name);

// The tool names SPEC selects from `registry` (registration order), or
// InvalidArgument naming what is unknown and listing the valid profiles and tools.
Result<std::vector<std::string>> ResolveToolSpec(const ToolRegistry& registry,
                                                 std::string_view spec);

// Narrows `registry` to SPEC (empty: the default profile). Errors as ResolveToolSpec.
Status ApplyToolSpec(ToolRegistry* registry, std::string_view spec);

// The bytes of the tools/list result (its JSON, one line) of `registry`'s enabled tools.
size_t ToolListBytes(const ToolRegistry& registry);

}  // namespace amem::mcp

#endif  // AMEM_TOOLS_MCP_PROFILES_H_
