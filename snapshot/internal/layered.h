// Internal to snapshot/: the state behind a base + delta Reader (Reader::
// OpenLayered, docs/FORMAT.md §11.5). reader.cc routes each accessor of a layered
// Reader here. Opening is O(changes): nodes, edges and in-list positions are
// numbered through MergedSequences (O(log changes) per lookup). A bulk query's edge
// accesses past point_limit build flat tables (node maps, edge records, out/in
// offsets, in-lists) once, and the Reader's hot pointers then point at them, so its
// inline accessors run as on a file; the time index is built on its first use.
//
// Numbering: merged node i is a base dense number b or kDeltaNode | d (delta node
// d); merged edge j a base edge number or kDeltaNode | x (the x-th edge of the
// delta's out-lists). Both equal a full export's at H.
#ifndef AMEM_SNAPSHOT_INTERNAL_LAYERED_H_
#define AMEM_SNAPSHOT_INTERNAL_LAYERED_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "snapshot/delta.h"
#include "snapshot/merged_sequence.h"
#include "snapshot/reader.h"

namespace amem::snapshot {

// Set while a layered view reads its base for its own answer (and while the live
// view compiles a delta against a level of its stack, snapshot/live.cc): the
// base, when it is a layered view itself, counts no point use for it. Only the
// view a query asks builds flat tables: a level under the top would count the
// accesses of every view stacked on it over its life, and build its tables
// (O(n + m)) for no query that needs them.
struct NestedRead {
  static inline thread_local int depth = 0;
  NestedRead() { ++depth; }
  ~NestedRead() { --depth; }
  NestedRead(const NestedRead&) = delete;
  NestedRead& operator=(const NestedRead&) = delete;
};

struct Reader::Layer {
  std::shared_ptr<const Reader> base;
  std::shared_ptr<const Delta> delta;

  // Node numbering, O(log changes) per lookup without any O(n) table.
  MergedSequence nodes;  // NodeSequence: a slot replaced in place counts as removed
  std::vector<std::pair<uint32_t, uint32_t>> replaced;  // (base slot, delta node), by slot
  // Sessions at H: the base's less the delta's removed ones, its new runs at
  // their gaps (Delta::removed_sessions, new_run_gaps); nothing of size `sessions`.
  MergedSequence session_seq;
  std::vector<uint32_t> delta_session;  // the delta file's session -> merged

  // Edges without any O(m) table: the merged edge numbering (the base's, less the
  // out-ranges the delta replaces, plus its out-lists), the same for in-list
  // positions, the merged node of each delta list, and the base edges the delta
  // copies unchanged, as (base edge, delta edge) by base edge.
  MergedSequence edge_seq, in_seq;
  std::vector<uint32_t> out_src, in_tgt;
  std::vector<std::pair<uint32_t, uint32_t>> copied;
  uint64_t point_limit = 0;  // edge accesses answered this way before BuildOut/BuildIn

  // The first inconsistency an accessor met, sticky: the two files do not fit,
  // which Open could not see without a walk of the base. The accessor returns a
  // number in range instead (0: node or edge 0), and Reader::ContentStatus() reports
  // this Corruption, so the caller drops the answer (the live view's callers then
  // discard the cache and compile it again).
  void Fail(Status s) const;
  Status Failure() const;
  mutable std::mutex failure_mu;
  mutable Status failure;
  mutable std::atomic<bool> failed{false};
  mutable std::atomic<uint64_t> point_uses{0};
  bool NotePointUse() const {
    return point_uses.fetch_add(1, std::memory_order_relaxed) >= point_limit;
  }
  Edge PointEdge(uint32_t j) const;
  uint32_t PointList(ListPart part, uint32_t x) const;
  uint32_t ListBound(ListPart part, uint32_t x) const;  // PointList's begin or end, unchecked
  uint32_t EdgeOfBase(uint32_t e) const;  // merged edge of base edge e; kNoNode if gone

  // Bulk tables, built by a bulk query's edge accesses (BuildOut, BuildIn): flat node maps and
  // the edge, offset and in-list tables the Reader's hot pointers then point at.
  std::atomic<const uint32_t*> flat_ref{nullptr};
  std::vector<uint32_t> node_ref;        // merged node -> base b | kDeltaNode | d
  std::vector<uint32_t> base_to_merged;  // base b -> merged (a slot replaced in place:
                                         // its delta node); kNoNode when removed
  std::vector<uint32_t> delta_to_merged;
  std::vector<uint32_t> edge_ref;  // merged edge -> base e | kDeltaNode | x
  std::vector<uint32_t> base_edge_to_merged, delta_edge_to_merged;  // until BuildIn
  std::string edges, out_off, in_off, in_list;
  std::string time;  // built on the first time-index access (BuildTime)
  std::mutex build_mu;

  MergedSequence kv;

  // Terms: base ids first, then the delta's terms the base lacks.
  uint32_t base_terms = 0;
  std::vector<uint32_t> new_terms;      // merged id - base_terms -> delta term id
  std::vector<uint32_t> delta_term_id;  // delta term id -> merged id
  struct MergedPostings {
    std::string bytes;  // kPostingLength each, sorted by (field, node)
    uint32_t content = 0;
  };
  mutable std::mutex postings_mu;
  mutable std::unordered_map<uint32_t, std::unique_ptr<MergedPostings>> postings_cache;

  const Reader& dn() const { return delta->nodes(); }
  // Merged node i as a reference: base b or kDeltaNode | d.
  uint32_t Ref(uint32_t i) const {
    if (const uint32_t* flat = flat_ref.load(std::memory_order_acquire)) return flat[i];
    MergedSequence::Item it = nodes.At(i);
    return it.delta ? (kDeltaNode | it.index) : it.index;
  }
  // The file and local number of merged node i.
  std::pair<const Reader*, uint32_t> Local(uint32_t i) const {
    const uint32_t ref = Ref(i);
    if (IsDeltaRef(ref)) return {&delta->nodes(), ref & ~kDeltaNode};
    return {base.get(), ref};
  }
  // True when base node b is at H in its own slot (not removed, not replaced).
  bool BaseKept(uint32_t b) const { return !nodes.IsRemoved(b); }
  // Merged number of base node b (a replaced slot: its delta node; kNoNode: removed).
  uint32_t OfBase(uint32_t b) const;
  uint32_t OfDelta(uint32_t d) const {
    if (flat_ref.load(std::memory_order_acquire) != nullptr) return delta_to_merged[d];
    return nodes.OfDelta(d);
  }
  // Merged number of a node reference of the delta (kNoNode when it names none).
  uint32_t MapRef(uint32_t ref) const {
    if (ref == kNoNode) return kNoNode;
    if (IsDeltaRef(ref)) {
      uint32_t d = ref & ~kDeltaNode;
      return d < delta->node_count() ? OfDelta(d) : kNoNode;
    }
    return ref < base->node_count() ? OfBase(ref) : kNoNode;
  }

  struct EdgeAttrs {
    std::string_view payload, run, task;
    int64_t created_ts = 0, updated_ts = 0;
  };
  EdgeAttrs Attrs(uint32_t j) const;

  // The renumbered list of term t, built from its cursors once per view and term
  // (Reader::postings: what a query that indexes into a list reads).
  const MergedPostings& Postings(uint32_t t) const;
  // The delta's term id of merged term t, if the delta has the term.
  std::optional<uint32_t> DeltaTerm(uint32_t t) const;
  // Term t's postings of `field` walked without a copy (PostingCursor): the
  // base's, through its own cursor when it is a view, merged with the delta's;
  // `sized`: with the list's length (Count), else size() is 0.
  PostingCursor Cursor(uint32_t t, Field field, bool sized) const;
  // The length of that list: the base's, less the base's postings of nodes removed
  // or replaced here (a seek per removed range), plus the delta's. O(changes here
  // x log postings) once per view, term and field, then kept.
  uint32_t Count(uint32_t t, Field field) const;
  mutable std::mutex counts_mu;
  mutable std::unordered_map<uint64_t, uint32_t> counts;  // 2 * term + field
  std::string_view Term(uint32_t t) const;
  std::optional<uint32_t> FindTerm(std::string_view t) const;
  std::vector<uint32_t> NodesOfType(uint8_t type) const;
  // Session s at H: its run, and its nodes' range, counted from the base's session
  // index and the delta's (merged order is (run, key)): O(log changes + log
  // sessions), never node by node. REQUIRES: s < the session count at H.
  std::string_view SessionRun(uint32_t s) const;
  SessionRange Session(uint32_t s) const;
  // The merged session of a file's session (kNoNode, and Fail, when it is gone).
  uint32_t MergedSession(const Reader* file, uint32_t s) const;
  KvEntry Kv(uint32_t k) const;
  std::optional<uint32_t> FindKv(std::string_view scope, std::string_view ns,
                                 std::string_view key) const;

  // O(changes + terms of the delta): numbering, sessions, terms, kv and
  // the Reader's header facts. The bulk tables wait for their first use.
  Status Build(Reader* r);
  // The flat node maps, edge records and out offsets; the in-lists (after the
  // former); the time index. Each runs once, under build_mu, when a Reader
  // accessor needs it (Reader::BuildLazy).
  Status BuildOut(Reader* r);
  Status BuildIn(Reader* r);
  Status BuildTime(Reader* r);
  // After a failed Build*: tables for `parts` (Reader::kLazy*) that keep every
  // accessor in range (no edges in any list, edges 0 -> 0, time order by node).
  void UseFallback(Reader* r, uint8_t parts);

 private:
  Status BuildNodes(Reader* r);
  Status BuildPoint(Reader* r);
  Status BuildTerms();
  // Merged nodes of the sessions before merged session s.
  uint32_t SessionBegin(uint32_t s) const;
  // The merged session of `run` (kNoNode if it is none at H).
  uint32_t FindMergedSession(std::string_view run) const;
};

}  // namespace amem::snapshot

#endif  // AMEM_SNAPSHOT_INTERNAL_LAYERED_H_
