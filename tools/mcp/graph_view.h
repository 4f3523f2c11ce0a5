// The compatibility graph (tools/mcp/compat.h) read from a snapshot::Reader
// instead of the store: read_graph and search_nodes answer from the live view
// (snapshot/live.h), base + delta, so a call after a write costs O(changes).
//
// Per base snapshot, a BaseGraph, made in O(1), reads its entities and relations
// from the file by position, one page at a time; it holds in memory only what
// the file has no block for, made once on first use: the relations' order (an
// edge and a relation type, 8 bytes per relation), and, for a base without the
// entity search block (docs/FORMAT.md §8.23), its live entity nodes by name and
// the lowered search text with its gram lists. A base with the block is searched
// from the file. A GraphView of a base + delta view
// holds only what the delta touched: the entities whose entity or observation
// nodes changed (read again from the view) and the relation groups of the sources
// whose out-edges changed. A view that is a stack of deltas (snapshot/live.h's
// LiveCache) holds one such overlay per level, each against the level below,
// and a level's overlay is kept while the level is. Everything a GraphView
// answers equals what ReadKnowledgeGraph (the store path) gives at the same revision.
//
// Lifetimes: the entities and relations a GraphView lists live as long as it does.
// Thread safety: a GraphView's const methods may be called concurrently.
#ifndef AMEM_TOOLS_MCP_GRAPH_VIEW_H_
#define AMEM_TOOLS_MCP_GRAPH_VIEW_H_

#include <array>
#include <atomic>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "common/model.h"
#include "common/status.h"
#include "snapshot/entity_search.h"
#include "snapshot/live.h"
#include "snapshot/reader.h"
#include "store/store.h"
#include "tools/mcp/compat.h"

namespace amem::mcp {

// ---- the mapping, shared by the store path and the snapshot path ----
// (snapshot/entity_search.h: which keys are entities and observations, an
// entity's type, the case rule; the writer's entity search block follows them.)
using snapshot::AsciiLower;
using snapshot::EntityNameOf;
using snapshot::EntityTypeFrom;
using snapshot::ObservationEntityOf;
// An observation's place among its entity's: meta's "seq" (0 when missing).
int64_t ObservationSeq(std::string_view meta);
// The relation types an edge between two entities stands for.
std::vector<std::string> RelationTypesFrom(std::string_view payload, std::string_view rel_name);

struct ObservationSlot {
  int64_t seq;
  std::string key;
  std::string text;
  bool operator<(const ObservationSlot& o) const;
};
// Appends the texts of `slots` to e->observations in (seq, key) order.
void SortObservations(std::vector<ObservationSlot>* slots, Entity* e);

// Entities, then relations, to page through (GraphPage reads entity_count(),
// entity(i), has_relation(k) and relation(k)). The pointers point into a
// GraphView, a KnowledgeGraph or owned_relations, which must outlive the listing.
struct GraphListing {
  std::vector<const Entity*> entities;
  std::vector<const Relation*> relations;
  std::vector<Relation> owned_relations;
  std::deque<Entity> owned_entities;  // read for this listing (not the base graph's)

  size_t entity_count() const { return entities.size(); }
  const Entity& entity(size_t i) const { return *entities[i]; }
  bool has_relation(size_t k) const { return k < relations.size(); }
  const Relation& relation(size_t k) const { return *relations[k]; }
};
GraphListing ListingOf(const KnowledgeGraph& g);

struct BaseGraph;  // tools/mcp/graph_view.cc

// A base's sorted list (its entities by name, its relations by (from, rel, to))
// with some of its items left out and others put in, read by position without
// being copied: O(log changes) per item, and a base item is read from the file.
template <typename T>
class SplicedList {
 public:
  // Where the last run ends (its start + length): it is the rest of the base's
  // list, however long that turns out to be.
  static constexpr size_t kToEnd = SIZE_MAX;
  struct Run {
    size_t start;      // merged position of the run's first item
    bool inserted;     // items of `inserted` (else of the base's list)
    size_t first, length;
  };
  SplicedList() = default;
  SplicedList(const BaseGraph* base, const std::vector<T>* inserted, std::vector<Run> runs)
      : base_(base), inserted_(inserted), runs_(std::move(runs)) {}
  // Whether there is an item i (the base's list read up to it).
  bool has(size_t i) const;
  // REQUIRES: has(i). A base item the file holds damaged reads as an empty
  // one, and the damage is in the base reader's ReadStatus().
  T operator[](size_t i) const;
  // How many items there are (entities: the base's count is known).
  size_t size() const
    requires std::is_same_v<T, Entity>;

 private:
  const Run& RunOf(size_t i) const;  // the run holding position i
  const BaseGraph* base_ = nullptr;
  const std::vector<T>* inserted_ = nullptr;
  std::vector<Run> runs_;  // the last one open to the end (kToEnd)
};

// read_graph's listing of a GraphView.
struct GraphSplice {
  SplicedList<Entity> entities;
  SplicedList<Relation> relations;

  size_t entity_count() const { return entities.size(); }
  Entity entity(size_t i) const { return entities[i]; }
  bool has_relation(size_t k) const { return relations.has(k); }
  Relation relation(size_t k) const { return relations[k]; }
};

// A reader's relation id -> the store's id of that relation (the order edges are
// listed in; a snapshot numbers custom relations by name instead).
using RelationOrder = std::array<uint16_t, 256>;

// The store's id of each of a reader's relation ids (the order it lists edges in).
RelationOrder StoreRelationOrder(const snapshot::Reader& r, const Store& store);

// open_nodes' read of one entity from a view, as the store path (ReadEntity) gives
// it: the entity with its observations, and the relations touching it in the
// store's edge order (in-edges, then out-edges, each by (relation id, other end's
// id)). NotFound when there is no such entity. O(degree log degree).
Result<Entity> EntityFromView(const snapshot::Reader& r, const RelationOrder& rel_order,
                              const std::string& name, std::vector<Relation>* relations);

class GraphView {
 public:
  struct Overlay;  // what a delta changed (tools/mcp/graph_view.cc)
  ~GraphView();
  // The whole graph (read_graph): entities by name, relations by (from, rel,
  // to). The base's lists with the overlay spliced in, O(changes log n) on the
  // first call; reading an item is O(log changes) plus its read from the file.
  const GraphSplice& All() const;
  // search_nodes: the first `max` entities, by name, whose name, type or one
  // observation contains `query` after ASCII lowering, or has every word of
  // `query` as a word (common/tokenizer.h: `write batch` finds `WriteBatch`); a
  // match never spans two fields. The base's candidates hold every trigram of
  // the query (of each word), or its own list for 1 or 2 bytes (the file's
  // block, else the lists built in memory), and are checked in name order until
  // `max` match, the gram lists narrowing them as the checks add up; a query
  // holding a NUL checks every field. So a page costs O(postings decoded +
  // candidates checked), not O(matches). A candidate of the file's block is
  // read from the file; damage read is in the reader's ReadStatus(), which the
  // caller checks. No relations: see AddRelationsTouching.
  GraphListing Search(std::string_view query, size_t max = SIZE_MAX) const;
  // Lists the relations touching hits->entities, each once, in the full listing's
  // order (what search_nodes lists after the entities). O(hits' degrees).
  void AddRelationsTouching(GraphListing* hits) const;

 private:
  friend class GraphViewCache;
  GraphView() = default;

  std::shared_ptr<const snapshot::Reader> reader_;
  std::shared_ptr<const BaseGraph> base_;
  RelationOrder rel_order_{};  // of reader_
  // One per level of a layered view, bottom up (snapshot/live.h's stack); none
  // when the view is the base.
  std::vector<std::shared_ptr<const Overlay>> overlays_;
  mutable std::shared_ptr<const Overlay> combined_;  // of overlays_, for All()
  mutable std::once_flag all_once_;
  mutable GraphSplice all_;
};
// search_nodes reads every term of a base to rule out a query's substring
// candidates only when there are at least this many (default 10,000); tests set
// it to 0 to take that path over small stores.
void SetTermScanCandidatesForTesting(uint32_t n);

// What amem mcp keeps between calls: the BaseGraph of the last base read (one:
// reading a revision older than the live base, from its own file, builds that
// file's graph in its place) and the last view. What a base's graph holds in
// memory is built once, by the first call that needs it or ahead of it by
// Prepare (the background merge's thread, amem mcp's start). The relations'
// order is scanned as far as a call needs, and Prepare scans the rest a chunk
// at a time; a search of a file without the entity search block waits for its
// lists while they are being built (a file with the block needs none).
// Thread safety: every method may be called concurrently.
class GraphViewCache {
 public:
  // The graph of `reader`, `store`'s state at `revision` (a plain snapshot, or a
  // layered view whose base's BaseGraph is reused).
  Result<std::shared_ptr<const GraphView>> Get(std::shared_ptr<const snapshot::Reader> reader,
                                               uint64_t revision, const Store& store);
  // Makes the BaseGraph of `base` (a snapshot file of `store` at `revision`)
  // unless it is made, and builds what it holds in memory (the entities' order
  // and search lists when the file has no entity search block, the odd labels
  // search_nodes checks alone, the relations' order), for a graph a Get made too:
  // the next Get of a view over that file takes it. The graph Get keeps answers
  // meanwhile, so two graphs are held while this runs. Once `stop` is set it
  // stops at its next step (what it did not build, a call builds or goes
  // without).
  void Prepare(std::shared_ptr<const snapshot::Reader> base, uint64_t revision,
               const Store& store, const std::atomic<bool>* stop = nullptr);
  // Builds the overlay of `level`, a level 0 (a base + delta view) compiled off
  // the calls' path (LiveOptions::prepare_level), when its base's graph is made:
  // the first Get of a view over that level takes it instead of reading the
  // delta again. One is kept, until a Get takes it or the base changes.
  void PrepareLevel(std::shared_ptr<const snapshot::Reader> level, const Store& store);
  // Lets every graph go (a damaged cache file was discarded); a Prepare running
  // finishes for nobody.
  void Clear();
  // BaseGraphs built so far by Get (in a tool call's foreground) and by Prepare.
  uint64_t built_by_get() const { return built_by_get_.load(); }
  uint64_t built_by_prepare() const { return built_by_prepare_.load(); }
  // Overlays PrepareLevel built that a Get took.
  uint64_t levels_prepared() const { return levels_prepared_.load(); }

 private:
  // The graph of base file `file`: the one made before, else made here (O(1));
  // with `prepare`, what it holds in memory is built too, a graph made before
  // included.
  std::shared_ptr<const BaseGraph> GraphOf(const std::shared_ptr<const snapshot::Reader>& file,
                                           uint64_t revision, const Store& store, bool prepare,
                                           const std::atomic<bool>* stop = nullptr);

  // A base file's graph (which holds the file's reader, so `file` stays unique).
  struct Slot {
    const snapshot::Reader* file = nullptr;
    std::shared_ptr<const BaseGraph> graph;
  };
  // The graph Get reads (`current_`) and the one Prepare made for the next base
  // (`next_`), which the first Get over that base moves into `current_`.
  std::mutex slot_mu_;
  Slot current_, next_;
  std::atomic<uint64_t> built_by_get_{0}, built_by_prepare_{0}, levels_prepared_{0};

  std::mutex mu_;
  snapshot::Retirer retirer_;  // the last graph's, when the base changes
  std::shared_ptr<const BaseGraph> base_;
  std::shared_ptr<const GraphView> last_;
  uint64_t last_revision_ = 0;
  // The levels of the last layered view with their overlays, bottom up: a level
  // still under the next view is not read again.
  std::vector<std::pair<std::shared_ptr<const snapshot::Reader>,
                        std::shared_ptr<const GraphView::Overlay>>> levels_;
  // The level 0 PrepareLevel read, for the next Get over it.
  std::pair<std::shared_ptr<const snapshot::Reader>, std::shared_ptr<const GraphView::Overlay>>
      prepared_;
};

}  // namespace amem::mcp

#endif  // AMEM_TOOLS_MCP_GRAPH_VIEW_H_
