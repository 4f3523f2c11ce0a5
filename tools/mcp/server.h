// The Model Context Protocol server core: JSON-RPC 2.0 over stdio, one message per
// line (docs/MCP.md "Protocol").
//
// Methods: initialize, ping, tools/list, tools/call, and resources/* when the server
// has Resources (tools/mcp/resources.h); notifications (no id) are accepted and never
// answered. Errors keep the server running:
//   -32700 parse error (id null)          malformed JSON, invalid UTF-8
//   -32600 invalid request                not a JSON-RPC 2.0 request; a line longer
//                                          than kMaxLineBytes (id null)
//   -32601 method not found
//   -32602 invalid params                 of initialize/tools/call/resources/*,
//                                          unknown tool, malformed resource URI
//   -32002 resource not found             resources/read (tools/mcp/resources.h)
// Bad tool arguments are not protocol errors: they give a tool result with
// isError: true (the model can read it and retry). Every tools/call response stays
// within kMaxResponseBytes (tools/mcp/tool.h): a result that would not is cut with
// ShrinkToFit (and logged), whatever the tool.
//
// Nothing but protocol messages is written to the output; logs go to stderr.
#ifndef AMEM_TOOLS_MCP_SERVER_H_
#define AMEM_TOOLS_MCP_SERVER_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tools/mcp/tool.h"

namespace amem::mcp {

inline constexpr size_t kMaxLineBytes = 8 << 20;  // 8 MiB per message
inline constexpr std::string_view kProtocolVersion = "2025-11-25";
// Versions a client may ask for and get echoed back; anything else gets ours.
inline constexpr std::string_view kSupportedVersions[] = {"2025-11-25", "2025-06-18",
                                                         "2025-03-26", "2024-11-05"};

// What a resources/* request answers: a result, or a JSON-RPC error.
struct ResourceAnswer {
  Json result;            // when code == 0
  int code = 0;           // the JSON-RPC error code, 0: none
  std::string message;
  Json data;              // error.data when not null
};

// What serves resources/* (tools/mcp/resources.h: Resources, on a store).
class ResourceProvider {
 public:
  virtual ~ResourceProvider() = default;
  // The answer to a resources/* request; nullopt for a method it does not know.
  virtual std::optional<ResourceAnswer> Handle(std::string_view method, const Json& params) = 0;
  virtual bool has_subscriptions() const = 0;
  // The subscribed URIs whose resources changed since the last call.
  virtual std::vector<std::string> CheckForUpdates() = 0;
};

// How often Serve checks for updates of subscribed resources, at most.
inline constexpr int kResourceCheckIntervalMs = 1000;

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

  // Serves the store's resources (declared in initialize's capabilities); `r` must
  // outlive the server. Serve then checks subscribed resources for updates at most
  // every kResourceCheckIntervalMs, while there are subscriptions, and sends
  // notifications/resources/updated.
  void SetResources(ResourceProvider* r) { resources_ = r; }

  // The protocol version initialize agreed on (empty before initialize).
  const std::string& negotiated_version() const { return version_; }

 private:
  std::optional<Json> HandleMessage(const Json& msg);
  Json HandleRequest(const std::string& method, const Json& params, const Json& id);
  Json CallTool(const Json& params, const Json& id);
  // Before a read in Serve: while there are subscriptions, waits for input at most
  // until the next update check is due, and makes the checks that fall due (each
  // sends its notifications on `out_fd`). False when the output cannot be written.
  bool AwaitInput(int in_fd, int out_fd);

  const ToolRegistry* tools_;
  std::string instructions_;
  std::string version_;
  ResourceProvider* resources_ = nullptr;
  int64_t next_check_ms_ = 0;  // steady clock: when the next update check is due
};

// The result of tools/list: every enabled tool's Describe(), in order.
Json ToolListResult(const ToolRegistry& registry);

// Serialises a value as one line of JSON; invalid UTF-8 in strings is replaced
// rather than thrown on.
std::string DumpLine(const Json& value, int indent = -1);

}  // namespace amem::mcp

#endif  // AMEM_TOOLS_MCP_SERVER_H_
