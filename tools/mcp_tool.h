// What an MCP tool is to the server: a name, a description written for a model, a
// JSON Schema for its arguments, behaviour hints, and a handler (docs/MCP.md).
//
// The server validates arguments against `input_schema` (tools/mcp_schema.h) before
// calling the handler, so a handler may rely on the declared types, required fields
// and ranges. A handler reports bad input or a failed operation with ToolError(): the
// model sees a tool result with isError: true and a message saying what to fix.
#ifndef AMEM_TOOLS_MCP_TOOL_H_
#define AMEM_TOOLS_MCP_TOOL_H_

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/status.h"

namespace amem::mcp {

// Insertion-ordered, so schemas and results read in the order they were written.
using Json = nlohmann::ordered_json;

// Every tool keeps its text result under this many bytes (~20,000 tokens at the
// usual 4 bytes per token, with room for the JSON-RPC envelope).
inline constexpr size_t kMaxResultBytes = 64 << 10;

struct ToolResult {
  Json structured = Json::object();  // structuredContent (always an object)
  std::string text;                  // content[0].text; empty: the JSON of `structured`
  bool is_error = false;
  bool pretty = false;               // render `structured` with 2-space indent as text
};

// A tool result with isError: true whose text is `message`.
ToolResult ToolError(std::string_view message);
// The tool result for a failed Status: "<what>: <status message>" plus a hint for
// the status class (e.g. NotFound → "check the key").
ToolResult ToolErrorFromStatus(std::string_view what, const Status& status);

struct Tool {
  std::string name;
  std::string title;
  std::string description;
  Json input_schema = Json::object();
  bool read_only = false;
  bool destructive = false;
  bool idempotent = false;
  std::function<ToolResult(const Json& args)> handler;

  // The entry of a tools/list answer.
  Json Describe() const;
};

// Tools in the order tools/list shows them. Names are unique.
class ToolRegistry {
 public:
  // REQUIRES: no tool named tool.name yet.
  void Add(Tool tool);
  const Tool* Find(std::string_view name) const;
  const std::vector<Tool>& tools() const { return tools_; }

 private:
  std::vector<Tool> tools_;
};

}  // namespace amem::mcp

#endif  // AMEM_TOOLS_MCP_TOOL_H_
