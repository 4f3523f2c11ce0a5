// What an MCP tool is to the server: a name, a description written for a model, a
// JSON Schema for its arguments, behaviour hints, and a handler (docs/MCP.md).
//
// The server validates arguments against `input_schema` (tools/mcp/schema.h) before
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

// ---- bounded output (docs/MCP.md "Bounded output") ----
// A tools/call response carries its result twice: as structuredContent and, in the
// text content, as that JSON written into a JSON string. The budget counts both:
//
//   kMaxResponseBytes  the whole response line, JSON-RPC envelope included. At ~4
//                      bytes per token of JSON that is ~16,400 tokens, under the
//                      20,000 tokens clients allow a tool result.
//   kMaxResultBytes    what a tool may spend on the values of its result, measured
//                      with ResultCost (both copies); the rest is for the envelope
//                      and a result's few fixed fields (total, nextCursor, ...).
//
// The server enforces kMaxResponseBytes on every result (Server::CallTool cuts an
// oversized one with ShrinkToFit); tools stay within kMaxResultBytes themselves so
// that what they cut is cut sensibly (pages with a cursor, text in slices).
inline constexpr size_t kMaxResponseBytes = 64 << 10;
inline constexpr size_t kMaxResultBytes = kMaxResponseBytes - (4 << 10);

// ---- the answer bound of a call (docs/MCP.md "Bounded output") ----
// Within the response cap above, every answer is bounded much lower by default: its
// text content (and the JSON of its structuredContent) is at most kDefaultAnswerBytes,
// about 2,000 tokens. A caller raises (or lowers) the bound of one call with the
// argument max_bytes, which every tool takes: the server reads and removes it before
// the tool's schema is checked (TakeAnswerBytes), so it costs no bytes in tools/list,
// and sets it for the call (ScopedAnswerBytes). Tools cut to ResultBudget(), the
// server cuts whatever still exceeds AnswerBytes() (the one place every answer passes).
inline constexpr size_t kDefaultAnswerBytes = 8000;
inline constexpr size_t kMinAnswerBytes = 1000;
inline constexpr size_t kMaxAnswerBytes = 30000;  // 2x fits kMaxResultBytes
inline constexpr std::string_view kAnswerBytesArg = "max_bytes";

// The text bound of the call being answered on this thread (kDefaultAnswerBytes
// outside a call).
size_t AnswerBytes();
// What a tool may spend on its result, in ResultCost (both copies): twice
// AnswerBytes() less room for the few fields added after cutting (total,
// nextCursor, revision, truncated).
size_t ResultBudget();
// Sets AnswerBytes() for the lifetime of the object (restores the previous value).
class ScopedAnswerBytes {
 public:
  explicit ScopedAnswerBytes(size_t bytes);
  ~ScopedAnswerBytes();
  ScopedAnswerBytes(const ScopedAnswerBytes&) = delete;
  ScopedAnswerBytes& operator=(const ScopedAnswerBytes&) = delete;

 private:
  size_t previous_;
};
// Raises AnswerBytes() to `bytes` (at most kMaxAnswerBytes) for the rest of the call
// (until the enclosing ScopedAnswerBytes ends): a tool whose caller asked for a size
// of its own (budget_tokens) is bounded by it.
void RaiseAnswerBytes(size_t bytes);
// Removes max_bytes from `args` (an object) and returns it, kDefaultAnswerBytes when
// absent. InvalidArgument, `args` unchanged, when it is not an integer in
// [kMinAnswerBytes, kMaxAnswerBytes].
Result<size_t> TakeAnswerBytes(Json* args);

// What `value` adds to a response: its JSON (structuredContent) plus the same JSON
// escaped inside the text content's string.
size_t ResultCost(const Json& value);
// The bytes `text` takes written as a JSON string, quotes included.
size_t JsonStringBytes(std::string_view text);

// Cuts `value` until ResultCost(*value) <= budget: first every string longer than
// some length is cut on a character boundary and ends in "…" (the longest length
// that fits is kept), then, if that is not enough, every array and object keeps only
// its first elements. A cut object gets "truncated": true. Returns whether anything
// was cut. Tools cut more meaningfully themselves; this is the last resort that keeps
// any single item, and any response, within its budget.
bool ShrinkToFit(Json* value, size_t budget);

// The largest n in [lo, hi] with fits(n), by bisection. REQUIRES: fits(lo), and fits
// holds up to some n and not beyond (cutting less never fits where cutting more does not).
size_t LargestFitting(size_t lo, size_t hi, const std::function<bool(size_t)>& fits);

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

// Tools in the order tools/list shows them. Names are unique. A registry may be
// narrowed to a selection (a profile, tools/mcp/profiles.h): the other tools are
// then neither listed nor callable, but still known, so a call to one gets an
// error saying how to enable it rather than "unknown tool".
class ToolRegistry {
 public:
  // REQUIRES: no tool named tool.name yet.
  void Add(Tool tool);
  // The enabled tool named `name`, else null.
  const Tool* Find(std::string_view name) const;
  // The enabled tools, in order.
  const std::vector<Tool>& tools() const { return tools_; }
  // Every registered tool's name, in order, the disabled ones included.
  std::vector<std::string> AllNames() const;
  // Keeps only the tools named in `names` enabled (in registration order); the
  // others are disabled. REQUIRES: every name is registered.
  void Keep(const std::vector<std::string>& names, std::string selection);
  // Whether `name` is registered but disabled by Keep.
  bool IsDisabled(std::string_view name) const;
  // What Keep was given to describe the selection (e.g. "profile agent"); empty: all.
  const std::string& selection() const { return selection_; }

 private:
  std::vector<Tool> tools_;
  std::vector<Tool> disabled_;
  std::string selection_;
};

}  // namespace amem::mcp

#endif  // AMEM_TOOLS_MCP_TOOL_H_
