// Shared vocabulary of the 16 queries (docs/QUERIES.md, shared rules): result rows, the
// node-argument resolver, direction/relation/type/run filters. Every query runs on
// an opened snapshot::Reader and never copies the graph; the views a Reader hands
// out stay valid while it lives, so rows built here own their strings.
#ifndef AMEM_QUERY_QUERY_H_
#define AMEM_QUERY_QUERY_H_

#include <bitset>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

#include "common/model.h"
#include "common/status.h"

namespace amem::snapshot {
class Reader;
}

namespace amem::query {

// Content previews are cut to this many bytes on a UTF-8 boundary (common/utf8.h).
inline constexpr size_t kPreviewBytes = 80;

// What every result row carries (docs/QUERIES.md): dense index, stable id, key, type and
// a one-line content preview.
struct NodeRow {
  uint32_t index = 0;
  uint64_t id = 0;
  std::string key;
  NodeType type = NodeType::kEntity;
  std::string preview;
};

// REQUIRES: index < reader.node_count().
NodeRow MakeNodeRow(const snapshot::Reader& reader, uint32_t index,
                    size_t preview_bytes = kPreviewBytes);

// A node argument: an exact key; else 16 hex digits (optionally "0x"-prefixed) naming
// a stable id; else a dense index written as decimal digits or "#N". A key wins over
// the other readings. NotFound names the argument when nothing matches;
// InvalidArgument for an empty argument.
Result<uint32_t> ResolveNode(const snapshot::Reader& reader, std::string_view arg);

// Which way edges are followed: kOut src -> dst, kIn dst -> src, kBoth either.
enum class Direction : uint8_t { kOut, kIn, kBoth };
// "out", "in" or "both"; InvalidArgument naming the text otherwise.
Result<Direction> ParseDirection(std::string_view text);
const char* DirectionName(Direction d);

// A set of relation ids; default-constructed it admits every relation.
class RelationFilter {
 public:
  RelationFilter() = default;
  bool all() const { return all_; }
  bool Matches(RelationId rel) const { return all_ || bits_.test(rel); }
  void Add(RelationId rel) {
    all_ = false;
    bits_.set(rel);
  }

 private:
  bool all_ = true;
  std::bitset<kMaxRelationId + 1> bits_;
};

// Parses relation names (built-in or the snapshot's custom ones) or decimal ids;
// each element may itself be comma-separated ("caused_by,supports"). Empty: all.
// An unknown relation is InvalidArgument naming it.
Result<RelationFilter> ParseRelations(const snapshot::Reader& reader,
                                      const std::vector<std::string>& names);

// A set of node types; default-constructed it admits every type.
class TypeFilter {
 public:
  TypeFilter() = default;
  bool all() const { return mask_ == 0; }
  bool Matches(NodeType t) const {
    return mask_ == 0 || (mask_ >> static_cast<unsigned>(t)) & 1u;
  }
  void Add(NodeType t) { mask_ |= 1u << static_cast<unsigned>(t); }

 private:
  uint32_t mask_ = 0;
};

// Type names as in common/model.h, comma-separated elements allowed. Empty: all.
// An unknown type is InvalidArgument naming it.
Result<TypeFilter> ParseTypes(const std::vector<std::string>& names);

// Runs (sessions) by name -> the snapshot's session numbers, sorted. A run the
// snapshot does not know matches nothing (it is not an error: a filter on a run
// that wrote nothing is simply empty). Empty input: all runs.
class RunFilter {
 public:
  RunFilter() = default;
  bool all() const { return all_; }
  bool Matches(uint32_t session) const;
  void Add(uint32_t session);  // keeps sessions_ sorted and unique
  void MatchNothing() { all_ = false; }

 private:
  bool all_ = true;
  std::vector<uint32_t> sessions_;
};
RunFilter ParseRuns(const snapshot::Reader& reader, const std::vector<std::string>& runs);

// Splits "a,b,,c" and flattens: {"a", "b", "c"}.
std::vector<std::string> SplitList(const std::vector<std::string>& items);

}  // namespace amem::query

#endif  // AMEM_QUERY_QUERY_H_
