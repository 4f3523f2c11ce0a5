#include "tools/mcp/profiles.h"

#include <algorithm>

#include "tools/mcp/server.h"

namespace amem::mcp {

const std::vector<ToolProfile>& ToolProfiles() {
  // Why these twelve: docs/MCP.md "Profiles".
  static const std::vector<ToolProfile> profiles = {
      {"agent",
       "record decisions, constraints and facts; recall; impact; batch writes (default)",
       {"remember", "recall", "put_memory", "link", "write_batch", "get_memory", "context",
        "hybrid_search", "impact", "changes_since"},
       12000},
      {"memory",
       "exactly the official memory server's nine tools",
       {"create_entities", "create_relations", "add_observations", "delete_entities",
        "delete_observations", "delete_relations", "read_graph", "search_nodes", "open_nodes"},
       12000},
      {"all", "every tool", {}, 32000},
  };
  return profiles;
}

const ToolProfile* FindProfile(std::string_view name) {
  for (const auto& p : ToolProfiles()) {
    if (p.name == name) return &p;
  }
  return nullptr;
}

Result<std::vector<std::string>> ResolveToolSpec(const ToolRegistry& registry,
                                                 std::string_view spec) {
  const std::vector<std::string> known = registry.AllNames();
  std::vector<std::string> wanted, unknown;
  auto want = [&](std::string_view name) {
    if (std::find(wanted.begin(), wanted.end(), name) == wanted.end()) wanted.emplace_back(name);
  };
  size_t start = 0;
  while (start <= spec.size()) {
    size_t comma = spec.find(',', start);
    if (comma == std::string_view::npos) comma = spec.size();
    std::string_view item = spec.substr(start, comma - start);
    while (!item.empty() && item.front() == ' ') item.remove_prefix(1);
    while (!item.empty() && item.back() == ' ') item.remove_suffix(1);
    start = comma + 1;
    if (item.empty()) continue;
    if (const ToolProfile* p = FindProfile(item)) {
      if (p->tools.empty()) {
        for (const auto& n : known) want(n);
      } else {
        for (auto n : p->tools) want(n);
      }
    } else if (std::find(known.begin(), known.end(), item) != known.end()) {
      want(item);
    } else {
      unknown.emplace_back(item);
    }
  }
  if (unknown.empty() && wanted.empty()) unknown.emplace_back(spec);
  if (!unknown.empty()) {
    std::string msg = "unknown tool or profile";
    for (size_t i = 0; i < unknown.size(); ++i) msg += (i ? ", '" : " '") + unknown[i] + "'";
    msg += "; valid profiles:";
    for (const auto& p : ToolProfiles()) msg += " " + std::string(p.name);
    msg += "; valid tools:";
    for (const auto& n : known) msg += " " + n;
    return Status::InvalidArgument(msg);
  }
  return wanted;
}

Status ApplyToolSpec(ToolRegistry* registry, std::string_view spec) {
  if (spec.empty()) spec = kDefaultProfile;
  auto names = ResolveToolSpec(*registry, spec);
  if (!names.ok()) return names.status();
  std::string selection = FindProfile(spec) ? "profile " + std::string(spec)
                                            : "tool selection " + std::string(spec);
  registry->Keep(*names, std::move(selection));
  return Status::OK();
}

size_t ToolListBytes(const ToolRegistry& registry) {
  return DumpLine(ToolListResult(registry)).size();
}

}  // namespace amem::mcp
