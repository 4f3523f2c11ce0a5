#include "tools/mcp_common.h"

#include <charconv>
#include <utility>

#include "common/hash.h"
#include "common/utf8.h"
#include "tools/mcp_schema.h"
#include "tools/mcp_server.h"

namespace amem::mcp {

Json AsOfProperties() {
  return Json::parse(R"({
    "as_of": {"type": "integer", "minimum": 0,
              "description": "Read the memory as it was right after this store revision (every write returns its revision)."},
    "at": {"type": "integer",
           "description": "Read the memory as it was at this Unix time in seconds. Use as_of or at, not both."}
  })");
}

Json WriteProperties() {
  return Json::parse(R"({
    "run": {"type": "string", "maxLength": 256, "description": "Id of the agent run (session) making this write."},
    "task": {"type": "string", "maxLength": 256, "description": "Id of the task within the run."},
    "scope": {"type": "string", "maxLength": 256, "description": "Project or namespace the memory belongs to."},
    "ts": {"type": "integer", "description": "Timestamp of the write in Unix seconds (default: now). For replays."}
  })");
}

Json PageProperties(int default_limit, int max_limit) {
  Json p = Json::object();
  p["limit"] = {{"type", "integer"},
                {"minimum", 1},
                {"maximum", max_limit},
                {"description", "At most this many items (default " +
                                    std::to_string(default_limit) +
                                    "). Pages are also cut to stay well under 20,000 tokens."}};
  p["cursor"] = {{"type", "string"},
                 {"description",
                  "nextCursor from the previous page, to continue a listing where it stopped."}};
  return p;
}

Json ObjectSchema(Json properties, std::vector<std::string> required) {
  Json s = Json::object();
  s["type"] = "object";
  s["properties"] = std::move(properties);
  if (!required.empty()) s["required"] = required;
  s["additionalProperties"] = false;
  return s;
}

Json ArrayOf(Json items, std::string_view description) {
  return Json{{"type", "array"}, {"items", std::move(items)}, {"description", description}};
}

Json Merge(Json a, const Json& b) {
  for (const auto& [k, v] : b.items()) a[k] = v;
  return a;
}

Result<ReadView> ViewFromArgs(const Json& args) {
  bool has_rev = HasArg(args, "as_of"), has_ts = HasArg(args, "at");
  if (has_rev && has_ts) {
    return Status::InvalidArgument("give as_of (a revision) or at (a time), not both");
  }
  if (has_rev) return ReadView::AtRevision(static_cast<uint64_t>(ArgInt(args, "as_of", 0)));
  if (has_ts) return ReadView::AtTime(ArgInt(args, "at", 0));
  return ReadView::Latest();
}

WriteOptions WriteOptionsFromArgs(const Json& args) {
  WriteOptions w;
  w.run = ArgString(args, "run");
  w.task = ArgString(args, "task");
  w.scope = ArgString(args, "scope");
  if (HasArg(args, "ts")) w.ts = ArgInt(args, "ts", 0);
  return w;
}

std::string MakeCursor(uint64_t revision, size_t offset) {
  return "r" + std::to_string(revision) + "o" + std::to_string(offset);
}

Result<PageStart> PageStartFromArgs(const Json& args) {
  PageStart start;
  if (!HasArg(args, "cursor")) return start;
  std::string c = ArgString(args, "cursor");
  auto bad = [&] {
    return Status::InvalidArgument("cursor \"" + Preview(c, 40) +
                                   "\" is not a nextCursor this server returned");
  };
  size_t o = c.find('o');
  if (c.size() < 4 || c[0] != 'r' || o == std::string::npos) return bad();
  const char* p = c.data();
  auto r1 = std::from_chars(p + 1, p + o, start.revision);
  auto r2 = std::from_chars(p + o + 1, p + c.size(), start.offset);
  if (r1.ec != std::errc() || r1.ptr != p + o || r2.ec != std::errc() ||
      r2.ptr != p + c.size() || start.revision == 0) {
    return bad();
  }
  return start;
}

Result<ReadView> PageViewFromArgs(const Json& args, const PageStart& start) {
  if (start.revision != 0) return ReadView::AtRevision(start.revision);
  return ViewFromArgs(args);
}

bool BoundedList::Add(Json item) {
  if (full_) return false;
  size_t n = DumpLine(item).size() + 1;
  if (items_.size() >= limit_ || (!items_.empty() && bytes_ + n > budget_)) {
    full_ = true;
    return false;
  }
  bytes_ += n;
  items_.push_back(std::move(item));
  return true;
}

Json ParseJsonText(std::string_view text) {
  Json j = Json::parse(text.begin(), text.end(), nullptr, false);
  return j.is_discarded() ? Json::object() : j;
}

}  // namespace amem::mcp
