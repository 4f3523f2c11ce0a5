// libFuzzer target for the MCP message handler (tools/mcp/server.h): any line must
// get one well-formed JSON answer (or none, for a notification), never a crash, a
// hang or unbounded memory. A tool with a schema sits behind tools/call so that
// argument validation is fuzzed too. Built and run by tests/fuzz.cmake through
// tests/run_fuzz.sh with the inputs in tests/data/fuzz_tools_mcp/.
// fuzz-link: tools/mcp/server.cc tools/mcp/tool.cc tools/mcp/schema.cc common/*.cc
// fuzz-pkg: libxxhash
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "tools/mcp/server.h"
#include "tools/mcp/tool.h"

namespace {

amem::mcp::ToolRegistry MakeRegistry() {
  using amem::mcp::Json;
  amem::mcp::ToolRegistry registry;
  amem::mcp::Tool echo;
  echo.name = "echo";
  echo.description = "Echoes its arguments.";
  echo.read_only = true;
  echo.input_schema = Json::parse(R"({
    "type": "object",
    "properties": {
      "text": {"type": "string", "minLength": 1, "maxLength": 64},
      "times": {"type": "integer", "minimum": 1, "maximum": 3},
      "tags": {"type": "array", "items": {"type": "string"}, "maxItems": 8},
      "meta": {"type": "object", "additionalProperties": {"type": "string"}},
      "mode": {"enum": ["a", "b"]}
    },
    "required": ["text"],
    "additionalProperties": false
  })");
  echo.handler = [](const Json& args) {
    amem::mcp::ToolResult r;
    r.structured = args;
    return r;
  };
  registry.Add(std::move(echo));
  return registry;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const amem::mcp::ToolRegistry registry = MakeRegistry();
  amem::mcp::Server server(&registry);
  std::string_view line(reinterpret_cast<const char*>(data), size);
  auto answer = server.HandleLine(line);
  if (answer && (answer->empty() || answer->find('\n') != std::string::npos)) __builtin_trap();
  if (answer && !amem::mcp::Json::accept(*answer)) __builtin_trap();
  return 0;
}
