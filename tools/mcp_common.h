// What the store-backed MCP tools share: the store handle, read views from `as_of` /
// `at`, write attribution from `run` / `task` / `scope` / `ts`, schema fragments,
// and bounded lists with a cursor (docs/MCP.md "Bounded output").
#ifndef AMEM_TOOLS_MCP_COMMON_H_
#define AMEM_TOOLS_MCP_COMMON_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "store/store.h"
#include "tools/mcp_tool.h"

namespace amem::mcp {

struct ToolContext {
  Store* store = nullptr;  // opened once per process; every call reads afresh
};

// ---- schema fragments (JSON Schema "properties" objects) ----
// as_of (revision) and at (Unix seconds): where a read looks.
Json AsOfProperties();
// run, task, scope, ts: attribution of a write.
Json WriteProperties();
// limit (default `default_limit`, at most `max_limit`) and cursor.
Json PageProperties(int default_limit, int max_limit);
// {"type":"object","properties":props,"required":required,"additionalProperties":false}
Json ObjectSchema(Json properties, std::vector<std::string> required = {});
// {"type":"array","items":items,"description":description}
Json ArrayOf(Json items, std::string_view description);
// Merges the members of `b` into `a` and returns it.
Json Merge(Json a, const Json& b);

// The view named by as_of/at (Latest when neither). InvalidArgument if both.
Result<ReadView> ViewFromArgs(const Json& args);
// Attribution from run/task/scope/ts.
WriteOptions WriteOptionsFromArgs(const Json& args);

// A cursor pins the revision the first page was read at, so later pages are read
// as of the same state and nothing shifts between pages.
struct PageStart {
  uint64_t revision = 0;  // 0: read latest and pin it
  size_t offset = 0;
};
// Parses args.cursor (absent: {0, 0}). InvalidArgument for a malformed cursor.
Result<PageStart> PageStartFromArgs(const Json& args);
std::string MakeCursor(uint64_t revision, size_t offset);
// The view to read a page at: the cursor's revision, else as_of/at.
Result<ReadView> PageViewFromArgs(const Json& args, const PageStart& start);

// Collects JSON items until `limit` items or `byte_budget` bytes of their JSON; at
// least one item is always taken so a page is never empty while items remain.
class BoundedList {
 public:
  BoundedList(size_t limit, size_t byte_budget) : limit_(limit), budget_(byte_budget) {}
  // False (and the item is not taken) when the list is full.
  bool Add(Json item);
  bool full() const { return full_; }
  size_t size() const { return items_.size(); }
  Json Take() { return std::move(items_); }

 private:
  size_t limit_, budget_, bytes_ = 0;
  bool full_ = false;
  Json items_ = Json::array();
};

// Parses a record's canonical meta/payload JSON text (an empty object if unparsable).
Json ParseJsonText(std::string_view text);

}  // namespace amem::mcp

#endif  // AMEM_TOOLS_MCP_COMMON_H_
