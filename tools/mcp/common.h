// What the store-backed MCP tools share: the store handle, read views from `as_of` /
// `at`, write attribution from `run` / `task` / `scope` / `ts`, schema fragments,
// and bounded lists with a cursor (docs/MCP.md "Bounded output").
#ifndef AMEM_TOOLS_MCP_COMMON_H_
#define AMEM_TOOLS_MCP_COMMON_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "store/store.h"
#include "snapshot/live.h"
#include "tools/mcp/tool.h"

namespace amem::snapshot {
class Reader;
}  // namespace amem::snapshot

namespace amem::mcp {

class GraphViewCache;  // tools/mcp/graph_view.h
struct StartupWork;    // tools/mcp/compat.cc

struct ToolContext {
  Store* store = nullptr;  // opened once per process; every call reads afresh
  // The compatibility graph (read_graph, search_nodes) of the live view read last
  // and its base's search index, made on first use.
  std::shared_ptr<GraphViewCache> graphs{};
  // The only directory tree export_snapshot writes into (docs/MCP.md): `amem mcp
  // --export-dir`, else the server's working directory. Empty: exports are refused.
  std::string export_dir{};
  // Append every query tool call to this query log (tools/io/query_log.h); empty: off.
  std::string query_log{};
  // Set: the query tools read this snapshot (as_of/at ignored) instead of the
  // store's, and `store` may be null (amem replay-queries).
  const snapshot::Reader* reader = nullptr;
  // The mapped base snapshot and the last base + delta view the query tools read
  // (snapshot/live.h): kept while the store and the base stay the same, so a
  // query after a write compiles only the changes since the base.
  mutable std::shared_ptr<snapshot::LiveCache> live = std::make_shared<snapshot::LiveCache>();
  snapshot::LiveOptions live_options{};
  // The live base's first-use work begun at start (StartLiveBaseWork), waited for
  // when the context goes. Last: it goes first.
  std::shared_ptr<StartupWork> startup{};
};

// ---- schema fragments (JSON Schema "properties" objects) ----
// as_of (revision) and at (Unix seconds): where a read looks.
Json AsOfProperties();
// run, task, scope, ts: attribution of a write.
Json WriteProperties();
// limit (default `default_limit`, at most `max_limit`) and cursor.
Json PageProperties(int default_limit, int max_limit);
// The cursor property: a nextCursor an earlier page returned.
Json CursorProperty();
// Arguments of amem's own tools: {"type":"object","properties":props,
// "required":required,"additionalProperties":false}; an unknown field is an error
// naming the known ones, so a typo never passes silently.
Json ObjectSchema(Json properties, std::vector<std::string> required = {});
// Arguments of the compatibility tools: the same without "additionalProperties",
// so unknown fields are accepted and ignored, as the official memory server's zod
// schemas do (an entity copied from memory.jsonl with its "type" field passes).
Json OpenObjectSchema(Json properties, std::vector<std::string> required = {});
// {"type":"array","items":items,"description":description}
Json ArrayOf(Json items, std::string_view description);
// Merges the members of `b` into `a` and returns it.
Json Merge(Json a, const Json& b);

// The view named by as_of/at (Latest when neither). InvalidArgument if both.
Result<ReadView> ViewFromArgs(const Json& args);
// After `failed` from the store's live view (opening it, or its ContentStatus()
// after a query; `live` as OpenLive gave it, or null): when it is a Corruption of
// the cache files, discards them and the server's cached views
// (snapshot::DiscardLiveCache), says so on stderr and returns true: the tool then
// asks once more, on a view compiled again.
bool DiscardBadLiveCache(const ToolContext* ctx, std::string_view tool, const Status& failed,
                         const snapshot::LiveView* live);
// What a query tool reads: the server's snapshot file, or the store's view at
// args' as_of/at (`revision` set, `latest` when neither was given).
struct SnapshotRead {
  const snapshot::Reader* reader = nullptr;
  std::optional<uint64_t> revision;
  bool latest = false;
};
// Runs `ask` on that snapshot and then checks its ContentStatus (a text that did
// not decode reads as "": an error, never an answer). A damaged cache of the live
// view, found opening it or by `ask`, is discarded (DiscardBadLiveCache) and `ask`
// run once more on a view compiled again, unless it set *wrote.
Status AskOnSnapshot(const ToolContext* ctx, std::string_view tool, const Json& args,
                     const std::function<Status(const SnapshotRead&, bool* wrote)>& ask);
// Attribution from run/task/scope/ts.
WriteOptions WriteOptionsFromArgs(const Json& args);

// A cursor pins the revision the first page was read at, so later pages are read
// as of the same state and nothing shifts between pages.
struct PageStart {
  uint64_t revision = 0;  // 0: read latest and pin it
  size_t offset = 0;      // the first item of the page
  size_t sub = 0;         // where in that item (an entity's observations) to resume
};
// Parses args.cursor (absent: {0, 0, 0}). InvalidArgument for a malformed cursor.
Result<PageStart> PageStartFromArgs(const Json& args);
// "r<revision>o<offset>", with "s<sub>" appended when sub is not 0.
std::string MakeCursor(uint64_t revision, size_t offset, size_t sub = 0);
// The cursor of an answer with several lists (a query's arrays, get_memory's out
// and in edges): "r<revision>o<n0>,<n1>,...", the revision read and, for each list
// in order, the items given so far.
std::string QueryCursor(uint64_t revision, const std::vector<size_t>& given);
// Parses QueryCursor's text. InvalidArgument for anything else.
Status ParseQueryCursor(std::string_view c, uint64_t* revision, std::vector<size_t>* given);
// The view to read a page at: the cursor's revision, else as_of/at.
Result<ReadView> PageViewFromArgs(const Json& args, const PageStart& start);

// Collects JSON items until `limit` items or until their ResultCost (both copies
// in the response, tools/mcp/tool.h) would pass `byte_budget`. A page is never
// empty while items remain and never over budget: a first item that alone exceeds
// the budget is cut to fit (ShrinkToFit: "truncated": true) and fills the list.
class BoundedList {
 public:
  BoundedList(size_t limit, size_t byte_budget) : limit_(limit), budget_(byte_budget) {}
  // False (and the item is not taken) when the list is full.
  bool Add(Json item);
  bool full() const { return full_; }
  size_t size() const { return items_.size(); }
  size_t bytes() const { return bytes_; }  // ResultCost of the items taken so far
  Json Take() { return std::move(items_); }

 private:
  size_t limit_, budget_, bytes_ = 0;
  bool full_ = false;
  Json items_ = Json::array();
};

// Parses a record's canonical meta/payload JSON text (an empty object if unparsable).
Json ParseJsonText(std::string_view text);

// ---- long texts in slices (get_memory content, recall values) ----
// Puts the slice text[offset, offset + max_bytes) into (*obj)[field], both ends
// moved back onto character boundaries, lowering max_bytes as far as needed for
// ResultCost(*obj) to stay within `budget`. When the slice is not the whole text,
// adds "truncated": true, "<field>_bytes" (the whole length), "<field>_offset" and,
// when more follows, "next_<field>_offset" (pass it back as the offset argument).
// InvalidArgument when offset is past the end of the text.
Status PutTextSlice(Json* obj, const std::string& field, std::string_view text, size_t offset,
                    size_t max_bytes, size_t budget);

// "a, b, c" for at most `max_names` names (each cut to a short preview), then
// " and N more": names in a message stay short however many there are.
std::string JoinNames(const std::vector<std::string>& names, size_t max_names = 20);

// ---- optimistic read-modify-write (WriteOptions::expected_revision) ----
inline constexpr int kMaxWriteAttempts = 32;

// The turn of one read-modify-write among the amem processes on a store: an
// exclusive flock() of `<store dir>/mcp-write.lock`, held while it reads and writes.
// Correctness never depends on it (expected_revision does that); it keeps writers
// that read, then write, from aborting each other over and over: without turns, a
// writer that waits for LMDB's write lock behind another one's commit always finds
// the store moved on, and two busy writers can starve one another. Every MCP write
// takes a turn (plain puts too: a put every few hundred microseconds would otherwise
// abort a slower read-modify-write every time); writers outside MCP (the CLI) still
// abort a turn now and then, and it retries. Turns nest within a thread. Without a
// writable store directory there are no turns.
inline constexpr std::string_view kWriteTurnFile = "mcp-write.lock";
class WriteTurn {
 public:
  explicit WriteTurn(const Store& store);
  ~WriteTurn();
  WriteTurn(const WriteTurn&) = delete;
  WriteTurn& operator=(const WriteTurn&) = delete;

 private:
  int fd_ = -1;
};

// In its WriteTurn, runs attempt(R) with R the store's latest revision. The
// attempt reads the store as of R only, stages its write from what it read, and
// applies it with WriteOptions::expected_revision = R. When that write is Aborted
// (another writer committed after R), the attempt runs again on the new state, up
// to kMaxWriteAttempts times in all. Returns the attempt's result; a non-OK status
// becomes a tool error naming `what`.
ToolResult RetryOnConflict(Store* store, std::string_view what,
                           const std::function<Result<ToolResult>(uint64_t revision)>& attempt);

}  // namespace amem::mcp

#endif  // AMEM_TOOLS_MCP_COMMON_H_
