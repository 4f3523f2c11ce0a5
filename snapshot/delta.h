// Delta segments (docs/FORMAT.md §11): what changed in the store between a base
// snapshot's revision B and a head revision H, compiled from the store's change log
// in O(changes), not O(store). A base file plus its delta describe the state at H:
// MergeState(base, delta) written by the snapshot writer gives exactly the bytes of
// a full export at H (the property the tests check).
//
// A delta never repeats the base: it names base nodes and edges by their dense
// numbers in the base file, and holds in full only what is new or different:
//   - the changed nodes (new, overwritten, or become/stopped being a stub) as an
//     embedded .amem snapshot of just those nodes (content, vectors, term index,
//     doc lengths, keys), in (run, key) order, each placed in the base's order: it
//     replaces base node `base_slot` in place, or goes before base node `gap`;
//   - the base nodes that are gone (deleted, or moved to another run);
//   - the whole out-list of every node whose out-edges changed, and the whole
//     in-list of every node whose in-edges changed, in a full export's order
//     (relation, then the other end's (run, key));
//   - the kv entries removed and inserted; the relation and run tables at H;
//     the totals of the state at H.
// The bytes depend only on (store state at B, store state at H, base file): the
// same pair always gives the same delta.
//
// Thread safety: a Delta is immutable after Open; all const methods may be called
// concurrently. Lifetimes: views point into memory the Delta owns.
#ifndef AMEM_SNAPSHOT_DELTA_H_
#define AMEM_SNAPSHOT_DELTA_H_

#include <cstdint>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/model.h"
#include "common/status.h"
#include "snapshot/merged_sequence.h"
#include "snapshot/reader.h"
#include "store/store.h"

namespace amem::snapshot {

inline constexpr char kDeltaMagic[4] = {'A', 'M', 'D', 'L'};
// Version 2: the node file and doc_length_change come from the code-aware tokenizer
// (kFormatVersion 2). Version 3: the header names the commits at both ends
// (Store::RevisionIdentity). Version 4: 0x09 holds the runs at H as an edit of
// the base's (removed sessions, new runs), not every run. Only this version is
// read; a live view compiles another.
inline constexpr uint16_t kDeltaVersion = 4;
inline constexpr size_t kDeltaHeaderLength = 64;

// A node named by a delta: a base dense number, or a delta node (kDeltaNode | d).
inline constexpr uint32_t kDeltaNode = 0x80000000u;
inline constexpr uint32_t kNoNode = 0xFFFFFFFFu;
inline bool IsDeltaRef(uint32_t ref) { return ref != kNoNode && (ref & kDeltaNode) != 0; }

// Block tags of a delta file (their own numbering; 0x1F is the checksum, as in .amem).
enum class DeltaTag : uint32_t {
  kInfo = 0x01,        // base identity, head revision, totals at H
  kNodes = 0x02,       // embedded .amem of the changed nodes
  kPlacement = 0x03,   // per delta node: base_slot, gap, flags
  kRemoved = 0x04,     // base dense numbers that are gone, ascending
  kOutLists = 0x05,    // sources, offsets, edges
  kInLists = 0x06,     // targets, offsets, edge references
  kKv = 0x07,          // removed base kv positions; inserted entries
  kRelations = 0x08,   // 256 names at H by merged id; base id -> merged id
  kRuns = 0x09,        // runs at H: removed base sessions; new runs and their gaps
  kStrings = 0x0A,     // the run/task/payload strings of delta edges
  kChecksum = 0x1F,
};

// Totals of the merged state at H (what a full export at H would say).
struct DeltaTotals {
  uint32_t node_count = 0, edge_count = 0, stub_count = 0, kv_count = 0, session_count = 0;
  int64_t newest_ts = 0;
  // Sum of content token counts at H minus the base's sum (BM25's average).
  int64_t doc_length_change = 0;
};

// One out-edge of a delta out-list.
struct DeltaEdge {
  uint32_t target = kNoNode;  // node reference
  RelationId rel = 0;         // merged relation id (numbering at H)
  float weight = 1.0f;
  int64_t created_ts = 0, updated_ts = 0;
  std::string_view run, task, payload;
  uint32_t base_edge = kNoNode;  // the unchanged base edge this copies, if any
};

// An in-list entry: a delta edge (kDeltaNode | e, e indexing all out-list edges in
// file order) or a base edge number.
struct DeltaKvEntry {
  std::string_view scope, ns, key, value, run, task;
  int64_t ts = 0;
  uint32_t gap = 0;  // inserted before base kv entry `gap`
};

struct DeltaSummary {
  uint32_t nodes = 0, removed_nodes = 0, out_lists = 0, in_lists = 0, edges = 0;
  uint64_t bytes = 0;
  // What compiling and opening the delta costs, in records (the live view's merge
  // bound, docs/STORE.md §10): the nodes it holds or removes, the base edges whose
  // out-ranges it drops (those of removed nodes and of rewritten out-lists), the
  // edges and in-list entries it holds, the kv entries it removes or inserts.
  uint64_t records = 0;
  // Set when the change log since the base alone named more than `max_records`
  // records (nodes, edges, kv entries, relations): nothing was compiled, *out is
  // unchanged, and `records` is that count.
  bool over_bound = false;
};

// Compiles the delta from `base` (a full snapshot of `store` at `base_revision`)
// to `head_revision` and appends its bytes to *out. InvalidArgument if
// head_revision < base_revision or the history since the base was compacted away
// (the caller then rebuilds the base); errors of the store otherwise. Stops after
// reading the change log when it names more than `max_records` records
// (DeltaSummary::over_bound): a caller that would merge such a delta pays no
// compile for it.
Result<DeltaSummary> CompileDelta(const Store& store, const Reader& base, uint64_t base_revision,
                                  uint64_t head_revision, std::string* out,
                                  uint64_t max_records = UINT64_MAX);

// CompileDelta that keeps what it read from the store between compiles against
// the same base: the next compile, at a later head, reads from the change log only
// the revisions since the last head and from the store only the nodes, edge lists
// and kv entries they touch. The bytes are CompileDelta's for the same
// (base, head). A compile at an earlier head, against another base, after the
// history changed (another commit at the kept head), or after an error or a stop
// at the bound starts over. Not thread-safe; `base` must outlive the kept state
// (Reset() drops it).
class DeltaCompiler {
 public:
  DeltaCompiler();
  ~DeltaCompiler();
  DeltaCompiler(const DeltaCompiler&) = delete;
  DeltaCompiler& operator=(const DeltaCompiler&) = delete;
  Result<DeltaSummary> Compile(const Store& store, const Reader& base, uint64_t base_revision,
                               uint64_t head_revision, std::string* out,
                               uint64_t max_records = UINT64_MAX);
  void Reset();
  struct State;  // what was read, as of the last head (snapshot/delta.cc)

 private:
  std::unique_ptr<State> state_;
};

class Delta {
 public:
  // Validates the container, every count and reference, and the embedded node
  // snapshot. Corruption ("delta <section>: <what>") if anything is off;
  // InvalidArgument if it was compiled against another base than `base`.
  static Result<std::unique_ptr<Delta>> Open(const std::string& path, const Reader& base);
  static Result<std::unique_ptr<Delta>> OpenBuffer(std::string_view data, const Reader& base);
  // The same, keeping `data` itself instead of a copy of it.
  static Result<std::unique_ptr<Delta>> OpenBuffer(std::string&& data, const Reader& base);
  ~Delta();
  Delta(const Delta&) = delete;
  Delta& operator=(const Delta&) = delete;

  uint64_t base_revision() const { return base_revision_; }
  uint64_t head_revision() const { return head_revision_; }
  // Store::RevisionIdentity of the base and head revisions it was compiled from:
  // a delta of another history (a restored or recreated store) names other commits.
  uint64_t base_identity() const { return base_identity_; }
  uint64_t head_identity() const { return head_identity_; }
  const DeltaTotals& totals() const { return totals_; }
  uint64_t size() const { return data_.size(); }

  // ---- nodes: the changed nodes, in (run, key) order ----
  const Reader& nodes() const { return *nodes_; }
  uint32_t node_count() const { return nodes_->node_count(); }
  uint32_t base_slot(uint32_t d) const;  // kNoNode unless it replaces a base node in place
  uint32_t gap(uint32_t d) const;        // base position it goes before (base_slot if in place)
  bool is_stub(uint32_t d) const;
  std::span<const uint32_t> removed() const { return removed_; }  // base numbers, ascending

  // ---- edges ----
  uint32_t out_list_count() const { return static_cast<uint32_t>(out_sources_.size()); }
  uint32_t out_source(uint32_t k) const { return out_sources_[k]; }  // node reference
  // Out-list k is edges [out_begin(k), out_begin(k + 1)).
  uint32_t out_begin(uint32_t k) const { return out_offsets_[k]; }
  uint32_t edge_count() const { return out_offsets_.back(); }
  DeltaEdge edge(uint32_t e) const;
  uint32_t in_list_count() const { return static_cast<uint32_t>(in_targets_.size()); }
  uint32_t in_target(uint32_t k) const { return in_targets_[k]; }
  uint32_t in_begin(uint32_t k) const { return in_offsets_[k]; }
  uint32_t in_entry(uint32_t p) const { return in_entries_[p]; }  // edge reference

  // ---- kv ----
  std::span<const uint32_t> removed_kv() const { return removed_kv_; }
  uint32_t kv_count() const { return static_cast<uint32_t>(kv_.size()); }
  const DeltaKvEntry& kv(uint32_t k) const { return kv_[k]; }

  // ---- names at H ----
  std::string_view relation_name(RelationId merged) const { return relation_names_[merged]; }
  RelationId merged_relation(RelationId base_rel) const { return base_to_merged_[base_rel]; }
  // The runs at H are the base's, less removed_sessions(), with the new runs
  // inserted: new_runs()[k] goes before base session new_run_gaps()[k]. Both lists
  // are ascending, so the runs at H are sorted as a full export's are (O(changes),
  // not O(sessions): the base's runs are not copied).
  std::span<const uint32_t> removed_sessions() const { return removed_sessions_; }
  std::span<const std::string_view> new_runs() const { return new_runs_; }
  std::span<const uint32_t> new_run_gaps() const { return new_run_gaps_; }

 private:
  Delta() = default;
  Status Parse(const Reader& base);
  // The steps of Parse, one per block (docs/FORMAT.md, delta segments).
  Status ParseFrame(const Reader& base, std::map<uint32_t, std::string_view>* blocks);
  Status ParseInfo(std::string_view b);
  Status ParseNodes(std::string_view b, const Reader& base);
  Status ParsePlacement(std::string_view b, const Reader& base);
  Status ParseRemoved(std::string_view b, const Reader& base);
  Status ParseNames(std::string_view strings, std::string_view relations);
  Status ParseRuns(std::string_view b, const Reader& base);
  Status ParseOutLists(std::string_view b, const Reader& base);
  Status ParseInLists(std::string_view b, const Reader& base);
  Status ParseKv(std::string_view b, const Reader& base);
  // That every node and edge the delta names is one at H over this base.
  Status CheckFit(const Reader& base) const;
  // `ref` names a node of the merged view (a base index, or a delta node).
  bool ValidNode(const Reader& base, uint32_t ref) const;

  std::string data_;  // the file, 8-aligned copy
  uint64_t base_revision_ = 0, head_revision_ = 0;
  uint64_t base_identity_ = 0, head_identity_ = 0;
  DeltaTotals totals_;
  std::unique_ptr<Reader> nodes_;
  const char* placement_ = nullptr;
  std::vector<uint32_t> removed_;
  std::vector<uint32_t> out_sources_, out_offsets_;
  const char* edges_ = nullptr;
  std::vector<std::string_view> strings_;
  std::vector<uint32_t> in_targets_, in_offsets_, in_entries_;
  std::vector<uint32_t> removed_kv_;
  std::vector<DeltaKvEntry> kv_;
  std::vector<std::string_view> relation_names_;
  RelationId base_to_merged_[256] = {};
  std::vector<uint32_t> removed_sessions_;
  std::vector<std::string_view> new_runs_;
  std::vector<uint32_t> new_run_gaps_;
};

// The merged dense numbering of nodes (a full export's at H): the base's, less the
// removed nodes and the slots replaced in place, plus every delta node (delta
// position d = delta node d) at its place.
Result<MergedSequence> NodeSequence(const Reader& base, const Delta& delta);
// The merged numbering of edges: the base's, less the base out-ranges the delta's
// out-lists replace (and those of removed nodes), plus every delta edge (delta
// position e = the e-th edge of the out-lists).
Result<MergedSequence> EdgeSequence(const Reader& base, const Delta& delta);

// The state at H from the base and its delta, for the snapshot writer: live nodes
// (stubs are left to the writer, which re-creates them from dangling edges), every
// edge, kv and relation. Writing it gives the full export's bytes at H.
Result<StoreState> MergeState(const Reader& base, const Delta& delta);

}  // namespace amem::snapshot

#endif  // AMEM_SNAPSHOT_DELTA_H_
