// The Model Context Protocol server core: JSON-RPC 2.0 over stdio, one message per
// line (docs/MCP.md "Protocol").
//
// Methods: initialize, ping, tools/list, tools/call; notifications (no id) are
// accepted and never answered. Errors keep the server running:
//   -32700 parse error (id null)          malformed JSON, invalid UTF-8
//   -32600 invalid request                not a JSON-RPC 2.0 request; a line longer
//                                          than kMaxLineBytes (id null)
//   -32601 method not found
//   -32602 invalid params                 of initialize/tools/call, unknown tool
// Bad tool arguments are not protocol errors: they give a tool result with
// isError: true (the model can read it and retry). Every tools/call response stays
// within kMaxResponseBytes (tools/mcp/tool.h): a result that would not is cut with
// ShrinkToFit (and logged), whatever the tool.
//
// Nothing but protocol messages is written to the output; logs go to stderr.
#ifndef AMEM_TOOLS_MCP_SERVER_H_
#define AMEM_TOOLS_MCP_SERVER_H_

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include "tools/mcp/tool.h"

namespace amem::mcp {

inline constexpr size_t kMaxLineBytes = 8 << 20;  // 8 MiB per message
inline constexpr std::string_view kProtocolVersion = "2025-11-25";
// Versions a client may ask for and get echoed back; anything else gets ours.
inline constexpr std::string_view kSupportedVersions[] = {"2025-11-25", "2025-06-18",
                                                         "2025-03-26", "2024-11-05"};

class Server {
 public:
  // `tools` must outlive the server.
  explicit Server(const ToolRegistry* tools, std::string instructions = {});

  // Handles one message (a line without its newline). Returns the response line
  // (without newline), or nullopt when nothing is to be sent (notifications,
  // responses from the client, blank lines).
  std::optional<std::string> HandleLine(std::string_view line);

  // The response to a line that exceeded kMaxLineBytes.
  static std::string OversizedLineResponse(size_t max_bytes);

  // Reads messages from `in_fd` until end of input, answering each on `out_fd`.
  // Returns 0 at end of input, 1 if the output cannot be written.
  int Serve(int in_fd, int out_fd, size_t max_line_bytes = kMaxLineBytes);

  // The protocol version initialize agreed on (empty before initialize).
  const std::string& negotiated_version() const { return version_; }

 private:
  std::optional<Json> HandleMessage(const Json& msg);
  Json HandleRequest(const std::string& method, const Json& params, const Json& id);
  Json CallTool(const Json& params, const Json& id);

  const ToolRegistry* tools_;
  std::string instructions_;
  std::string version_;
};

// The result of tools/list: every enabled tool's Describe(), in order.
Json ToolListResult(const ToolRegistry& registry);

// Serialises a value as one line of JSON; invalid UTF-8 in strings is replaced
// rather than thrown on.
std::string DumpLine(const Json& value, int indent = -1);

}  // namespace amem::mcp

#endif  // AMEM_TOOLS_MCP_SERVER_H_
