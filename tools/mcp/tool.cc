#include "tools/mcp/tool.h"

#include <algorithm>
#include <cassert>
#include <iterator>
#include <utility>

#include "common/utf8.h"
#include "tools/mcp/server.h"

namespace amem::mcp {
namespace {

constexpr std::string_view kEllipsis = "…";
// Strings are never cut shorter than this before containers are cut.
constexpr size_t kMinStringBytes = 64;

size_t LongestString(const Json& v) {
  if (v.is_string()) return v.get_ref<const std::string&>().size();
  size_t n = 0;
  if (v.is_structured()) {
    for (const auto& e : v) n = std::max(n, LongestString(e));
  }
  return n;
}

size_t LargestContainer(const Json& v) {
  if (!v.is_structured()) return 0;
  size_t n = v.size();
  for (const auto& e : v) n = std::max(n, LargestContainer(e));
  return n;
}

void CapStrings(Json* v, size_t max_bytes) {
  if (v->is_string()) {
    const auto& s = v->get_ref<const std::string&>();
    if (s.size() > max_bytes) *v = std::string(Utf8Prefix(s, max_bytes)) + std::string(kEllipsis);
  } else if (v->is_structured()) {
    for (auto& e : *v) CapStrings(&e, max_bytes);
  }
}

void CapContainers(Json* v, size_t max_items) {
  if (v->is_array()) {
    if (v->size() > max_items) v->erase(v->begin() + static_cast<std::ptrdiff_t>(max_items), v->end());
  } else if (v->is_object()) {
    while (v->size() > max_items) v->erase(std::prev(v->end()));
  }
  if (v->is_structured()) {
    for (auto& e : *v) CapContainers(&e, max_items);
  }
}

}  // namespace

namespace {
thread_local size_t answer_bytes = kDefaultAnswerBytes;
// ResultCost room kept for the fields a tool adds after cutting its lists.
constexpr size_t kFixedFieldsCost = 512;
}  // namespace

size_t AnswerBytes() { return answer_bytes; }

size_t ResultBudget() { return std::min(kMaxResultBytes, 2 * answer_bytes) - kFixedFieldsCost; }

ScopedAnswerBytes::ScopedAnswerBytes(size_t bytes) : previous_(answer_bytes) {
  answer_bytes = bytes;
}
ScopedAnswerBytes::~ScopedAnswerBytes() { answer_bytes = previous_; }

void RaiseAnswerBytes(size_t bytes) {
  answer_bytes = std::max(answer_bytes, std::min(bytes, kMaxAnswerBytes));
}

Result<size_t> TakeAnswerBytes(Json* args) {
  auto it = args->find(std::string(kAnswerBytesArg));
  if (it == args->end()) return kDefaultAnswerBytes;
  const std::string range = "an integer from " + std::to_string(kMinAnswerBytes) + " to " +
                            std::to_string(kMaxAnswerBytes) + " (default " +
                            std::to_string(kDefaultAnswerBytes) + ")";
  if (!it->is_number_integer()) {
    return Status::InvalidArgument(std::string(kAnswerBytesArg) + ": must be " + range +
                                   ", got " + DumpLine(*it));
  }
  bool negative = it->is_number_integer() && !it->is_number_unsigned() && it->get<int64_t>() < 0;
  uint64_t v = negative ? 0 : it->get<uint64_t>();
  if (negative || v < kMinAnswerBytes || v > kMaxAnswerBytes) {
    return Status::InvalidArgument(std::string(kAnswerBytesArg) + ": must be " + range +
                                   ", got " + DumpLine(*it));
  }
  args->erase(it);
  return static_cast<size_t>(v);
}

size_t LargestFitting(size_t lo, size_t hi, const std::function<bool(size_t)>& fits) {
  while (lo < hi) {
    size_t mid = lo + (hi - lo + 1) / 2;
    if (fits(mid)) {
      lo = mid;
    } else {
      hi = mid - 1;
    }
  }
  return lo;
}

size_t JsonStringBytes(std::string_view text) {
  size_t n = 2;
  for (unsigned char c : text) {
    if (c == '"' || c == '\\') {
      n += 2;
    } else if (c < 0x20) {
      n += (c == '\b' || c == '\f' || c == '\n' || c == '\r' || c == '\t') ? 2 : 6;
    } else {
      n += 1;
    }
  }
  return n;
}

size_t ResultCost(const Json& value) {
  std::string json = DumpLine(value);
  return json.size() + JsonStringBytes(json);
}

bool ShrinkToFit(Json* value, size_t budget) {
  if (ResultCost(*value) <= budget) return false;
  const bool object = value->is_object();
  const Json original = std::move(*value);
  // Room for the "truncated": true the cut object gets.
  const size_t mark = object ? ResultCost(Json{{"truncated", true}}) : 0;
  const size_t target = budget > mark ? budget - mark : 0;
  auto with_strings = [&](size_t max_bytes) {
    Json v = original;
    CapStrings(&v, max_bytes);
    return v;
  };
  auto fits = [&](const Json& v) { return ResultCost(v) <= target; };
  Json cut;
  if (fits(with_strings(kMinStringBytes))) {
    size_t best = LargestFitting(kMinStringBytes, LongestString(original),
                                 [&](size_t n) { return fits(with_strings(n)); });
    cut = with_strings(best);
  } else {
    const Json strings_cut = with_strings(kMinStringBytes);
    auto with_items = [&](size_t max_items) {
      Json v = strings_cut;
      CapContainers(&v, max_items);
      return v;
    };
    if (fits(with_items(0))) {
      size_t best = LargestFitting(0, LargestContainer(strings_cut),
                                   [&](size_t n) { return fits(with_items(n)); });
      cut = with_items(best);
    } else if (object) {
      cut = Json::object();
    } else if (original.is_array()) {
      cut = Json::array();
    } else if (original.is_string()) {
      cut = std::string(kEllipsis);
    } else {
      cut = original;  // a number or a literal: nothing to cut
    }
  }
  if (object) cut["truncated"] = true;
  *value = std::move(cut);
  return true;
}

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
  } else if (status.IsAborted()) {
    hint = " (other agents kept writing the same memory; call again)";
  }
  return ToolError(std::string(what) + ": " + status.ToString() + hint);
}

Json Tool::Describe() const {
  Json d = Json::object();
  d["name"] = name;
  d["description"] = description;
  d["inputSchema"] = input_schema;
  // No title: it is for a client's display, and every byte of the list is sent to the
  // model with every turn (docs/MCP.md "Profiles"); name and description say it.
  // destructiveHint and idempotentHint mean something only for a tool that writes
  // (MCP's ToolAnnotations), so a read-only tool's list entry leaves them out.
  Json a = Json::object();
  a["readOnlyHint"] = read_only;
  if (!read_only) {
    a["destructiveHint"] = destructive;
    a["idempotentHint"] = idempotent;
  }
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

std::vector<std::string> ToolRegistry::AllNames() const {
  std::vector<std::string> names;
  for (const auto& t : tools_) names.push_back(t.name);
  for (const auto& t : disabled_) names.push_back(t.name);
  return names;
}

void ToolRegistry::Keep(const std::vector<std::string>& names, std::string selection) {
  std::vector<Tool> all = std::move(tools_);
  all.insert(all.end(), std::make_move_iterator(disabled_.begin()),
             std::make_move_iterator(disabled_.end()));
  tools_.clear();
  disabled_.clear();
  for (auto& t : all) {
    bool keep = std::find(names.begin(), names.end(), t.name) != names.end();
    (keep ? tools_ : disabled_).push_back(std::move(t));
  }
  selection_ = std::move(selection);
}

bool ToolRegistry::IsDisabled(std::string_view name) const {
  return std::any_of(disabled_.begin(), disabled_.end(),
                     [&](const Tool& t) { return t.name == name; });
}

}  // namespace amem::mcp
