#include "tools/mcp_tool.h"

#include <cassert>
#include <utility>

namespace amem::mcp {

ToolResult ToolError(std::string_view message) {
  ToolResult r;
  r.is_error = true;
  r.text = std::string(message);
  return r;
}

ToolResult ToolErrorFromStatus(std::string_view what, const Status& status) {
  std::string hint;
  if (status.IsNotFound()) {
    hint = " (check the key or name; search tools list what exists)";
  } else if (status.IsInvalidArgument()) {
    hint = " (fix the argument and call again)";
  } else if (status.IsCorruption()) {
    hint = " (the store is damaged; tell the user)";
  } else if (status.IsIOError()) {
    hint = " (the store could not be read or written; tell the user)";
  }
  return ToolError(std::string(what) + ": " + status.ToString() + hint);
}

Json Tool::Describe() const {
  Json d = Json::object();
  d["name"] = name;
  if (!title.empty()) d["title"] = title;
  d["description"] = description;
  d["inputSchema"] = input_schema;
  Json a = Json::object();
  if (!title.empty()) a["title"] = title;
  a["readOnlyHint"] = read_only;
  a["destructiveHint"] = destructive;
  a["idempotentHint"] = idempotent;
  a["openWorldHint"] = false;
  d["annotations"] = std::move(a);
  return d;
}

void ToolRegistry::Add(Tool tool) {
  assert(Find(tool.name) == nullptr);
  tools_.push_back(std::move(tool));
}

const Tool* ToolRegistry::Find(std::string_view name) const {
  for (const auto& t : tools_) {
    if (t.name == name) return &t;
  }
  return nullptr;
}

}  // namespace amem::mcp
