#include "tools/mcp/server.h"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <exception>
#include <utility>

#include <poll.h>
#include <unistd.h>

#include "common/json_parse.h"
#include "common/utf8.h"
#include "tools/mcp/schema.h"

namespace amem::mcp {
namespace {

constexpr int kParseError = -32700;
constexpr int kInvalidRequest = -32600;
constexpr int kMethodNotFound = -32601;
constexpr int kInvalidParams = -32602;
constexpr int kInternalError = -32603;

constexpr const char* kServerVersion = "0.1.0";

Json ErrorResponse(const Json& id, int code, std::string_view message, Json data = nullptr) {
  Json r = Json::object();
  r["jsonrpc"] = "2.0";
  r["id"] = id;
  r["error"] = {{"code", code}, {"message", std::string(message)}};
  if (!data.is_null()) r["error"]["data"] = std::move(data);
  return r;
}

int64_t SteadyNowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

Json ResultResponse(const Json& id, Json result) {
  Json r = Json::object();
  r["jsonrpc"] = "2.0";
  r["id"] = id;
  r["result"] = std::move(result);
  return r;
}

// MCP ids are strings or numbers (JSON-RPC's null id is not allowed). A number
// nlohmann would not print back as written arrives as its literal text, a binary
// value (ParseJsonLimited's literal_number_member), and ResponseLine echoes it.
bool IsValidId(const Json& id) { return id.is_string() || id.is_number() || id.is_binary(); }

// One response as a line, its id exactly as the request wrote it.
std::string ResponseLine(const Json& response) {
  auto it = response.find("id");
  if (it == response.end() || !it->is_binary()) return DumpLine(response);
  const auto& literal = it->get_binary();
  Json copy = response;
  copy["id"] = nullptr;
  std::string line = DumpLine(copy);
  // Keys keep their order (jsonrpc, id, ...): the first "id":null is this one.
  const std::string_view placeholder = "\"id\":null";
  size_t pos = line.find(placeholder);
  if (pos != std::string::npos) {
    line.replace(pos + 5, 4, std::string(literal.begin(), literal.end()));
  }
  return line;
}

Json RenderToolResult(const ToolResult& r) {
  std::string text = r.text;
  if (text.empty() && !r.is_error) text = DumpLine(r.structured, r.pretty ? 2 : -1);
  Json out = Json::object();
  out["content"] = Json::array({Json{{"type", "text"}, {"text", text}}});
  if (!r.is_error) out["structuredContent"] = r.structured;
  out["isError"] = r.is_error;
  return out;
}

// `text` cut to at most `max_bytes` bytes on a character boundary, "…" appended
// when something was cut.
std::string CutText(const std::string& text, size_t max_bytes) {
  if (text.size() <= max_bytes) return text;
  return std::string(Utf8Prefix(text, max_bytes)) + "…";
}

// Cuts a result whose text, or the JSON of its structuredContent, exceeds the call's
// AnswerBytes() (tools/mcp/tool.h): the one place that bounds every tool's answer
// (the tools cut their lists first, with a cursor, so that little is left to do here).
void CutToAnswerBound(ToolResult* r) {
  const size_t bound = AnswerBytes();
  if (r->is_error) {
    r->text = CutText(r->text, bound);
    return;
  }
  if (!r->text.empty() && r->text.size() > bound) {  // a text of its own (context, view)
    r->text = CutText(r->text, bound - std::string_view("…").size());
    r->structured["truncated"] = true;
  }
  if (r->text.empty() && r->pretty && DumpLine(r->structured, 2).size() > bound) r->pretty = false;
  // ResultCost <= 2 * bound keeps the JSON (the text, when it has none of its own)
  // within bound; a cut object gets "truncated": true.
  ShrinkToFit(&r->structured, 2 * bound);
}

// The rendered result, cut when the response would exceed kMaxResponseBytes (the
// tools bound their own results; this keeps the promise for any tool that did not).
Json RenderWithinBudget(ToolResult r, const Json& id, const std::string& tool) {
  CutToAnswerBound(&r);
  // The response line around the result, the id included.
  const size_t envelope = DumpLine(ResultResponse(id, Json::object())).size();
  auto fits = [&](const Json& out) { return envelope + DumpLine(out).size() <= kMaxResponseBytes; };
  Json out = RenderToolResult(r);
  if (fits(out)) return out;
  std::fprintf(stderr, "amem mcp: the result of %s exceeded %zu bytes and was cut\n",
               tool.c_str(), kMaxResponseBytes);
  // What the result may use: the response minus the envelope and the framing of
  // content/structuredContent/isError.
  const size_t framing = envelope + 128;
  const size_t budget = kMaxResponseBytes > 2 * framing ? kMaxResponseBytes - framing : 0;
  if (r.is_error) {
    r.text = CutText(r.text, budget / 8);
    return RenderToolResult(r);
  }
  r.pretty = false;
  size_t structured_budget = budget;
  if (!r.text.empty()) {  // a text of its own (not the JSON of structuredContent)
    r.text = CutText(r.text, budget / 4);
    structured_budget = budget - std::min(budget, JsonStringBytes(r.text));
    // structuredContent is sent once here; ResultCost counts it twice.
    structured_budget *= 2;
  }
  ShrinkToFit(&r.structured, structured_budget);
  return RenderToolResult(r);
}

bool WriteAll(int fd, std::string_view data) {
  while (!data.empty()) {
    ssize_t n = ::write(fd, data.data(), data.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    data.remove_prefix(static_cast<size_t>(n));
  }
  return true;
}

}  // namespace

Json ToolListResult(const ToolRegistry& registry) {
  Json list = Json::array();
  for (const auto& t : registry.tools()) list.push_back(t.Describe());
  return Json{{"tools", std::move(list)}};
}

std::string DumpLine(const Json& value, int indent) {
  return value.dump(indent, ' ', false, Json::error_handler_t::replace);
}

Server::Server(const ToolRegistry* tools, std::string instructions)
    : tools_(tools), instructions_(std::move(instructions)) {}

std::string Server::OversizedLineResponse(size_t max_bytes) {
  return DumpLine(ErrorResponse(nullptr, kInvalidRequest,
                                "message longer than " + std::to_string(max_bytes) +
                                    " bytes was discarded; send smaller requests"));
}

std::optional<std::string> Server::HandleLine(std::string_view line) {
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  if (line.find_first_not_of(" \t") == std::string_view::npos) return std::nullopt;
  JsonParseOptions options;
  options.literal_number_member = "id";
  Result<Json> parsed = ParseJsonLimited<Json>(line, "request", options);
  if (!parsed.ok()) {
    // Too deep is a request we refuse, not one we cannot read (docs/MCP.md).
    if (parsed.status().message().find(kJsonTooDeep) != std::string::npos) {
      return DumpLine(ErrorResponse(nullptr, kInvalidRequest,
                                    "invalid request: JSON " + std::string(kJsonTooDeep) + " " +
                                        std::to_string(kMaxJsonDepth) + " levels"));
    }
    return DumpLine(ErrorResponse(nullptr, kParseError, "parse error: not valid JSON"));
  }
  const Json& msg = *parsed;
  if (msg.is_array()) {
    // A JSON-RPC batch (MCP 2025-03-26 allowed them): answer each request, in order.
    if (msg.empty()) {
      return DumpLine(ErrorResponse(nullptr, kInvalidRequest, "empty batch"));
    }
    std::string out;
    for (const auto& m : msg) {
      if (auto r = HandleMessage(m)) out += (out.empty() ? "[" : ",") + ResponseLine(*r);
    }
    if (out.empty()) return std::nullopt;
    return out + "]";
  }
  auto r = HandleMessage(msg);
  if (!r) return std::nullopt;
  return ResponseLine(*r);
}

std::optional<Json> Server::HandleMessage(const Json& msg) {
  if (!msg.is_object()) {
    return ErrorResponse(nullptr, kInvalidRequest, "invalid request: expected a JSON object");
  }
  auto id_it = msg.find("id");
  bool has_id = id_it != msg.end();
  Json id = has_id && IsValidId(*id_it) ? *id_it : Json(nullptr);
  auto method_it = msg.find("method");
  if (method_it == msg.end()) {
    // A response to a request we never send, or garbage: answer only garbage with an id.
    if (msg.contains("result") || msg.contains("error")) return std::nullopt;
    return ErrorResponse(id, kInvalidRequest, "invalid request: missing \"method\"");
  }
  auto version_it = msg.find("jsonrpc");
  if (version_it == msg.end() || *version_it != "2.0") {
    return ErrorResponse(id, kInvalidRequest, "invalid request: \"jsonrpc\" must be \"2.0\"");
  }
  if (!method_it->is_string()) {
    return ErrorResponse(id, kInvalidRequest, "invalid request: \"method\" must be a string");
  }
  if (has_id && !IsValidId(*id_it)) {
    return ErrorResponse(nullptr, kInvalidRequest,
                         "invalid request: \"id\" must be a string or a number");
  }
  Json params = Json::object();
  if (auto p = msg.find("params"); p != msg.end()) {
    if (!p->is_object()) {
      if (!has_id) return std::nullopt;
      return ErrorResponse(id, kInvalidRequest, "invalid request: \"params\" must be an object");
    }
    params = *p;
  }
  const auto& method = method_it->get_ref<const std::string&>();
  if (!has_id) {
    // A notification is never answered. notifications/* need no action (calls run
    // one at a time, so there is nothing to cancel); a tools/call sent without an
    // id is still carried out, as JSON-RPC prescribes.
    if (method == "tools/call") {
      try {
        (void)CallTool(params, nullptr);
      } catch (const std::exception& e) {
        std::fprintf(stderr, "amem mcp: tools/call notification failed: %s\n", e.what());
      }
    }
    return std::nullopt;
  }
  try {
    return HandleRequest(method, params, id);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "amem mcp: internal error in %s: %s\n", method.c_str(), e.what());
    return ErrorResponse(id, kInternalError, std::string("internal error: ") + e.what());
  }
}

Json Server::HandleRequest(const std::string& method, const Json& params, const Json& id) {
  if (method == "initialize") {
    auto v = params.find("protocolVersion");
    if (v == params.end() || !v->is_string()) {
      return ErrorResponse(id, kInvalidParams,
                           "initialize: params.protocolVersion must be a string");
    }
    version_ = std::string(kProtocolVersion);
    for (auto supported : kSupportedVersions) {
      if (*v == supported) version_ = std::string(supported);
    }
    Json result = Json::object();
    result["protocolVersion"] = version_;
    result["capabilities"] = {{"tools", {{"listChanged", false}}}};
    if (resources_ != nullptr) {
      // The list is fixed (amem://stats); nodes and entries come from the templates.
      result["capabilities"]["resources"] = {{"subscribe", true}, {"listChanged", false}};
    }
    result["serverInfo"] = {{"name", "amem"}, {"title", "amem graph memory"},
                            {"version", kServerVersion}};
    if (!instructions_.empty()) result["instructions"] = instructions_;
    return ResultResponse(id, std::move(result));
  }
  if (method == "ping") return ResultResponse(id, Json::object());
  if (method == "tools/list") return ResultResponse(id, ToolListResult(*tools_));
  if (method == "tools/call") return CallTool(params, id);
  if (resources_ != nullptr) {
    if (auto a = resources_->Handle(method, params)) {
      if (a->code != 0) return ErrorResponse(id, a->code, a->message, std::move(a->data));
      return ResultResponse(id, std::move(a->result));
    }
  }
  return ErrorResponse(id, kMethodNotFound, "method not found: " + method);
}

Json Server::CallTool(const Json& params, const Json& id) {
  auto name_it = params.find("name");
  if (name_it == params.end() || !name_it->is_string()) {
    return ErrorResponse(id, kInvalidParams, "tools/call: params.name must be a string");
  }
  const auto& name = name_it->get_ref<const std::string&>();
  const Tool* tool = tools_->Find(name);
  if (tool == nullptr && tools_->IsDisabled(name)) {
    return ErrorResponse(id, kInvalidParams,
                         "tool not enabled: " + name + " is not in this server's " +
                             tools_->selection() +
                             " (tools/list names the enabled tools; start the server with "
                             "`amem mcp --tools all` or AMEM_MCP_TOOLS=all to enable every tool)");
  }
  if (tool == nullptr) {
    return ErrorResponse(id, kInvalidParams,
                         "unknown tool: " + name + " (tools/list names the tools)");
  }
  Json args = Json::object();
  if (auto a = params.find("arguments"); a != params.end() && !a->is_null()) args = *a;
  ToolResult result;
  // max_bytes, the answer bound every tool takes (tools/mcp/tool.h), is the server's.
  Result<size_t> bound = args.is_object() ? TakeAnswerBytes(&args) : kDefaultAnswerBytes;
  ScopedAnswerBytes scoped(bound.ok() ? *bound : kDefaultAnswerBytes);
  if (!bound.ok()) {
    result = ToolError("invalid arguments for " + name + ": " + bound.status().message());
  } else if (Status s = ValidateAgainstSchema(tool->input_schema, args); !s.ok()) {
    result = ToolError("invalid arguments for " + name + ": " + s.message());
  } else {
    try {
      result = tool->handler(args);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "amem mcp: %s failed: %s\n", name.c_str(), e.what());
      result = ToolError(name + " failed: " + e.what());
    }
  }
  return ResultResponse(id, RenderWithinBudget(std::move(result), id, name));
}

bool Server::AwaitInput(int in_fd, int out_fd) {
  while (resources_ != nullptr && resources_->has_subscriptions()) {
    int64_t now = SteadyNowMs();
    if (now >= next_check_ms_) {
      for (const auto& uri : resources_->CheckForUpdates()) {
        Json note{{"jsonrpc", "2.0"},
                  {"method", "notifications/resources/updated"},
                  {"params", {{"uri", uri}}}};
        if (!WriteAll(out_fd, DumpLine(note) + "\n")) return false;
      }
      next_check_ms_ = now + kResourceCheckIntervalMs;
    }
    pollfd p{in_fd, POLLIN, 0};
    int ready = ::poll(&p, 1, static_cast<int>(next_check_ms_ - now));
    if (ready < 0 && errno == EINTR) continue;
    if (ready != 0) return true;  // input, end of input, or an error read will tell
  }
  return true;
}

int Server::Serve(int in_fd, int out_fd, size_t max_line_bytes) {
  // A client that goes away must end the server with an error, not a signal.
  std::signal(SIGPIPE, SIG_IGN);
  std::string pending;
  bool discarding = false;  // inside an oversized line: drop bytes up to its newline
  char buf[64 << 10];
  auto answer = [&](std::string_view line) {
    auto response = HandleLine(line);
    if (!response) return true;
    response->push_back('\n');
    return WriteAll(out_fd, *response);
  };
  for (;;) {
    if (!AwaitInput(in_fd, out_fd)) return 1;
    ssize_t n = ::read(in_fd, buf, sizeof(buf));
    if (n < 0) {
      if (errno == EINTR) continue;
      std::perror("amem mcp: read");
      return 1;
    }
    if (n == 0) break;
    std::string_view chunk(buf, static_cast<size_t>(n));
    while (!chunk.empty()) {
      size_t nl = chunk.find('\n');
      std::string_view piece = chunk.substr(0, nl);
      chunk.remove_prefix(nl == std::string_view::npos ? chunk.size() : nl + 1);
      if (discarding) {
        if (nl != std::string_view::npos) discarding = false;
        continue;
      }
      if (pending.size() + piece.size() > max_line_bytes) {
        pending.clear();
        discarding = nl == std::string_view::npos;
        std::fprintf(stderr, "amem mcp: discarded a message longer than %zu bytes\n",
                     max_line_bytes);
        if (!WriteAll(out_fd, OversizedLineResponse(max_line_bytes) + "\n")) return 1;
        continue;
      }
      pending.append(piece);
      if (nl == std::string_view::npos) break;
      std::string line = std::move(pending);
      pending.clear();
      if (!answer(line)) return 1;
    }
  }
  if (!discarding && !pending.empty() && !answer(pending)) return 1;
  return 0;
}

}  // namespace amem::mcp
