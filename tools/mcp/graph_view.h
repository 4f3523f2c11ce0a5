// The compatibility graph (tools/mcp/compat.h) read from a snapshot::Reader
// instead of the store: read_graph and search_nodes answer from the live view
// (snapshot/live.h), base + delta, so a call after a write costs O(changes).
//
// Per base snapshot, a BaseGraph, made in O(1), holds what is made once on first
// use: every entity with its observations and the relations grouped by source
// (read_graph), and, for a base without the entity search block (docs/FORMAT.md
// §8.23), the lowered search text with its gram lists. A base with the block is
// searched from the file: nothing is built for search_nodes. A GraphView of a base + delta view
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
// entity(i), relation_count() and relation(k)). The pointers point into a
// GraphView, a KnowledgeGraph or owned_relations, which must outlive the listing.
struct GraphListing {
  std::vector<const Entity*> entities;
  std::vector<const Relation*> relations;
  std::vector<Relation> owned_relations;
  std::deque<Entity> owned_entities;  // read for this listing (not the base graph's)

  size_t entity_count() const { return entities.size(); }
  const Entity& entity(size_t i) const { return *entities[i]; }
  size_t relation_count() const { return relations.size(); }
  const Relation& relation(size_t k) const { return *relations[k]; }
};
GraphListing ListingOf(const KnowledgeGraph& g);

// A sorted base list with some of its items left out and others put in, read by
// position without being copied: O(log changes) per item.
template <typename T>
class SplicedList {
 public:
  struct Run {
    size_t start;      // merged position of the run's first item
    bool inserted;     // items of `inserted` (else of `base`)
    size_t first, length;
  };
  SplicedList() = default;
  SplicedList(const std::vector<T>* base, const std::vector<T>* inserted, std::vector<Run> runs,
              size_t size)
      : base_(base), inserted_(inserted), runs_(std::move(runs)), size_(size) {}
  size_t size() const { return size_; }
  // REQUIRES: i < size().
  const T& operator[](size_t i) const;

 private:
  const std::vector<T>* base_ = nullptr;
  const std::vector<T>* inserted_ = nullptr;
  std::vector<Run> runs_;
  size_t size_ = 0;
};

// read_graph's listing of a GraphView.
struct GraphSplice {
  SplicedList<Entity> entities;
  SplicedList<Relation> relations;

  size_t entity_count() const { return entities.size(); }
  const Entity& entity(size_t i) const { return entities[i]; }
  size_t relation_count() const { return relations.size(); }
  const Relation& relation(size_t k) const { return relations[k]; }
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

struct BaseGraph;  // tools/mcp/graph_view.cc

class GraphView {
 public:
  struct Overlay;  // what a delta changed (tools/mcp/graph_view.cc)
  ~GraphView();
  // The whole graph (read_graph): entities by name, relations by (from, rel,
  // to). The base's lists with the overlay spliced in, O(changes) on the first
  // call; reading an item is O(log changes).
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

// What amem mcp keeps between calls: the BaseGraph of the last base read (one:
// reading a revision older than the live base, from its own file, builds that
// file's graph in its place) and the last view. What a base's graph holds in
// memory is built once, by the first call that needs it or ahead of it by
// Prepare (the background merge's thread, amem mcp's start); a call that needs
// it while it is being built waits for it (a search of a file with the entity
// search block needs none of it).
// Thread safety: every method may be called concurrently.
class GraphViewCache {
 public:
  // The graph of `reader`, `store`'s state at `revision` (a plain snapshot, or a
  // layered view whose base's BaseGraph is reused).
  Result<std::shared_ptr<const GraphView>> Get(std::shared_ptr<const snapshot::Reader> reader,
                                               uint64_t revision, const Store& store);
  // Makes the BaseGraph of `base` (a snapshot file of `store` at `revision`)
  // unless it is made or being made, and builds what it holds in memory (the
  // whole graph, and the search lists when the file has no entity search
  // block): the next Get of a view over that file takes it. The graph Get keeps
  // answers meanwhile, so two graphs are held while this runs.
  void Prepare(std::shared_ptr<const snapshot::Reader> base, uint64_t revision,
               const Store& store);
  // Lets every graph go (a damaged cache file was discarded); a Prepare running
  // finishes for nobody.
  void Clear();
  // BaseGraphs built so far by Get (in a tool call's foreground) and by Prepare.
  uint64_t built_by_get() const { return built_by_get_.load(); }
  uint64_t built_by_prepare() const { return built_by_prepare_.load(); }

 private:
  // The graph of base file `file`: the one made before, else made here (O(1));
  // Prepare also builds what it holds in memory. Prepare returns null.
  std::shared_ptr<const BaseGraph> GraphOf(const std::shared_ptr<const snapshot::Reader>& file,
                                           uint64_t revision, const Store& store, bool prepare);

  // A base file's graph (which holds the file's reader, so `file` stays unique).
  struct Slot {
    const snapshot::Reader* file = nullptr;
    std::shared_ptr<const BaseGraph> graph;
  };
  // The graph Get reads (`current_`) and the one Prepare made for the next base
  // (`next_`), which the first Get over that base moves into `current_`.
  std::mutex slot_mu_;
  Slot current_, next_;
  std::atomic<uint64_t> built_by_get_{0}, built_by_prepare_{0};

  std::mutex mu_;
  snapshot::Retirer retirer_;  // the last graph's, when the base changes
  std::shared_ptr<const BaseGraph> base_;
  std::shared_ptr<const GraphView> last_;
  uint64_t last_revision_ = 0;
  // The levels of the last layered view with their overlays, bottom up: a level
  // still under the next view is not read again.
  std::vector<std::pair<std::shared_ptr<const snapshot::Reader>,
                        std::shared_ptr<const GraphView::Overlay>>> levels_;
};

}  // namespace amem::mcp

#endif  // AMEM_TOOLS_MCP_GRAPH_VIEW_H_
