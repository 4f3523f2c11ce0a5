// The memory server's entities in a snapshot (docs/MCP.md, "The graph"), and the
// index its search_nodes reads: which keys are entities and observations, an
// entity's type, the byte grams of its lowered fields, and the block that lists
// the entities holding each gram (EntitySearch, docs/FORMAT.md §8.23). The writer
// builds that block from these rules, and the memory server (tools/mcp/graph_view.h)
// builds the same lists in memory for a file written without it: one rule, two
// places it is stored.
#ifndef AMEM_SNAPSHOT_ENTITY_SEARCH_H_
#define AMEM_SNAPSHOT_ENTITY_SEARCH_H_

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "common/model.h"

namespace amem::snapshot {

inline constexpr std::string_view kEntityKeyPrefix = "entity:";
inline constexpr std::string_view kObservationKeyPrefix = "obs:";

// NAME of a key `entity:NAME`; false for any other key.
bool EntityNameOf(std::string_view key, std::string_view* name);
// E of a key `obs:E#<16 hex>`; false for any other key.
bool ObservationEntityOf(std::string_view key, std::string_view* entity);
// "obs:NAME#": every observation key of entity NAME starts with it (keys of an
// entity whose name extends NAME with "#..." do too: ObservationEntityOf tells).
std::string ObservationKeyPrefix(std::string_view name);
// An entity's type: meta's entityType, else kind, else the node type's name.
std::string EntityTypeFrom(std::string_view meta, NodeType type);
// EntityTypeFrom, remembered per distinct meta and node type: a million
// entities have a few distinct metas, each parsed once. The metas are views,
// which must outlive the cache.
class EntityTypeCache {
 public:
  const std::string& Of(std::string_view meta, NodeType type) {
    auto& types = by_node_type_[static_cast<size_t>(type) % by_node_type_.size()];
    auto [it, fresh] = types.try_emplace(meta);
    if (fresh) it->second = EntityTypeFrom(meta, type);
    return it->second;
  }

 private:
  std::array<std::unordered_map<std::string_view, std::string>, kNodeTypeCount> by_node_type_;
};

// Whether an entity's name and type are words of its node's own texts, which a
// file's term index holds: its node's content is its name, and its type is empty
// or stands in its meta as a JSON string, as it is (no escape: its words are
// tokenized there as in the type alone). The entities that fail it, the "odd
// labels", are block 0x08's (docs/FORMAT.md §8.24): when no text of a file holds
// a query, search_nodes checks only those (tools/mcp/graph_view.h).
bool LabelsInTexts(std::string_view name, std::string_view content, std::string_view meta,
                   std::string_view type);
// ASCII letters lowered, every other byte as it is (search_nodes' case rule).
std::string AsciiLower(std::string_view s);
// The same, appended to *out (a buffer reused over many fields).
void AppendAsciiLower(std::string_view s, std::string* out);

// ---- grams ----
// A gram is one, two or three bytes of one lowered field, its length in the top
// byte: 1 << 24 | b, 2 << 24 | b0 << 8 | b1, 3 << 24 | b0 << 16 | b1 << 8 | b2.
// An entity holds a gram when one of its fields (name, type, observations) holds
// its bytes: so an entity whose field contains a query holds every trigram of the
// query (or the query itself, when it has one or two bytes).
uint32_t GramOf(std::string_view bytes);  // REQUIRES: 1 to 3 bytes
// The grams a query (lowered, not empty, no NUL) needs: its trigrams, or itself.
std::vector<uint32_t> QueryGrams(std::string_view lowered);
// Calls f(gram) for each gram of `field` (lowered), repeats included.
template <typename F>
void ForEachGram(std::string_view field, F&& f) {
  const auto* p = reinterpret_cast<const uint8_t*>(field.data());
  const size_t n = field.size();
  for (size_t i = 0; i < n; ++i) {
    f(uint32_t{1} << 24 | p[i]);
    if (i + 1 < n) f(uint32_t{2} << 24 | uint32_t{p[i]} << 8 | p[i + 1]);
    if (i + 2 < n) f(uint32_t{3} << 24 | uint32_t{p[i]} << 16 | uint32_t{p[i + 1]} << 8 | p[i + 2]);
  }
}

// An entity of the block: its node, and the position in key order of the first
// key not below "obs:NAME#" (its observations' keys, if any, start there).
struct SearchEntity {
  uint32_t node = 0;
  uint32_t observations = 0;
  bool operator==(const SearchEntity&) const = default;
};

// The entities holding one gram: ascending entity numbers (their place among the
// entities by name), as varint gaps (the first number as it is).
struct GramList {
  std::string_view bytes;
  uint32_t count = 0;
};
// The numbers of `list`, ascending; false when the bytes are not exactly `count`
// strictly ascending numbers below `limit`.
bool DecodeGramList(const GramList& list, uint32_t limit, std::vector<uint32_t>* out);

// Gram -> the entities holding it, built entity by entity in ascending order.
// Grams of one and two bytes index a table directly; trigrams go through open
// addressing over a power-of-two table: the distinct trigrams of text number in
// the tens of thousands, so the table stays in cache while every byte of the
// text is indexed (a node-based map made it several times slower).
class GramIndex {
 public:
  GramIndex();
  // Adds every gram of `field` (lowered) to entity k's lists; k is never below an
  // entity added before.
  void AddField(uint32_t k, std::string_view field);
  // count 0 when no entity holds the gram.
  GramList Find(uint32_t gram) const;
  // The grams held, ascending (what the block lists).
  std::vector<uint32_t> SortedGrams() const;
  uint64_t posting_bytes() const { return posting_bytes_; }

 private:
  struct List {
    std::string bytes;
    uint32_t count = 0, last = 0;
  };
  static constexpr size_t kShortGrams = 256 + 65536;  // byte b: b; pair ab: 256 + ab
  static constexpr uint32_t kEmpty = 0xFFFFFFFFu;     // no trigram: they fit in 26 bits
  static size_t ShortSlot(uint32_t g) { return (g >> 24) == 1 ? (g & 0xFF) : 256 + (g & 0xFFFF); }
  size_t Slot(uint32_t g) const { return (g * 0x9E3779B1u) >> shift_ & mask_; }
  const List* Lookup(uint32_t g) const;
  List& Get(uint32_t g);
  void Add(List* list, uint32_t k);
  void Grow();

  std::vector<List> short_;
  std::vector<uint32_t> keys_, index_;
  std::vector<List> lists_;
  size_t mask_ = 0;
  int shift_ = 0;
  uint64_t posting_bytes_ = 0;
};

}  // namespace amem::snapshot

#endif  // AMEM_SNAPSHOT_ENTITY_SEARCH_H_
