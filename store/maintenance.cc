// ReadState (for the exporter), Stats and Compact (docs/STORE.md §5).
#include <algorithm>
#include <bit>
#include <cstdint>
#include <exception>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "common/coding.h"
#include "common/free_vector.h"
#include "common/huge_pages.h"
#include "store/internal/store_rep.h"

namespace amem {

using namespace store_internal;

namespace {

uint64_t Entries(MDB_txn* txn, MDB_dbi dbi) {
  MDB_stat st;
  lmdb::dbi_stat(txn, dbi, &st);
  return st.ms_entries;
}

}  // namespace

namespace store_internal {

std::string TombstoneWarningText(uint64_t tombstones, uint64_t records) {
  if (tombstones < kWarnMinTombstones ||
      static_cast<double>(tombstones) < kWarnTombstoneRatio * static_cast<double>(records)) {
    return {};
  }
  return std::to_string(tombstones) + " tombstones (" +
         std::to_string(tombstones * 100 / std::max<uint64_t>(records, 1)) +
         "% of node and edge records) have accumulated; compaction is recommended "
         "(amem compact)";
}

Status CountTombstones(MDB_txn* txn, const Dbs& dbs, uint64_t* tombstones) {
  std::string_view stored;
  if (Get(txn, dbs.meta, kMetaTombstones, &stored) && stored.size() == 8) {
    *tombstones = DecodeBig64(stored.data());
    return Status::OK();
  }
  *tombstones = 0;
  for (MDB_dbi dbi : {dbs.n, dbs.e}) {
    Cursor c(txn, dbi);
    for (bool ok = c.First(); ok; ok = c.Next()) {
      uint64_t rev = 0;
      bool tombstone = false;
      if (!PeekRev(c.value(), &rev, &tombstone)) return Status::Corruption("record header");
      *tombstones += tombstone ? 1 : 0;
    }
  }
  return Status::OK();
}

Status AddTombstones(MDB_txn* txn, const Dbs& dbs, int64_t delta) {
  if (delta == 0) return Status::OK();
  std::string_view stored;
  const bool kept = Get(txn, dbs.meta, kMetaTombstones, &stored) && stored.size() == 8;
  uint64_t count = 0;
  // Without the counter, the scan already sees this transaction's writes.
  AMEM_RETURN_IF_ERROR(CountTombstones(txn, dbs, &count));
  if (kept) {
    count = delta < 0 && static_cast<uint64_t>(-delta) > count
                ? 0
                : count + static_cast<uint64_t>(delta);
  }
  PutMetaU64(txn, dbs, kMetaTombstones, count);
  return Status::OK();
}

}  // namespace store_internal

namespace {

bool HasDup(MDB_txn* txn, MDB_dbi dbi, std::string_view key, std::string_view dup) {
  Cursor c(txn, dbi);
  return c.SeekDupRange(key, dup) && c.value() == dup;
}

// Counts that Stats reports and Compact's store-wide trigger uses.
Status TakeCensus(MDB_txn* txn, const Dbs& dbs, MDB_env* env, StoreStats* st) {
  st->revision = GetMetaU64(txn, dbs, kMetaRevision, 0);
  st->revision_ts = static_cast<int64_t>(GetMetaU64(txn, dbs, kMetaRevisionTs, 0));
  st->oldest_readable_revision = std::max<uint64_t>(1, GetMetaU64(txn, dbs, kMetaFloor, 0));
  // The live nodes' ids, ascending (node keys are big-endian ids): a dangling
  // edge's endpoint is looked up here, not in the n tree (a B-tree descent per
  // endpoint was most of the census).
  std::vector<uint64_t> live;
  {
    Cursor c(txn, dbs.n);
    for (bool ok = c.First(); ok; ok = c.Next()) {
      uint64_t rev = 0;
      bool tombstone = false;
      if (c.key().size() != kNodeKeySize) return Status::Corruption("node key size");
      if (!PeekRev(c.value(), &rev, &tombstone)) return Status::Corruption("node record header");
      ++(tombstone ? st->deleted_nodes : st->live_nodes);
      if (!tombstone) live.push_back(DecodeBig64(c.key().data()));
    }
  }
  auto is_live = [&live](uint64_t id) { return std::binary_search(live.begin(), live.end(), id); };
  {
    Cursor c(txn, dbs.e);
    for (bool ok = c.First(); ok; ok = c.Next()) {
      if (c.key().size() != kEdgeKeySize) return Status::Corruption("edge key size");
      uint64_t src = 0, dst = 0;
      RelationId rel = 0;
      DecodeEdgeKey(c.key(), &src, &rel, &dst);
      uint64_t rev = 0;
      bool tombstone = false;
      if (!PeekRev(c.value(), &rev, &tombstone)) return Status::Corruption("edge record header");
      if (tombstone) {
        ++st->deleted_edges;
        st->dead_adjacency_entries += HasDup(txn, dbs.out, NodeKey(src), AdjEntry(rel, dst));
        st->dead_adjacency_entries += HasDup(txn, dbs.in, NodeKey(dst), AdjEntry(rel, src));
        continue;
      }
      ++st->live_edges;
      if (!is_live(src) || !is_live(dst)) ++st->dangling_edges;
    }
  }
  {
    Cursor c(txn, dbs.kv);
    for (bool ok = c.First(); ok; ok = c.Next()) {
      uint64_t rev = 0;
      bool tombstone = false;
      if (!PeekRev(c.value(), &rev, &tombstone)) return Status::Corruption("kv record header");
      st->kv_entries += tombstone ? 0 : 1;
    }
  }
  st->history_entries = Entries(txn, dbs.hist);
  st->adjacency_entries = Entries(txn, dbs.out) + Entries(txn, dbs.in);
  {
    Cursor c(txn, dbs.meta);
    for (bool ok = c.SeekRange(kMetaRelationById);
         ok && c.key().substr(0, kMetaRelationById.size()) == kMetaRelationById; ok = c.Next()) {
      ++st->custom_relations;
    }
  }
  MDB_envinfo info;
  MDB_stat env_stat;
  lmdb::env_info(env, &info);
  lmdb::env_stat(env, &env_stat);
  st->map_size = info.me_mapsize;
  st->used_bytes = (info.me_last_pgno + 1) * uint64_t{env_stat.ms_psize};

  uint64_t tombstones = st->deleted_nodes + st->deleted_edges;
  uint64_t records = tombstones + st->live_nodes + st->live_edges;
  if (std::string warning = TombstoneWarningText(tombstones, records); !warning.empty()) {
    st->compaction_recommended = true;
    st->warnings.push_back(std::move(warning));
  }
  return Status::OK();
}

// A deleted edge whose adjacency entries compaction moves to the dead lists.
struct DeadEdge {
  uint64_t src;
  RelationId rel;
  uint64_t dst;
  uint64_t deleted_rev;  // the revision of its tombstone
  bool operator<(const DeadEdge& o) const {
    return src != o.src ? src < o.src : rel != o.rel ? rel < o.rel : dst < o.dst;
  }
  bool operator==(const DeadEdge& o) const {
    return src == o.src && rel == o.rel && dst == o.dst;
  }
};

// Scans every list of `list` (out when outgoing, else in) and appends the dead
// edges of the lists that qualify for rewriting.
Status FindDeadEdges(MDB_txn* txn, const Dbs& dbs, bool outgoing, bool rewrite_all,
                     std::vector<DeadEdge>* out) {
  Cursor c(txn, outgoing ? dbs.out : dbs.in);
  std::vector<DeadEdge> dead;
  uint64_t total = 0;
  auto flush = [&] {
    uint64_t d = dead.size();
    if (d > 0 && (rewrite_all || d >= kCompactListMinDead ||
                  static_cast<double>(d) >= kCompactListDeadRatio * static_cast<double>(total))) {
      out->insert(out->end(), dead.begin(), dead.end());
    }
    dead.clear();
    total = 0;
  };
  std::string current;
  for (bool ok = c.First(); ok; ok = c.Next()) {
    if (c.key() != current) {
      flush();
      current = c.key();
    }
    std::string_view v = c.value();
    if (c.key().size() != kNodeKeySize || v.size() != kAdjEntrySize) {
      return Status::Corruption(std::string(outgoing ? "out" : "in") + " adjacency entry size");
    }
    uint64_t id = DecodeBig64(c.key().data());
    auto rel = static_cast<RelationId>(v[0]);
    uint64_t other = DecodeBig64(v.data() + 1);
    const uint64_t src = outgoing ? id : other, dst = outgoing ? other : id;
    std::string_view value;
    uint64_t rev = 0;
    bool tombstone = false;
    if (!Get(txn, dbs.e, EdgeKey(src, rel, dst), &value)) {
      return Status::Corruption(std::string(outgoing ? "out" : "in") + " adjacency of node " +
                                FormatHexId(id) + " points at no edge record");
    }
    if (!PeekRev(value, &rev, &tombstone)) return Status::Corruption("edge record header");
    ++total;
    if (tombstone) dead.push_back({src, rel, dst, rev});
  }
  flush();
  return Status::OK();
}

// Moves the out and in entries of the deleted edge `d` to the dead lists; adds the
// lists it changed to `lists` (outgoing flag, node id) and returns how many entries
// moved (2, or 1 in a store an older amem left with only one of them).
uint64_t MoveToDeadLists(MDB_txn* txn, const Dbs& dbs, const DeadEdge& d,
                         std::vector<std::pair<bool, uint64_t>>* lists) {
  uint64_t moved = 0;
  for (bool outgoing : {true, false}) {
    const uint64_t owner = outgoing ? d.src : d.dst, other = outgoing ? d.dst : d.src;
    const std::string list_key = NodeKey(owner);
    if (!Del(txn, outgoing ? dbs.out : dbs.in, list_key, AdjEntry(d.rel, other))) continue;
    PutDup(txn, outgoing ? dbs.out_dead : dbs.in_dead, list_key,
           DeadAdjEntry(d.rel, other, d.deleted_rev));
    lists->emplace_back(outgoing, owner);
    ++moved;
  }
  return moved;
}

// Positions 0..count-1 sorted by (key(i), i). The keys are first copied next to
// each other, so the sort compares bytes in cache instead of bytes scattered over
// the map's pages (a cache miss per comparison made this sort a tenth of ReadState).
template <typename KeyFn>
std::vector<uint32_t> OrderByKey(uint32_t count, KeyFn key) {
  size_t bytes = 0;
  for (uint32_t i = 0; i < count; ++i) bytes += key(i).size();
  std::string arena;
  arena.reserve(bytes);  // never reallocates below, so the views stay valid
  std::vector<std::pair<std::string_view, uint32_t>> items(count);
  for (uint32_t i = 0; i < count; ++i) {
    const size_t at = arena.size();
    arena.append(key(i));
    items[i] = {std::string_view(arena).substr(at), i};
  }
  std::sort(items.begin(), items.end());
  std::vector<uint32_t> order(count);
  for (uint32_t k = 0; k < count; ++k) order[k] = items[k].second;
  return order;
}

// Puts (*v)[order[k]] at position k for every k, moving each element once.
// REQUIRES: order is a permutation of 0..v->size()-1.
template <typename T>
void PermuteInPlace(std::vector<T>* v, std::vector<uint32_t> order) {
  for (uint32_t start = 0; start < order.size(); ++start) {
    if (order[start] == start) continue;
    // Follow the cycle through start, marking each position done (order[k] = k).
    T first = std::move((*v)[start]);
    uint32_t k = start;
    while (order[k] != start) {
      const uint32_t from = order[k];
      (*v)[k] = std::move((*v)[from]);
      order[k] = k;
      k = from;
    }
    (*v)[k] = std::move(first);
    order[k] = k;
  }
}

// Node id -> position in key order, by open addressing (ids are hashes of keys;
// mixed again for test hashes that cluster them).
class NodePositions {
 public:
  // nodes in id order; order[k]: the index in `nodes` of the k-th key.
  NodePositions(const std::vector<NodeView>& nodes, const std::vector<uint32_t>& order)
  {
    const size_t count = std::bit_ceil(std::max<size_t>(16, 2 * nodes.size()));
    ReserveHuge(&slots_, count);
    slots_.resize(count);
    for (uint32_t k = 0; k < order.size(); ++k) {
      const uint64_t id = nodes[order[k]].id;
      size_t i = Home(id);
      while (slots_[i].pos != EdgeView::kUnknownNode) i = (i + 1) & (slots_.size() - 1);
      slots_[i] = {id, k};
    }
  }
  // kUnknownNode when no live node has this id.
  uint32_t Find(uint64_t id) const {
    for (size_t i = Home(id);; i = (i + 1) & (slots_.size() - 1)) {
      if (slots_[i].pos == EdgeView::kUnknownNode || slots_[i].id == id) return slots_[i].pos;
    }
  }

 private:
  struct Slot {
    uint64_t id = 0;
    uint32_t pos = EdgeView::kUnknownNode;
  };
  size_t Home(uint64_t id) const {
    return static_cast<size_t>((id * 0x9E3779B97F4A7C15ull) >> 20) & (slots_.size() - 1);
  }
  std::vector<Slot> slots_;  // a power of two, at most half full
};

// The positions of `edges` (in (src id, rel, dst id) order, as VisitState gives
// them) in (src_key, rel, dst_key) order. Edges of one source are already
// together, so only the runs are sorted by key (ties, only if two ids shared a
// key, which Apply prevents, by id), then each run by (rel, dst_key): far fewer
// string comparisons than sorting all edges.
std::vector<uint32_t> EdgeOrder(const std::vector<EdgeView>& e) {
  std::vector<std::pair<uint32_t, uint32_t>> runs;  // [begin, end), in src id order
  for (uint32_t i = 0; i < e.size();) {
    uint32_t j = i + 1;
    while (j < e.size() && e[j].src == e[i].src) ++j;
    runs.emplace_back(i, j);
    i = j;
  }
  std::vector<uint32_t> order;
  order.reserve(e.size());
  for (uint32_t r : OrderByKey(static_cast<uint32_t>(runs.size()),
                               [&](uint32_t r) { return e[runs[r].first].src_key; })) {
    const auto [begin, end] = runs[r];
    size_t at = order.size();
    for (uint32_t i = begin; i < end; ++i) order.push_back(i);
    std::sort(order.begin() + static_cast<ptrdiff_t>(at), order.end(), [&](uint32_t a, uint32_t b) {
      if (e[a].rel != e[b].rel) return e[a].rel < e[b].rel;
      if (int c = e[a].dst_key.compare(e[b].dst_key); c != 0) return c < 0;
      return e[a].dst < e[b].dst;
    });
  }
  return order;
}

// Below this many edge entries VisitState reads edges and nodes on one thread:
// a thread and a second transaction cost more than they save.
constexpr uint64_t kParallelScanEdges = 1 << 16;

}  // namespace

Status Store::VisitState(const ReadView& view, const VisitOptions& options,
                         const std::function<Status(StoreStateView&)>& fn) const {
  return rep_->Read([&](MDB_txn* txn) -> Status {
    const Dbs& dbs = rep_->dbs;
    StoreStateView state;
    state.dimension = rep_->dimension;
    At at;
    AMEM_RETURN_IF_ERROR(rep_->Resolve(txn, view, &at));
    state.revision = at.rev;
    if (at.latest) {
      state.revision_ts = static_cast<int64_t>(GetMetaU64(txn, dbs, kMetaRevisionTs, 0));
    } else if (std::string_view log; at.rev > 0 && Get(txn, dbs.log, RevKey(at.rev), &log) &&
                                     log.size() >= 8) {
      state.revision_ts = static_cast<int64_t>(DecodeFixed64(log.data()));
    }
    AMEM_RETURN_IF_ERROR(LoadRelations(txn, dbs, at, &state.relations));
    std::string_view names[kMaxRelationId + 1];
    for (const auto& [id, name] : state.relations) names[id] = name;

    // Every live record decoded in place (the views live until the txn ends),
    // in id order; then the nodes are put in key order.
    ReserveHuge(&state.nodes, Entries(txn, dbs.n));
    // With edge refs, each edge's ids until its positions are known.
    std::vector<std::pair<uint64_t, uint64_t>> ref_ids;
    if (options.edge_refs) {
      ReserveHuge(&state.edge_refs, Entries(txn, dbs.e));
      ReserveHuge(&ref_ids, Entries(txn, dbs.e));
    } else {
      ReserveHuge(&state.edges, Entries(txn, dbs.e));
    }
    auto scan_edges = [&](MDB_txn* t) {
      return ForEachAt(t, dbs, dbs.e, kHistEdge, "", at,
                       [&](std::string_view k, std::string_view value) {
                         if (k.size() != kEdgeKeySize) return Status::Corruption("edge key size");
                         EdgeValue v;
                         AMEM_RETURN_IF_ERROR(v.DecodeFrom(value));
                         if (v.tombstone) return Status::OK();
                         uint64_t src = 0, dst = 0;
                         RelationId rel = 0;
                         DecodeEdgeKey(k, &src, &rel, &dst);
                         if (names[rel].empty()) {
                           return Status::Corruption("an edge uses unknown relation id " +
                                                     std::to_string(rel));
                         }
                         if (options.edge_refs) {
                           if (value.size() > UINT32_MAX) {
                             return Status::Corruption("edge value size");
                           }
                           state.edge_refs.push_back(
                               {value.data(), static_cast<uint32_t>(value.size()),
                                EdgeView::kUnknownNode, EdgeView::kUnknownNode, rel});
                           ref_ids.emplace_back(src, dst);
                         } else {
                           state.edges.push_back(ToEdgeView(src, rel, dst, names[rel], v));
                         }
                         return Status::OK();
                       });
    };
    // A large store's edges are read on a second thread while this one reads
    // and sorts the nodes (at 1M nodes and 3M edges, 0.65 s beside 0.75 s), in
    // a read transaction of its own that sees the same commit (MDB_NOTLS lets
    // it span threads; it ends with this one, so the views stay valid). When
    // another commit landed in between, the edges are read here after all.
    std::optional<Txn> edge_txn;
    std::jthread edge_thread;  // joins before edge_txn ends, even on an exception
    Status edge_status;
    std::exception_ptr edge_error;
    if (Entries(txn, dbs.e) >= kParallelScanEdges) {
      try {
        edge_txn.emplace(Txn::Begin(rep_->env(), MDB_RDONLY));
      } catch (const lmdb::error&) {
        edge_txn.reset();  // e.g. no reader slot left: read them here
      }
      if (edge_txn && ::mdb_txn_id(edge_txn->handle()) == ::mdb_txn_id(txn)) {
        edge_thread = std::jthread([&] {
          try {
            edge_status = scan_edges(edge_txn->handle());
          } catch (...) {
            edge_error = std::current_exception();
          }
        });
      }
    }
    Status node_status = ForEachAt(txn, dbs, dbs.n, kHistNode, "", at,
                                   [&](std::string_view k, std::string_view value) {
                                     if (k.size() != kNodeKeySize) {
                                       return Status::Corruption("node key size");
                                     }
                                     NodeValue v;
                                     AMEM_RETURN_IF_ERROR(v.DecodeFrom(value));
                                     if (!v.tombstone) {
                                       state.nodes.push_back(ToNodeView(DecodeBig64(k.data()), v));
                                     }
                                     return Status::OK();
                                   });
    std::optional<NodePositions> positions;
    if (node_status.ok()) {
      std::vector<uint32_t> order = OrderByKey(static_cast<uint32_t>(state.nodes.size()),
                                               [&](uint32_t i) { return state.nodes[i].key; });
      positions.emplace(state.nodes, order);
      PermuteInPlace(&state.nodes, std::move(order));
    }
    if (edge_thread.joinable()) {
      edge_thread.join();
      if (edge_error) std::rethrow_exception(edge_error);
      AMEM_RETURN_IF_ERROR(node_status);
      AMEM_RETURN_IF_ERROR(edge_status);
    } else {
      AMEM_RETURN_IF_ERROR(node_status);
      AMEM_RETURN_IF_ERROR(scan_edges(txn));
    }
    // The writer is given each endpoint's position, so that it need not look
    // keys up. A node's id is its key's hash and Apply refuses an edge or node
    // whose key collides with another's id, so the live node with an endpoint's
    // id is that endpoint; comparing the keys too cost a cache miss per edge
    // (a second at 1M nodes). Two threads take half the edges each.
    auto place = [&](auto& edges, auto id_of, size_t begin, size_t end) {
      for (size_t i = begin; i < end; ++i) {
        auto& e = edges[i];
        // One source's edges come together: its position is looked up once.
        const bool same_src = i > begin && id_of(i - 1).first == id_of(i).first;
        e.src_node = same_src ? edges[i - 1].src_node : positions->Find(id_of(i).first);
        e.dst_node = positions->Find(id_of(i).second);
      }
    };
    auto place_edges = [&](size_t begin, size_t end) {
      if (options.edge_refs) {
        place(state.edge_refs, [&](size_t i) { return ref_ids[i]; }, begin, end);
      } else {
        place(state.edges,
              [&](size_t i) { return std::pair(state.edges[i].src, state.edges[i].dst); }, begin,
              end);
      }
    };
    const size_t edge_count = options.edge_refs ? state.edge_refs.size() : state.edges.size();
    const size_t half = edge_count >= kParallelScanEdges ? edge_count / 2 : 0;
    {
      std::jthread second_half;
      if (half > 0) second_half = std::jthread(place_edges, half, edge_count);
      place_edges(0, half > 0 ? half : edge_count);
    }
    FreeVector(&ref_ids);
    positions.reset();  // not held under fn (32 MB at 1M nodes)
    // A past view's kv keys are strings of the scan: copied to the arena, and
    // the views made once it has stopped growing.
    std::vector<uint32_t> key_ends;
    AMEM_RETURN_IF_ERROR(ForEachAt(txn, dbs, dbs.kv, kHistKv, "", at,
                                   [&](std::string_view k, std::string_view value) {
                                     KvValue v;
                                     AMEM_RETURN_IF_ERROR(v.DecodeFrom(value));
                                     if (v.tombstone) return Status::OK();
                                     state.arena.append(k);
                                     key_ends.push_back(static_cast<uint32_t>(state.arena.size()));
                                     state.kv.push_back({{}, {}, {}, v.value, v.run, v.task,
                                                         v.ts, v.rev});
                                     return Status::OK();
                                   }));
    for (size_t i = 0, begin = 0; i < state.kv.size(); begin = key_ends[i++]) {
      KvView& kv = state.kv[i];
      if (!SplitKvKey(std::string_view(state.arena).substr(begin, key_ends[i] - begin),
                      &kv.scope, &kv.ns, &kv.key)) {
        return Status::Corruption("kv key");
      }
    }
    return fn(state);
  });
}

Result<StoreState> Store::ReadState(const ReadView& view) const {
  StoreState state;
  AMEM_RETURN_IF_ERROR(VisitState(view, [&](const StoreStateView& v) {
    state = StoreState();
    state.dimension = v.dimension;
    state.revision = v.revision;
    state.revision_ts = v.revision_ts;
    state.relations = v.relations;
    ReserveHuge(&state.nodes, v.nodes.size());
    for (const NodeView& n : v.nodes) state.nodes.push_back(ToNodeRecord(n));
    ReserveHuge(&state.edges, v.edges.size());
    for (uint32_t i : EdgeOrder(v.edges)) state.edges.push_back(ToEdgeRecord(v.edges[i]));
    state.kv.reserve(v.kv.size());
    for (const KvView& kv : v.kv) state.kv.push_back(ToKvRecord(kv));
    return Status::OK();
  }));
  return state;
}

Result<StoreStats> Store::Stats() const {
  StoreStats st;
  AMEM_RETURN_IF_ERROR(rep_->Read([&](MDB_txn* txn) {
    st = StoreStats();
    st.dimension = rep_->dimension;
    return TakeCensus(txn, rep_->dbs, rep_->env(), &st);
  }));
  return st;
}

Result<std::string> Store::TombstoneWarning() const {
  std::string warning;
  AMEM_RETURN_IF_ERROR(rep_->Read([&](MDB_txn* txn) {
    const Dbs& dbs = rep_->dbs;
    uint64_t tombstones = 0;
    AMEM_RETURN_IF_ERROR(CountTombstones(txn, dbs, &tombstones));
    warning = TombstoneWarningText(tombstones, Entries(txn, dbs.n) + Entries(txn, dbs.e));
    return Status::OK();
  }));
  return warning;
}

namespace {

// 1. Move dead adjacency entries to the dead lists, which only as-of reads
//    consult. A deleted edge leaves out and in together, whichever of its two
//    lists qualified, so that out and in always hold the same edges and every e
//    record keeps both of its entries or neither. `lists`: the lists touched.
Status MoveDeadEdges(MDB_txn* txn, const Dbs& dbs, bool rewrite_all,
                     std::vector<std::pair<bool, uint64_t>>* lists, CompactReport* report) {
  std::vector<DeadEdge> dead;
  for (bool outgoing : {true, false}) {
    AMEM_RETURN_IF_ERROR(FindDeadEdges(txn, dbs, outgoing, rewrite_all, &dead));
  }
  std::sort(dead.begin(), dead.end());
  dead.erase(std::unique(dead.begin(), dead.end()), dead.end());
  for (const DeadEdge& d : dead) {
    report->adjacency_entries_removed += MoveToDeadLists(txn, dbs, d, lists);
  }
  return Status::OK();
}

// What step 2 finds in the e records.
struct EdgeScan {
  std::vector<std::string> doomed;    // tombstones no live list points at
  std::vector<DeadEdge> one_sided;    // deleted edges with one adjacency entry
  std::vector<std::pair<bool, std::string>> restore;  // outgoing, edge key
};

Status ScanEdgeRecords(MDB_txn* txn, const Dbs& dbs, EdgeScan* scan) {
  Cursor c(txn, dbs.e);
  for (bool ok = c.First(); ok; ok = c.Next()) {
    uint64_t rev = 0, src = 0, dst = 0;
    RelationId rel = 0;
    bool tombstone = false;
    if (c.key().size() != kEdgeKeySize) return Status::Corruption("edge key size");
    if (!PeekRev(c.value(), &rev, &tombstone)) return Status::Corruption("edge header");
    DecodeEdgeKey(c.key(), &src, &rel, &dst);
    const bool has_out = HasDup(txn, dbs.out, NodeKey(src), AdjEntry(rel, dst));
    const bool has_in = HasDup(txn, dbs.in, NodeKey(dst), AdjEntry(rel, src));
    if (tombstone) {
      if (has_out && has_in) continue;
      if (has_out || has_in) scan->one_sided.push_back({src, rel, dst, rev});
      scan->doomed.emplace_back(c.key());
    } else {
      if (!has_out) scan->restore.emplace_back(true, c.key());
      if (!has_in) scan->restore.emplace_back(false, c.key());
    }
  }
  return Status::OK();
}

// 2. Edge tombstones no live list points at, node tombstones and kv tombstones
//    older than the history floor. Earlier versions stay in hist, so keyed
//    as-of reads are unchanged. Edges an older amem left with one adjacency
//    entry are repaired on the way: a deleted edge's remaining entry moves to
//    the dead lists (then its tombstone goes), a live edge gets its missing entry
//    back. *repairs: what was repaired, if anything.
Status RemoveTombstones(MDB_txn* txn, const Dbs& dbs, const StoreStats& census,
                        uint64_t new_floor, bool dry_run,
                        std::vector<std::pair<bool, uint64_t>>* lists, CompactReport* report,
                        std::string* repairs) {
  EdgeScan scan;
  AMEM_RETURN_IF_ERROR(ScanEdgeRecords(txn, dbs, &scan));
  std::vector<std::string>& doomed = scan.doomed;
  for (const DeadEdge& d : scan.one_sided) {
    report->adjacency_entries_removed += MoveToDeadLists(txn, dbs, d, lists);
  }
  for (const auto& [outgoing, k] : scan.restore) {
    uint64_t src = 0, dst = 0;
    RelationId rel = 0;
    DecodeEdgeKey(k, &src, &rel, &dst);
    PutDup(txn, outgoing ? dbs.out : dbs.in, NodeKey(outgoing ? src : dst),
           AdjEntry(rel, outgoing ? dst : src));
  }
  std::sort(lists->begin(), lists->end());
  report->lists_rewritten =
      static_cast<uint64_t>(std::unique(lists->begin(), lists->end()) - lists->begin());
  for (const std::string& k : doomed) Del(txn, dbs.e, k);
  report->tombstones_removed += doomed.size();
  uint64_t tombstones_left = census.deleted_nodes + census.deleted_edges - doomed.size();
  // kv tombstones are what KvHistory reports as deletes, so they stay until
  // the history before them is dropped.
  for (MDB_dbi dbi : {dbs.n, dbs.kv}) {
    doomed.clear();
    {
      Cursor c(txn, dbi);
      for (bool ok = c.First(); ok; ok = c.Next()) {
        uint64_t rev = 0;
        bool tombstone = false;
        if (!PeekRev(c.value(), &rev, &tombstone)) return Status::Corruption("record header");
        if (tombstone && (dbi == dbs.n || rev <= new_floor)) doomed.emplace_back(c.key());
      }
    }
    for (const std::string& k : doomed) Del(txn, dbi, k);
    report->tombstones_removed += doomed.size();
    if (dbi == dbs.n) tombstones_left -= doomed.size();
  }
  PutMetaU64(txn, dbs, kMetaTombstones, tombstones_left);
  if (!scan.restore.empty() || !scan.one_sided.empty()) {
    *repairs = std::string(dry_run ? "would repair" : "repaired") +
               " out/in lists that disagreed (left by an older amem's compaction): " +
               std::to_string(scan.restore.size()) + " missing entries of live edges, " +
               std::to_string(scan.one_sided.size()) + " deleted edges with one entry";
  }
  return Status::OK();
}

// 3. History, dead lists and log before `drop`.
Status DropHistory(MDB_txn* txn, const Dbs& dbs, uint64_t drop, CompactReport* report) {
  std::vector<std::string> keys;
  {
    Cursor c(txn, dbs.hist);
    for (bool ok = c.First(); ok; ok = c.Next()) {
      std::string_view k = c.key();
      if (k.size() < 1 + kRevSuffixSize) return Status::Corruption("hist key size");
      if (DecodeBig64(k.data() + k.size() - kRevSuffixSize) <= drop) keys.emplace_back(k);
    }
  }
  for (const std::string& k : keys) Del(txn, dbs.hist, k);
  report->history_entries_removed += keys.size();
  for (MDB_dbi dbi : {dbs.out_dead, dbs.in_dead}) {
    std::vector<std::pair<std::string, std::string>> gone;
    Cursor c(txn, dbi);
    for (bool ok = c.First(); ok; ok = c.Next()) {
      if (c.value().size() != kDeadAdjEntrySize) {
        return Status::Corruption("dead adjacency entry size");
      }
      if (DecodeBig64(c.value().data() + 9) <= drop) {
        gone.emplace_back(c.key(), c.value());
      }
    }
    for (const auto& [k, v] : gone) Del(txn, dbi, k, v);
    report->history_entries_removed += gone.size();
  }
  std::vector<std::string> revs;
  {
    Cursor c(txn, dbs.log);
    for (bool ok = c.First(); ok && c.key().size() == 8 &&
                              DecodeBig64(c.key().data()) < drop;
         ok = c.Next()) {
      revs.emplace_back(c.key());
    }
  }
  for (const std::string& k : revs) Del(txn, dbs.log, k);
  PutMetaU64(txn, dbs, kMetaFloor, drop);
  return Status::OK();
}

}  // namespace

Result<CompactReport> Store::Compact(const CompactOptions& options) {
  CompactReport report;
  std::string repairs;  // what step 2 repaired, if anything
  const Dbs& dbs = rep_->dbs;
  AMEM_RETURN_IF_ERROR(rep_->Write(
      [&](MDB_txn* txn) -> Status {
        report = CompactReport();
        repairs.clear();
        report.dry_run = options.dry_run;
        const uint64_t latest = GetMetaU64(txn, dbs, kMetaRevision, 0);
        const uint64_t floor = GetMetaU64(txn, dbs, kMetaFloor, 0);
        const uint64_t drop = options.drop_history_before;
        if (drop > latest) {
          return Status::InvalidArgument("cannot drop history before revision " +
                                         std::to_string(drop) + ": the latest revision is " +
                                         std::to_string(latest));
        }
        StoreStats census;
        AMEM_RETURN_IF_ERROR(TakeCensus(txn, dbs, rep_->env(), &census));
        std::vector<std::pair<bool, uint64_t>> lists;  // adjacency lists touched
        AMEM_RETURN_IF_ERROR(
            MoveDeadEdges(txn, dbs, census.compaction_recommended, &lists, &report));
        const uint64_t new_floor = std::max(floor, drop);
        AMEM_RETURN_IF_ERROR(RemoveTombstones(txn, dbs, census, new_floor, options.dry_run,
                                              &lists, &report, &repairs));
        if (drop > floor) AMEM_RETURN_IF_ERROR(DropHistory(txn, dbs, drop, &report));
        report.oldest_readable_revision = std::max<uint64_t>(1, new_floor);
        return Status::OK();
      },
      !options.dry_run));
  auto st = Stats();
  if (st.ok()) report.warnings = st->warnings;
  if (!repairs.empty()) report.warnings.push_back(std::move(repairs));
  return report;
}

}  // namespace amem
