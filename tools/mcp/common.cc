#include "tools/mcp/common.h"

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <cstdio>
#include <random>
#include <thread>
#include <utility>

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include "common/hash.h"
#include "common/json_parse.h"
#include "common/utf8.h"
#include "tools/mcp/schema.h"
#include "tools/mcp/server.h"

namespace amem::mcp {

// No descriptions: the server's instructions (ServerInstructions) say once what
// as_of and at mean, rather than every read tool's schema.
Json AsOfProperties() {
  return Json::parse(R"({
    "as_of": {"type": "integer", "minimum": 0},
    "at": {"type": "integer"}
  })");
}

Json WriteProperties() {
  return Json::parse(R"({
    "run": {"type": "string", "maxLength": 256, "description": "Session id."},
    "task": {"type": "string", "maxLength": 256},
    "scope": {"type": "string", "maxLength": 256},
    "ts": {"type": "integer", "description": "Unix time."}
  })");
}

Json PageProperties(int default_limit, int max_limit) {
  Json p = Json::object();
  p["limit"] = {{"type", "integer"},
                {"minimum", 1},
                {"maximum", max_limit},
                {"description", "Page size (default " + std::to_string(default_limit) + ")."}};
  p["cursor"] = CursorProperty();
  return p;
}

Json CursorProperty() {
  // No description: every list answer's nextCursor and the instructions say what it
  // is, and tools/list is sent with every turn (docs/MCP.md "Profiles").
  return Json{{"type", "string"}};
}

Json ObjectSchema(Json properties, std::vector<std::string> required) {
  Json s = Json::object();
  s["type"] = "object";
  s["properties"] = std::move(properties);
  if (!required.empty()) s["required"] = required;
  s["additionalProperties"] = false;
  return s;
}

Json OpenObjectSchema(Json properties, std::vector<std::string> required) {
  Json s = ObjectSchema(std::move(properties), std::move(required));
  s.erase("additionalProperties");
  return s;
}

Json ArrayOf(Json items, std::string_view description) {
  return Json{{"type", "array"}, {"items", std::move(items)}, {"description", description}};
}

Json Merge(Json a, const Json& b) {
  for (const auto& [k, v] : b.items()) a[k] = v;
  return a;
}

bool DiscardBadLiveCache(const ToolContext* ctx, std::string_view tool, const Status& failed,
                         const snapshot::LiveView* live) {
  if (ctx->store == nullptr || ctx->reader != nullptr || !snapshot::IsLiveCacheCorruption(failed)) {
    return false;
  }
  Result<std::string> removed = snapshot::DiscardLiveCache(*ctx->store, live, ctx->live.get());
  if (!removed.ok()) return false;
  std::fprintf(stderr,
               "amem mcp: %.*s: the store's cached snapshot is damaged (%s); discarded %s and "
               "compiling it again\n",
               static_cast<int>(tool.size()), tool.data(), failed.ToString().c_str(),
               removed->empty() ? "nothing" : removed->c_str());
  return true;
}

Status AskOnSnapshot(const ToolContext* ctx, std::string_view tool, const Json& args,
                     const std::function<Status(const SnapshotRead&, bool* wrote)>& ask) {
  auto once = [&](snapshot::LiveView* live, bool* wrote) -> Status {
    SnapshotRead read;
    read.reader = ctx->reader;
    if (ctx->reader == nullptr) {
      AMEM_ASSIGN_OR_RETURN(view, ViewFromArgs(args));
      AMEM_ASSIGN_OR_RETURN(opened, snapshot::OpenLive(*ctx->store, view, ctx->live_options,
                                                       ctx->live.get()));
      *live = std::move(opened);  // keeps the reader open until the answer is made
      snapshot::PrintNote(*live, "amem mcp");
      read = {live->reader.get(), live->revision, view.kind == ReadView::Kind::kLatest};
    }
    AMEM_RETURN_IF_ERROR(ask(read, wrote));
    return read.reader->ContentStatus();
  };
  snapshot::LiveView live;
  bool wrote = false;
  Status s = once(&live, &wrote);
  if (!s.ok() && !wrote && DiscardBadLiveCache(ctx, tool, s, live.reader ? &live : nullptr)) {
    live = {};
    s = once(&live, &wrote);
  }
  return s;
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

std::string MakeCursor(uint64_t revision, size_t offset, size_t sub) {
  std::string c = "r" + std::to_string(revision) + "o" + std::to_string(offset);
  if (sub != 0) c += "s" + std::to_string(sub);
  return c;
}

std::string QueryCursor(uint64_t revision, const std::vector<size_t>& given) {
  std::string c = "r" + std::to_string(revision) + "o";
  for (size_t i = 0; i < given.size(); ++i) c += (i ? "," : "") + std::to_string(given[i]);
  return c;
}

Status ParseQueryCursor(std::string_view c, uint64_t* revision, std::vector<size_t>* given) {
  auto bad = [&] {
    return Status::InvalidArgument("cursor \"" + std::string(c.substr(0, 40)) +
                                   "\" is not a nextCursor this server returned");
  };
  size_t o = c.find('o');
  if (c.size() < 4 || c[0] != 'r' || o == std::string_view::npos || o + 1 == c.size()) return bad();
  const char* p = c.data();
  auto r = std::from_chars(p + 1, p + o, *revision);
  if (r.ec != std::errc() || r.ptr != p + o || *revision == 0) return bad();
  for (const char* q = p + o + 1;;) {
    size_t n = 0;
    auto rn = std::from_chars(q, p + c.size(), n);
    if (rn.ec != std::errc() || given->size() >= 64) return bad();
    given->push_back(n);
    if (rn.ptr == p + c.size()) break;
    if (*rn.ptr != ',') return bad();
    q = rn.ptr + 1;
  }
  return Status::OK();
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
  size_t sub = c.find('s', o);
  size_t end = sub == std::string::npos ? c.size() : sub;
  const char* p = c.data();
  auto r1 = std::from_chars(p + 1, p + o, start.revision);
  auto r2 = std::from_chars(p + o + 1, p + end, start.offset);
  if (r1.ec != std::errc() || r1.ptr != p + o || r2.ec != std::errc() || r2.ptr != p + end ||
      start.revision == 0) {
    return bad();
  }
  if (sub != std::string::npos) {
    auto r3 = std::from_chars(p + sub + 1, p + c.size(), start.sub);
    if (r3.ec != std::errc() || r3.ptr != p + c.size() || r3.ptr == p + sub + 1 ||
        start.sub == 0) {
      return bad();
    }
  }
  return start;
}

Result<ReadView> PageViewFromArgs(const Json& args, const PageStart& start) {
  if (start.revision != 0) return ReadView::AtRevision(start.revision);
  return ViewFromArgs(args);
}

bool BoundedList::Add(Json item) {
  if (full_) return false;
  constexpr size_t kSeparator = 2;  // the comma, in both copies
  size_t n = ResultCost(item) + kSeparator;
  if (items_.size() >= limit_ || (!items_.empty() && bytes_ + n > budget_)) {
    full_ = true;
    return false;
  }
  if (bytes_ + n > budget_) {
    // The first item alone is over budget: cut it to fit, and nothing else fits.
    ShrinkToFit(&item, budget_ > kSeparator ? budget_ - kSeparator : 0);
    n = ResultCost(item) + kSeparator;
    full_ = true;
  }
  bytes_ += n;
  items_.push_back(std::move(item));
  return true;
}

Json ParseJsonText(std::string_view text) {
  Result<Json> j = ParseJsonLimited<Json>(text, "stored JSON");
  return j.ok() ? std::move(*j) : Json::object();
}

namespace {

// `pos` moved back onto the start of a UTF-8 character of `text`.
size_t CharBoundary(std::string_view text, size_t pos) { return Utf8Prefix(text, pos).size(); }

// obj with the slice text[offset, offset + max_bytes) (ends on boundaries) at field.
Json WithSlice(const Json& obj, const std::string& field, std::string_view text, size_t offset,
               size_t max_bytes) {
  size_t end = max_bytes >= text.size() - offset ? text.size()
                                                 : CharBoundary(text, offset + max_bytes);
  if (end <= offset && offset < text.size()) {  // max_bytes inside one character
    end = offset + 1;
    while (end < text.size() && (static_cast<unsigned char>(text[end]) & 0xC0) == 0x80) ++end;
  }
  Json j = obj;
  j[field] = std::string(text.substr(offset, end - offset));
  if (offset == 0 && end == text.size()) return j;
  j["truncated"] = true;
  j[field + "_bytes"] = text.size();
  j[field + "_offset"] = offset;
  if (end < text.size()) j["next_" + field + "_offset"] = end;
  return j;
}

}  // namespace

Status PutTextSlice(Json* obj, const std::string& field, std::string_view text, size_t offset,
                    size_t max_bytes, size_t budget) {
  if (offset > text.size()) {
    return Status::InvalidArgument(field + "_offset " + std::to_string(offset) +
                                   " is past the end (the " + field + " has " +
                                   std::to_string(text.size()) + " bytes)");
  }
  offset = CharBoundary(text, offset);
  max_bytes = std::min(max_bytes, text.size() - offset);
  auto fits = [&](size_t n) { return ResultCost(WithSlice(*obj, field, text, offset, n)) <= budget; };
  if (!fits(max_bytes)) {
    // The largest slice that fits (at least a few bytes so that reading on moves).
    size_t lo = fits(0) ? LargestFitting(0, max_bytes, fits) : 0;
    max_bytes = std::max<size_t>(lo, std::min<size_t>(max_bytes, 64));
  }
  *obj = WithSlice(*obj, field, text, offset, max_bytes);
  // Other fields too big (a huge meta): the generic cut, as a last resort.
  ShrinkToFit(obj, budget);
  return Status::OK();
}

std::string JoinNames(const std::vector<std::string>& names, size_t max_names) {
  std::string out;
  size_t shown = std::min(names.size(), max_names);
  for (size_t i = 0; i < shown; ++i) {
    if (i > 0) out += ", ";
    out += Preview(names[i], 200);
  }
  if (shown < names.size()) out += " and " + std::to_string(names.size() - shown) + " more";
  return out;
}

namespace {
// Turns held by this thread: a write inside a read-modify-write's turn (ApplyOps
// inside RetryOnConflict) already has it; a second flock() on a new descriptor of
// the same file would wait for itself.
thread_local int t_turn_depth = 0;
}  // namespace

WriteTurn::WriteTurn(const Store& store) {
  if (t_turn_depth++ > 0) return;
  std::string path = store.path() + "/" + std::string(kWriteTurnFile);
  fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd_ < 0) return;  // a read-only directory: go on without turns
  while (::flock(fd_, LOCK_EX) != 0) {
    if (errno == EINTR) continue;
    ::close(fd_);
    fd_ = -1;
    return;
  }
}

WriteTurn::~WriteTurn() {
  --t_turn_depth;
  if (fd_ >= 0) ::close(fd_);  // closing releases the flock
}

ToolResult RetryOnConflict(Store* store, std::string_view what,
                           const std::function<Result<ToolResult>(uint64_t revision)>& attempt) {
  thread_local std::minstd_rand rng(std::random_device{}());
  WriteTurn turn(*store);
  Status last;
  for (int i = 1; i <= kMaxWriteAttempts; ++i) {
    auto rev = store->ResolveRevision(ReadView::Latest());
    if (!rev.ok()) return ToolErrorFromStatus(what, rev.status());
    auto r = attempt(*rev);
    if (r.ok()) return std::move(*r);
    last = r.status();
    if (!last.IsAborted()) break;
    // Another writer committed in between: read again at once. The writer that won
    // is already staging its next write, so waiting would only make this one lose
    // again (a sleep costs more than a small write); after a few losses in a row,
    // some jitter breaks a lockstep with a writer of the same pace.
    if (i >= 8) std::this_thread::sleep_for(std::chrono::microseconds(rng() % (50 * i)));
  }
  return ToolErrorFromStatus(what, last);
}

}  // namespace amem::mcp
