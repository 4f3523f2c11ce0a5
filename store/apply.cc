// The write path: Store::Apply and the single-operation helpers.
//
// A batch is validated completely before the transaction starts; inside it the
// operations are applied grouped by keyspace and sorted by key (sequential B-tree
// inserts are several times faster than random ones). Operations on the same
// entity keep their batch order, and different entities commute, so the result
// is the same as applying the batch in order. Endpoint checks for edges look at
// the state at the end of the batch.
#include <algorithm>
#include <bit>
#include <cstring>
#include <deque>
#include <optional>
#include <string>
#include <unordered_map>

#include "common/clock.h"
#include "common/coding.h"
#include "common/huge_pages.h"
#include "store/internal/store_rep.h"
#include "store/internal/validate.h"

namespace amem {

using namespace store_internal;

namespace {

using Kind = Change::Kind;

// Per-operation state. Kept small: a batch may hold millions of operations.
struct Prep {
  Kind kind = Kind::kPutNode;
  RelationId rel = 0;
  NodeType type = NodeType::kEntity;  // for telemetry of deletes
  uint8_t log_flags = 0;              // per attempt (a map-full retry reruns)
  bool effective = false;             // per attempt
  bool has_ts = false;
  uint64_t id = 0;      // node: its id. edge: its source's id.
  uint64_t dst_id = 0;  // edge: its target's id.
  int64_t ts = 0;         // the op's ts, else the batch's, else the revision's
  std::string_view canon;  // canonical meta / payload; kv: the KvKey
};

Status OpError(size_t i, const Status& s) { return s.WithContext("op " + std::to_string(i)); }

Status CheckNotFuture(int64_t ts, int64_t now) {
  if (ts <= now || ts - now <= kMaxFutureTsSeconds) return Status::OK();
  return Status::InvalidArgument(
      "ts " + std::to_string(ts) + " is more than a day past the clock (" +
      std::to_string(now) + "); timestamps are Unix seconds");
}

std::string Quote(std::string_view s) { return "'" + std::string(s) + "'"; }

Status Collision(std::string_view key, std::string_view other, std::string_view where,
                 uint64_t id) {
  return Status::InvalidArgument("id collision: key " + Quote(key) + " and " +
                                 std::string(where) + "key " + Quote(other) +
                                 " have the same id " + FormatHexId(id));
}

// The key that edge records name for node `id` (an edge to or from it keeps its
// endpoint's key even while the node is missing): one seek of its out list, else
// of its in list. Empty when the node has no adjacency entry.
Status AdjacentEndpointKey(MDB_txn* txn, const Dbs& dbs, uint64_t id, std::string* key) {
  key->clear();
  const std::string node_key = NodeKey(id);
  for (bool outgoing : {true, false}) {
    std::string_view entry, value;
    if (!Get(txn, outgoing ? dbs.out : dbs.in, node_key, &entry)) continue;
    if (entry.size() != kAdjEntrySize) return Status::Corruption("adjacency entry size");
    auto rel = static_cast<RelationId>(entry[0]);
    uint64_t other = DecodeBig64(entry.data() + 1);
    if (!Get(txn, dbs.e, outgoing ? EdgeKey(id, rel, other) : EdgeKey(other, rel, id), &value)) {
      return Status::Corruption(std::string(outgoing ? "out" : "in") + " adjacency of node " +
                                FormatHexId(id) + " points at no edge record");
    }
    EdgeValue v;
    AMEM_RETURN_IF_ERROR(v.DecodeFrom(value).WithContext("edge record"));
    key->assign(outgoing ? v.src_key : v.dst_key);
    return Status::OK();
  }
  return Status::OK();
}

// Aborted when the write expects another latest revision than `latest` (the one
// its transaction started at): someone else committed since the caller read.
Status CheckExpectedRevision(const WriteOptions& options, uint64_t latest) {
  if (!options.expected_revision || *options.expected_revision == latest) return Status::OK();
  return Status::Aborted("conflict: the write expected the store at revision " +
                         std::to_string(*options.expected_revision) + " but it is at " +
                         std::to_string(latest) + "; nothing was written");
}

// Run, task and scope of an operation, falling back to the batch's.
struct Attribution {
  std::string_view run, task, scope;
};
Attribution AttributionOf(const Batch::Op& op, const WriteOptions& w) {
  auto pick = [](const std::optional<std::string>& v, const std::string& dflt) {
    return v ? std::string_view(*v) : std::string_view(dflt);
  };
  switch (op.kind) {
    case Kind::kPutNode: case Kind::kDeleteNode:
      return {pick(op.node().run, w.run), pick(op.node().task, w.task),
              pick(op.node().scope, w.scope)};
    case Kind::kPutEdge: case Kind::kDeleteEdge: case Kind::kDefineRelation:
      return {pick(op.edge().run, w.run), pick(op.edge().task, w.task), w.scope};
    case Kind::kPutKv: case Kind::kDeleteKv:
      return {pick(op.kv().run, w.run), pick(op.kv().task, w.task), op.kv().scope};
  }
  return {};
}

// The fields every new node or edge version sets the same way. `cur` is the
// current version (meaningful only when `live`).
template <typename Value>
void StartVersion(Value* next, const Value& cur, bool live, uint64_t rev, int64_t ts,
                  const Attribution& attr) {
  next->rev = rev;
  next->updated_ts = ts;
  next->created_ts = live ? cur.created_ts : ts;
  next->run = attr.run;
  next->task = attr.task;
}

// Interns `name`; *added tells whether it was new.
Status DefineRelationTxn(MDB_txn* txn, const Dbs& dbs, std::string_view name, bool* added) {
  *added = false;
  if (ParseBuiltinRelation(name)) return Status::OK();
  if (!IsValidRelationName(name)) {
    return Status::InvalidArgument("relation name " + Quote(name) +
                                   " must be 1-64 bytes of [a-z0-9_] starting with a letter");
  }
  std::string by_name(kMetaRelationByName);
  by_name.append(name);
  std::string_view stored;
  if (Get(txn, dbs.meta, by_name, &stored)) return Status::OK();
  uint64_t next = GetMetaU64(txn, dbs, kMetaNextRelation, kFirstCustomRelation);
  if (next > kMaxRelationId) {
    return Status::InvalidArgument("cannot define relation " + Quote(name) + ": all " +
                                   std::to_string(kMaxRelationId + 1 - kFirstCustomRelation) +
                                   " custom relation ids are used");
  }
  char id = static_cast<char>(next);
  std::string by_id(kMetaRelationById);
  by_id.push_back(id);
  Put(txn, dbs.meta, by_id, name);
  Put(txn, dbs.meta, by_name, std::string_view(&id, 1));
  PutMetaU64(txn, dbs, kMetaNextRelation, next + 1);
  *added = true;
  return Status::OK();
}

// Moves the current version of an entity to hist, unless this revision wrote it
// (then it was never visible to any view and is simply replaced).
void Supersede(MDB_txn* txn, const Dbs& dbs, char tag, std::string_view entity,
               std::string_view current, uint64_t current_rev, uint64_t rev) {
  if (current_rev == rev) return;
  Put(txn, dbs.hist, HistKey(tag, entity, rev), current);
}

struct NodeRef { uint64_t id; uint32_t i; };
// An edge operation in key order: (x, rel, y) is (src, rel, dst) or, for the in
// lists, (dst, rel, src). `fresh`: the edge had no record before (it gets list
// entries); carried here so the list passes need not revisit the Prep.
struct EdgeRef {
  uint64_t x;
  uint64_t y;
  uint32_t i;
  RelationId rel;
  bool fresh;
};
struct KvRef { std::string_view key; uint32_t i; };

struct EdgeLess {
  bool operator()(const EdgeRef& l, const EdgeRef& r) const {
    if (l.x != r.x) return l.x < r.x;
    if (l.rel != r.rel) return l.rel < r.rel;
    if (l.y != r.y) return l.y < r.y;
    return l.i < r.i;
  }
};

// Sorts refs whose leading field `lead` is a node id, i.e. a uniformly spread
// 64-bit hash: one counting pass scatters them into buckets by its top bits (a
// bucket per ~4 refs), then each small bucket is sorted with `less`, which must
// order by `lead` first. Same result as std::sort, in close to linear time.
template <typename T, typename Less>
void SortByIdPrefix(std::vector<T>* refs, uint64_t T::*lead, Less less) {
  const size_t n = refs->size();
  int bits = 0;
  while (bits < 20 && (size_t{4} << bits) < n) ++bits;
  if (bits < 4) {
    std::sort(refs->begin(), refs->end(), less);
    return;
  }
  const int shift = 64 - bits;
  std::vector<uint32_t> start((size_t{1} << bits) + 1, 0);
  for (const T& r : *refs) ++start[((r.*lead) >> shift) + 1];
  for (size_t b = 1; b < start.size(); ++b) start[b] += start[b - 1];
  std::vector<T> sorted(n);
  std::vector<uint32_t> fill(start.begin(), start.end() - 1);
  for (const T& r : *refs) sorted[fill[(r.*lead) >> shift]++] = r;
  for (size_t b = 0; b + 1 < start.size(); ++b) {
    if (start[b + 1] - start[b] > 1) {
      std::sort(sorted.begin() + start[b], sorted.begin() + start[b + 1], less);
    }
  }
  refs->swap(sorted);
}

// The loops below visit a large batch in key order, which is random order in
// memory: each operation they read is a cache miss. Reading ahead by this many
// positions overlaps those misses.
constexpr size_t kPrefetchDistance = 8;

template <typename T>
void Prefetch(const T* p) {
  __builtin_prefetch(p);
}
// Every cache line of *p (an operation spans several).
template <typename T>
void PrefetchObject(const T* p) {
  const char* bytes = reinterpret_cast<const char*>(p);
  for (size_t at = 0; at < sizeof(T); at += 64) __builtin_prefetch(bytes + at);
}

// Before visiting refs[k]: starts loading the Prep and the operation twice the
// distance ahead, and lets `strings` prefetch what the operation at the distance
// points to (its key and content bytes), which is in cache by now.
template <typename Ref, typename Strings>
void ReadAhead(const std::vector<Ref>& refs, size_t k, const std::vector<Prep>& preps,
               const std::vector<Batch::Op>& ops, Strings strings) {
  if (k + 2 * kPrefetchDistance < refs.size()) {
    const uint32_t ahead = refs[k + 2 * kPrefetchDistance].i;
    Prefetch(&preps[ahead]);
    PrefetchObject(&ops[ahead]);
  }
  if (k + kPrefetchDistance < refs.size()) strings(ops[refs[k + kPrefetchDistance].i]);
}

// What the batch did to one node id: its last effective node operation.
struct NodeOutcome {
  uint64_t id;
  std::string_view key;
  bool live;
};

// What a stream's earlier pieces did to one node id: the last outcome, with a
// second hash of the key (KeyCheck) so that an endpoint naming the id under
// another key is still looked up, and refused as a collision, in the store.
struct NodeSeen {
  bool live;
  uint64_t key_check;
};
inline uint64_t KeyCheck(std::string_view key) {
  constexpr uint64_t kSeed = 0x6b65792d63686b31;  // not the id's (Hash64's default)
  return Hash64(key.data(), key.size(), kSeed);
}

// The node table of a stream's revision, id -> NodeSeen: one array, open
// addressing with linear probing, at most half full. An edge piece asks it for
// both endpoints of every edge (6M lookups at 1M nodes); std::unordered_map, a
// node per entry, took two cache misses a lookup and 5% of a 1M ingest's CPU.
class NodesSeen {
 public:
  // The entry of `id` into *seen; false if there is none.
  bool Find(uint64_t id, NodeSeen* seen) const {
    if (slots_.empty()) return false;
    for (size_t i = Home(id);; i = (i + 1) & mask_) {
      const Slot& s = slots_[i];
      if (!s.used) return false;
      if (s.id == id) {
        *seen = {s.live, s.key_check};
        return true;
      }
    }
  }
  void Set(uint64_t id, NodeSeen seen) {
    if (2 * (size_ + 1) > slots_.size()) Grow();
    for (size_t i = Home(id);; i = (i + 1) & mask_) {
      Slot& s = slots_[i];
      if (s.used && s.id != id) continue;
      size_ += !s.used;
      s = Slot{id, seen.key_check, seen.live, true};
      return;
    }
  }
  void clear() {
    slots_.clear();
    size_ = mask_ = 0;
  }

 private:
  struct Slot {  // 24 bytes
    uint64_t id, key_check;
    bool live, used;
  };
  // Fibonacci hashing: the slot from the product's high bits, so that ids alike
  // in their low bits (a test's hash, say) still spread.
  size_t Home(uint64_t id) const {
    return static_cast<size_t>((id * 0x9e3779b97f4a7c15ULL) >> shift_) & mask_;
  }
  void Grow() {
    std::vector<Slot> old = std::move(slots_);
    const size_t n = old.empty() ? 1024 : 2 * old.size();
    ReserveHuge(&slots_, n);  // 48 MB for 1M nodes
    slots_.assign(n, Slot{0, 0, false, false});
    mask_ = n - 1;
    shift_ = 64 - static_cast<unsigned>(std::countr_zero(n));
    size_ = 0;
    for (const Slot& s : old) {
      if (s.used) Set(s.id, {s.live, s.key_check});
    }
  }

  std::vector<Slot> slots_;
  size_t size_ = 0, mask_ = 0;
  unsigned shift_ = 64;
};

// Answers "is node `id` live at the end of this batch, and is its key `key`?"
// for edge endpoints. Queries come in ascending id order, so the batch's node
// outcomes (in id order) are merged in; other ids are looked up, through one
// cursor (LMDB searches only the current leaf when the key falls in it), and a
// repeated query (one node's edges come together) is answered from the last.
// A piece of a stream (amem ingest) finds most endpoints among the nodes its
// earlier pieces wrote (`earlier`, null for a batch): these lookups were a
// fifth of a 100K ingest, and are answered from that table, whose liveness the
// revision's end sets again anyway (FinishRevision).
class EndpointChecker {
 public:
  EndpointChecker(MDB_txn* txn, const Dbs& dbs, const std::vector<NodeOutcome>& outcomes,
                  const NodesSeen* earlier)
      : txn_(txn), dbs_(dbs), outcomes_(outcomes), earlier_(earlier) {}
  void Restart() { pos_ = 0; }

  Status Check(uint64_t id, std::string_view key, bool* live) {
    while (pos_ < outcomes_.size() && outcomes_[pos_].id < id) ++pos_;
    if (pos_ < outcomes_.size() && outcomes_[pos_].id == id) {
      const NodeOutcome& last = outcomes_[pos_];
      if (last.key != key) return Collision(key, last.key, "", id);
      *live = last.live;
      return Status::OK();
    }
    if (have_last_ && id == last_id_ && key == last_key_) {
      *live = last_live_;
      return Status::OK();
    }
    if (earlier_ != nullptr) {
      NodeSeen seen;
      if (earlier_->Find(id, &seen) && seen.key_check == KeyCheck(key)) {
        *live = seen.live;
        return Status::OK();
      }
    }
    *live = false;
    if (!cursor_) cursor_.emplace(txn_, dbs_.n);
    if (!cursor_->SeekExact(NodeKey(id))) return Status::OK();
    NodeValue v;
    if (Status s = v.DecodeFrom(cursor_->value()); !s.ok()) {
      return s.WithContext("node " + FormatHexId(id));
    }
    if (v.key != key) return Collision(key, v.key, "stored ", id);
    *live = !v.tombstone;
    have_last_ = true;
    last_id_ = id;
    last_key_.assign(key);
    last_live_ = *live;
    return Status::OK();
  }

 private:
  MDB_txn* txn_;
  const Dbs& dbs_;
  const std::vector<NodeOutcome>& outcomes_;
  const NodesSeen* earlier_;
  size_t pos_ = 0;
  std::optional<Cursor> cursor_;
  bool have_last_ = false, last_live_ = false;
  uint64_t last_id_ = 0;
  std::string last_key_;
};

}  // namespace

namespace store_internal {
uint64_t DiskReserveFor(const Batch& batch) {
  uint64_t reserve = 0;
  for (const Batch::Op& op : batch.ops()) {
    reserve += 1024;
    if (const auto* n = std::get_if<NodeInput>(&op.input)) {
      reserve += 3 * (n->key.size() + n->content.size() + n->meta.size() +
                      n->vector.size() * sizeof(float));
    } else if (const auto* e = std::get_if<EdgeInput>(&op.input)) {
      reserve += 3 * (e->src.size() + e->dst.size() + e->payload.size());
    } else if (const auto* k = std::get_if<KvInput>(&op.input)) {
      reserve += 3 * (k->key.size() + k->value.size());
    }
  }
  return reserve;
}
}  // namespace store_internal

namespace {

// A batch validated and put in key order, before (and independent of) the
// transaction attempt.
struct Prepared {
  std::vector<Prep> preps;
  std::deque<std::string> owned;  // canonical forms that differ from the input, kv keys
  std::vector<NodeRef> nodes;
  std::vector<EdgeRef> edges;  // filled per attempt: relation ids come from the store
  std::vector<KvRef> kvs;
  std::optional<int64_t> max_op_ts;
};

Status Prepare(const Store::Rep& rep, const Batch& batch, int64_t now, Prepared* out) {
  const auto& ops = batch.ops();
  std::vector<Prep>& preps = out->preps;
  preps.assign(ops.size(), Prep());
  out->owned.clear();
  out->max_op_ts.reset();
  std::string canon;
  size_t node_ops = 0, edge_ops = 0, kv_ops = 0;
  for (size_t i = 0; i < ops.size(); ++i) {
    const Batch::Op& op = ops[i];
    Prep& p = preps[i];
    p.kind = op.kind;
    const std::optional<int64_t>* ts = nullptr;
    std::string_view input;  // what canon is compared with
    Status s;
    switch (op.kind) {
      case Kind::kPutNode:
      case Kind::kDeleteNode: {
        const NodeInput& n = op.node();
        s = op.kind == Kind::kPutNode ? ValidateNode(n, rep.dimension, &canon)
                                      : ValidateNodeKey("key", n.key);
        input = n.meta;
        p.id = rep.HashKey(n.key);
        ts = &n.ts;
        ++node_ops;
        break;
      }
      case Kind::kPutEdge:
      case Kind::kDeleteEdge: {
        const EdgeInput& e = op.edge();
        if (op.kind == Kind::kPutEdge) {
          s = ValidateEdge(e, &canon);
        } else {
          s = ValidateNodeKey("src", e.src);
          if (s.ok()) s = ValidateNodeKey("dst", e.dst);
        }
        input = e.payload;
        p.id = rep.HashKey(e.src);
        p.dst_id = rep.HashKey(e.dst);
        ts = &e.ts;
        ++edge_ops;
        break;
      }
      case Kind::kPutKv:
      case Kind::kDeleteKv: {
        const KvInput& kv = op.kv();
        s = op.kind == Kind::kPutKv ? ValidateKv(kv) : ValidateKvName(kv);
        canon = KvKey(kv.scope, kv.ns, kv.key);
        ts = &kv.ts;
        ++kv_ops;
        break;
      }
      case Kind::kDefineRelation:
        if (!ParseBuiltinRelation(op.edge().rel) && !IsValidRelationName(op.edge().rel)) {
          s = Status::InvalidArgument("relation name " + Quote(op.edge().rel) +
                                      " must be 1-64 bytes of [a-z0-9_] starting with a letter");
        }
        break;
    }
    if (!s.ok()) return OpError(i, s);
    if (op.kind == Kind::kPutNode || op.kind == Kind::kPutEdge || op.kind == Kind::kPutKv ||
        op.kind == Kind::kDeleteKv) {
      if (canon == "{}") {
        p.canon = "{}";
      } else if (canon == input) {
        p.canon = input;
      } else {
        p.canon = out->owned.emplace_back(std::move(canon));
      }
    }
    if (ts && ts->has_value()) {
      if (Status f = CheckNotFuture(**ts, now); !f.ok()) return OpError(i, f);
      p.has_ts = true;
      p.ts = **ts;
      out->max_op_ts = std::max(out->max_op_ts.value_or(INT64_MIN), p.ts);
    }
  }

  std::vector<NodeRef>& nodes = out->nodes;
  std::vector<KvRef>& kvs = out->kvs;
  nodes.clear();
  kvs.clear();
  out->edges.clear();
  nodes.reserve(node_ops);
  out->edges.reserve(edge_ops);
  kvs.reserve(kv_ops);
  for (size_t i = 0; i < ops.size(); ++i) {
    auto idx = static_cast<uint32_t>(i);
    switch (ops[i].kind) {
      case Kind::kPutNode: case Kind::kDeleteNode:
        nodes.push_back({preps[i].id, idx});
        break;
      case Kind::kPutKv: case Kind::kDeleteKv:
        kvs.push_back({preps[i].canon, idx});
        break;
      default:
        break;
    }
  }
  SortByIdPrefix(&nodes, &NodeRef::id, [](const NodeRef& l, const NodeRef& r) {
    return l.id != r.id ? l.id < r.id : l.i < r.i;
  });
  std::sort(kvs.begin(), kvs.end(), [](const KvRef& l, const KvRef& r) {
    return l.key != r.key ? l.key < r.key : l.i < r.i;
  });
  return Status::OK();
}

// Appends the telemetry events of a written batch's effective operations.
void AppendTelemetry(const std::vector<Batch::Op>& ops, const std::vector<Prep>& preps,
                     const WriteOptions& options, std::string* lines) {
  for (size_t i = 0; i < ops.size(); ++i) {
    const Prep& p = preps[i];
    if (!p.effective || p.kind == Kind::kDefineRelation) continue;
    const bool del = p.kind == Kind::kDeleteNode || p.kind == Kind::kDeleteEdge ||
                     p.kind == Kind::kDeleteKv;
    const char* op = del ? "delete" : (p.log_flags & kLogOverwrite) ? "overwrite" : "write";
    uint64_t id = p.id;
    const char* type = "kv";
    if (p.kind == Kind::kPutNode || p.kind == Kind::kDeleteNode) {
      type = NodeTypeName(p.type);
    } else if (p.kind == Kind::kPutEdge || p.kind == Kind::kDeleteEdge) {
      id = Hash64(EdgeKey(p.id, p.rel, p.dst_id));
      type = "edge";
    } else {
      id = Hash64(p.canon);
    }
    const Attribution attr = AttributionOf(ops[i], options);
    Telemetry::AddEvent(lines, op, id, type, attr.scope, attr.run, attr.task, p.ts);
  }
}

// One revision being written in a transaction, from one batch (Apply) or from the
// pieces of a stream (ApplyStream). The change log value is built as the pieces
// are written and stored by Finish.
struct Revision {
  uint64_t prev_rev = 0, rev = 0;
  int64_t now = 0, record_ts = 0;
  std::optional<int64_t> batch_ts;  // WriteOptions::ts
  std::optional<int64_t> max_op_ts;
  size_t effective = 0;
  int64_t tombstone_delta = 0;
  std::string log;  // the log value's entries, without its header
  LogEntry prev;    // the last entry in `log`; its strings are in prev_strings
  std::string prev_strings[5];
  bool first = true;
  std::string telemetry;  // event lines, sent after the commit

  // Streams only. An edge's endpoint checks see the state at the end of its
  // piece; the batch's meaning is the state at the end of all of them. So the
  // final liveness of every node the revision wrote is kept, and when a piece
  // wrote nodes after an earlier piece wrote edges, Finish reads the log's edge
  // entries again and sets their missing-endpoint flags from it. (A file of
  // nodes, then edges needs no second look.)
  bool streamed = false;
  NodesSeen node_live;
  bool edges_written = false;  // by the pieces so far
  bool recheck_edges = false;  // a piece wrote nodes after edges were written

  void Reset() {
    effective = 0;
    tombstone_delta = 0;
    max_op_ts.reset();
    log.clear();
    prev = LogEntry();
    first = true;
    telemetry.clear();
    node_live.clear();
    edges_written = recheck_edges = false;
  }
};

Status BeginRevision(const Store::Rep& rep, MDB_txn* txn, const WriteOptions& options,
                     Revision* r) {
  const Dbs& dbs = rep.dbs;
  r->Reset();
  r->prev_rev = GetMetaU64(txn, dbs, kMetaRevision, 0);
  AMEM_RETURN_IF_ERROR(CheckExpectedRevision(options, r->prev_rev));
  if (GetMetaU64(txn, dbs, kMetaFormat, kStoreFormatVersion) < kStoreFormatVersion) {
    PutMetaU64(txn, dbs, kMetaFormat, kStoreFormatVersion);  // the log below is format 2
  }
  r->rev = r->prev_rev + 1;
  return Status::OK();
}

// What the steps of WritePiece share: the piece's operations, the transaction
// and scratch strings reused from record to record.
struct PieceWrite {
  MDB_txn* txn;
  const Dbs& dbs;
  const std::vector<Batch::Op>& ops;
  std::vector<Prep>& preps;
  const WriteOptions& options;
  uint64_t rev;
  int64_t tombstone_delta = 0;  // node and edge tombstones written minus replaced
  std::string buf, current;     // a record being encoded; a copy of the stored one
};

// Writes `next` under `key`; the version it replaces (found: cur, whose bytes
// are in w.current) goes to hist under `tag`.
template <typename Value>
void PutVersion(PieceWrite& w, AscendingWriter* writer, char tag, std::string_view key, bool found,
                const Value& cur, const Value& next) {
  if (found) Supersede(w.txn, w.dbs, tag, key, w.current, cur.rev, w.rev);
  w.buf.clear();
  next.EncodeTo(&w.buf);
  writer->Put(key, w.buf);
}

// ---- relations, in batch order; then every edge's relation ----
Status ResolveRelations(PieceWrite& w, std::vector<EdgeRef>* edges) {
  const auto& ops = w.ops;
  for (size_t i = 0; i < ops.size(); ++i) {
    if (ops[i].kind != Kind::kDefineRelation) continue;
    bool added = false;
    Status rs = DefineRelationTxn(w.txn, w.dbs, ops[i].edge().rel, &added);
    if (!rs.ok()) return OpError(i, rs);
    w.preps[i].effective = added;
  }
  // In batch order, so that the operations are read sequentially.
  edges->clear();
  std::unordered_map<std::string_view, RelationId> rel_ids;  // the batch's names
  for (size_t i = 0; i < ops.size(); ++i) {
    if (ops[i].kind != Kind::kPutEdge && ops[i].kind != Kind::kDeleteEdge) continue;
    Prep& p = w.preps[i];
    const std::string& name = ops[i].edge().rel;
    auto it = rel_ids.find(name);
    if (it == rel_ids.end()) {
      auto id = LookupRelationTxn(w.txn, w.dbs, name);
      if (!id.ok()) return OpError(i, id.status());
      it = rel_ids.emplace(name, *id).first;
    }
    p.rel = it->second;
    edges->push_back({p.id, p.dst_id, static_cast<uint32_t>(i), p.rel, false});
  }
  return Status::OK();
}

// A put of node `id` that has no node record: a removed tombstone leaves older
// versions in hist, and an edge to or from a missing node keeps its key; both
// name the key, which must be `key`.
Status CheckNewNodeKey(const PieceWrite& w, bool hist_empty, uint32_t i, uint64_t id,
                       const std::string& node_key, const std::string& key) {
  if (!hist_empty) {
    Cursor c(w.txn, w.dbs.hist);
    std::string prefix(1, kHistNode);
    prefix.append(node_key);
    if (c.SeekRange(prefix) && c.key().substr(0, prefix.size()) == prefix) {
      NodeValue old;
      AMEM_RETURN_IF_ERROR(old.DecodeFrom(c.value()).WithContext("hist node"));
      if (old.key != key) return OpError(i, Collision(key, old.key, "past ", id));
    }
  }
  std::string endpoint;
  AMEM_RETURN_IF_ERROR(AdjacentEndpointKey(w.txn, w.dbs, id, &endpoint));
  if (!endpoint.empty() && endpoint != key) {
    return OpError(i, Collision(key, endpoint, "edge endpoint ", id));
  }
  return Status::OK();
}

// ---- nodes, by id ----
Status WriteNodes(PieceWrite& w, const std::vector<NodeRef>& nodes, bool hist_empty,
                  std::vector<NodeOutcome>* outcomes) {
  const auto& ops = w.ops;
  outcomes->reserve(nodes.size());
  AscendingWriter writer(w.txn, w.dbs.n);
  for (size_t k = 0; k < nodes.size(); ++k) {
    ReadAhead(nodes, k, w.preps, ops, [](const Batch::Op& op) {
      Prefetch(op.node().key.data());
      Prefetch(op.node().content.data());
      Prefetch(op.node().vector.data());
    });
    const NodeRef& ref = nodes[k];
    Prep& p = w.preps[ref.i];
    const NodeInput& in = ops[ref.i].node();
    const std::string key = NodeKey(p.id);
    std::string_view value;
    NodeValue cur;
    bool found = !writer.Absent(key) && Get(w.txn, w.dbs.n, key, &value);
    if (found) {
      w.current.assign(value);
      AMEM_RETURN_IF_ERROR(cur.DecodeFrom(w.current).WithContext("node " + FormatHexId(p.id)));
      if (cur.key != in.key) {
        if (p.kind == Kind::kDeleteNode) continue;  // that key is not stored
        return OpError(ref.i, Collision(in.key, cur.key, "stored ", p.id));
      }
    } else if (p.kind == Kind::kPutNode) {
      AMEM_RETURN_IF_ERROR(CheckNewNodeKey(w, hist_empty, ref.i, p.id, key, in.key));
    }
    const bool live = found && !cur.tombstone;
    const Attribution attr = AttributionOf(ops[ref.i], w.options);
    NodeValue next;
    StartVersion(&next, cur, live, w.rev, p.ts, attr);
    next.scope = attr.scope;
    if (p.kind == Kind::kPutNode) {
      next.type = in.type;
      next.key = in.key;
      next.content = in.content;
      next.meta = p.canon;
      next.confidence = in.confidence;
      next.floats = &in.vector;
      if (live) p.log_flags |= kLogOverwrite;
    } else {
      if (!live) continue;
      next.tombstone = true;
      next.type = cur.type;
      next.key = cur.key;
      next.meta = "{}";
    }
    PutVersion(w, &writer, kHistNode, key, found, cur, next);
    w.tombstone_delta += int{next.tombstone} - int{found && cur.tombstone};
    p.type = next.type;
    p.effective = true;
    const NodeOutcome outcome{p.id, in.key, !next.tombstone};
    if (!outcomes->empty() && outcomes->back().id == p.id) {
      outcomes->back() = outcome;
    } else {
      outcomes->push_back(outcome);
    }
  }
  return Status::OK();
}

// The adjacency entries of the edges written fresh, into `list` (out or in, by
// the edges' current order): the new edges of one node become one MDB_MULTIPLE put.
void PutAdjacencyLists(MDB_txn* txn, MDB_dbi list, const std::vector<EdgeRef>& edges) {
  AscendingWriter writer(txn, list);
  std::string entries;
  uint64_t owner = 0;
  auto flush = [&] {
    if (!entries.empty()) writer.PutDups(NodeKey(owner), entries, kAdjEntrySize);
    entries.clear();
  };
  char entry[kAdjEntrySize];
  for (const EdgeRef& ref : edges) {
    if (!ref.fresh) continue;
    if (ref.x != owner) flush();
    owner = ref.x;
    EncodeAdjEntry(entry, ref.rel, ref.y);
    entries.append(entry, kAdjEntrySize);
  }
  flush();
}

// ---- edges by (src, rel, dst): e records, out lists, source checks ----
Status WriteEdges(PieceWrite& w, EndpointChecker* endpoints, std::vector<EdgeRef>* edge_refs) {
  const auto& ops = w.ops;
  std::vector<EdgeRef>& edges = *edge_refs;
  SortByIdPrefix(&edges, &EdgeRef::x, EdgeLess());
  {
    AscendingWriter writer(w.txn, w.dbs.e);
    for (size_t k = 0; k < edges.size(); ++k) {
      ReadAhead(edges, k, w.preps, ops, [](const Batch::Op& op) {
        Prefetch(op.edge().src.data());
        Prefetch(op.edge().dst.data());
      });
      EdgeRef& ref = edges[k];
      Prep& p = w.preps[ref.i];
      const EdgeInput& in = ops[ref.i].edge();
      const std::string key = EdgeKey(p.id, p.rel, p.dst_id);
      std::string_view value;
      EdgeValue cur;
      bool found = !writer.Absent(key) && Get(w.txn, w.dbs.e, key, &value);
      if (found) {
        w.current.assign(value);
        AMEM_RETURN_IF_ERROR(cur.DecodeFrom(w.current).WithContext("edge record"));
        if (cur.src_key != in.src || cur.dst_key != in.dst) {
          if (p.kind == Kind::kDeleteEdge) continue;
          return OpError(ref.i, Status::InvalidArgument(
                                    "id collision: edge " + Quote(in.src) + " -> " +
                                    Quote(in.dst) + " has the same ids as stored edge " +
                                    Quote(cur.src_key) + " -> " + Quote(cur.dst_key)));
        }
      }
      const bool live = found && !cur.tombstone;
      const Attribution attr = AttributionOf(ops[ref.i], w.options);
      EdgeValue next;
      StartVersion(&next, cur, live, w.rev, p.ts, attr);
      next.src_key = in.src;
      next.dst_key = in.dst;
      if (p.kind == Kind::kPutEdge) {
        next.weight = in.weight;
        next.payload = p.canon;
        if (live) p.log_flags |= kLogOverwrite;
        bool src_live = false;
        Status es = endpoints->Check(p.id, in.src, &src_live);
        if (!es.ok()) return OpError(ref.i, es);
        if (!src_live) p.log_flags |= kLogSrcMissing;
      } else {
        if (!live) continue;
        next.tombstone = true;
        next.payload = "{}";
      }
      PutVersion(w, &writer, kHistEdge, key, found, cur, next);
      w.tombstone_delta += int{next.tombstone} - int{found && cur.tombstone};
      ref.fresh = !found;
      p.effective = true;
    }
  }
  PutAdjacencyLists(w.txn, w.dbs.out, edges);
  return Status::OK();
}

// ---- in lists and destination checks, by (dst, rel, src) ----
Status CheckDestinations(PieceWrite& w, EndpointChecker* endpoints,
                         std::vector<EdgeRef>* edge_refs) {
  const auto& ops = w.ops;
  std::vector<EdgeRef>& edges = *edge_refs;
  for (EdgeRef& ref : edges) std::swap(ref.x, ref.y);
  SortByIdPrefix(&edges, &EdgeRef::x, EdgeLess());
  endpoints->Restart();
  for (size_t k = 0; k < edges.size(); ++k) {
    ReadAhead(edges, k, w.preps, ops,
              [](const Batch::Op& op) { Prefetch(op.edge().dst.data()); });
    const EdgeRef& ref = edges[k];
    Prep& p = w.preps[ref.i];
    if (p.kind != Kind::kPutEdge || !p.effective) continue;
    bool dst_live = false;
    Status es = endpoints->Check(p.dst_id, ops[ref.i].edge().dst, &dst_live);
    if (!es.ok()) return OpError(ref.i, es);
    if (!dst_live) p.log_flags |= kLogDstMissing;
  }
  PutAdjacencyLists(w.txn, w.dbs.in, edges);
  return Status::OK();
}

// ---- kv, by key ----
Status WriteKv(PieceWrite& w, const std::vector<KvRef>& kvs) {
  AscendingWriter writer(w.txn, w.dbs.kv);
  for (const KvRef& ref : kvs) {
    Prep& p = w.preps[ref.i];
    const KvInput& in = w.ops[ref.i].kv();
    std::string_view value;
    KvValue cur;
    bool found = !writer.Absent(ref.key) && Get(w.txn, w.dbs.kv, ref.key, &value);
    if (found) {
      w.current.assign(value);
      AMEM_RETURN_IF_ERROR(cur.DecodeFrom(w.current).WithContext("kv record"));
    }
    const bool live = found && !cur.tombstone;
    const Attribution attr = AttributionOf(w.ops[ref.i], w.options);
    KvValue next;
    next.rev = w.rev;
    next.ts = p.ts;
    next.run = attr.run;
    next.task = attr.task;
    if (p.kind == Kind::kPutKv) {
      next.value = in.value;
      if (live) p.log_flags |= kLogOverwrite;
    } else {
      if (!live) continue;
      next.tombstone = true;
    }
    PutVersion(w, &writer, kHistKv, ref.key, found, cur, next);
    p.effective = true;
  }
  return Status::OK();
}

// ---- this piece's change log entries, and what Finish needs ----
void AppendLogEntries(const std::vector<Batch::Op>& ops, const std::vector<Prep>& preps,
                      const WriteOptions& options, Revision* r) {
  size_t estimate = r->log.size();
  for (size_t i = 0; i < ops.size(); ++i) {
    if (!preps[i].effective) continue;
    const Batch::Op& op = ops[i];
    estimate += 32 + (op.kind == Kind::kPutNode || op.kind == Kind::kDeleteNode
                          ? op.node().key.size()
                      : op.kind == Kind::kPutKv || op.kind == Kind::kDeleteKv
                          ? preps[i].canon.size()
                          : op.edge().src.size() + op.edge().dst.size());
  }
  if (estimate > r->log.capacity()) r->log.reserve(std::max(estimate, r->log.capacity() * 3 / 2));
  LogEntry e;
  for (size_t i = 0; i < ops.size(); ++i) {
    const Prep& p = preps[i];
    if (!p.effective) continue;
    ++r->effective;
    const Attribution attr = AttributionOf(ops[i], options);
    e = LogEntry();
    e.kind = static_cast<uint8_t>(p.kind);
    e.flags = p.log_flags;
    e.run = attr.run;
    e.task = attr.task;
    switch (p.kind) {
      case Kind::kPutNode: case Kind::kDeleteNode:
        e.SetNode(ops[i].node().key);
        break;
      case Kind::kPutEdge: case Kind::kDeleteEdge:
        e.SetEdge(ops[i].edge().src, p.rel, ops[i].edge().dst);
        break;
      case Kind::kPutKv: case Kind::kDeleteKv:
        e.SetKv(ops[i].kv().scope, ops[i].kv().ns, ops[i].kv().key);
        break;
      case Kind::kDefineRelation:
        e.SetRelation(ops[i].edge().rel);
        break;
    }
    r->edges_written |= p.kind == Kind::kPutEdge;
    e.EncodeTo(&r->log, r->first ? nullptr : &r->prev);
    r->prev = e;
    r->first = false;
  }
  if (!r->first) {
    // The next piece's ops replace these: keep the last entry's strings.
    const auto fields = r->prev.Strings();
    for (size_t k = 0; k < fields.size(); ++k) {
      if (fields[k]->data() == r->prev_strings[k].data()) continue;
      r->prev_strings[k].assign(*fields[k]);
      *fields[k] = r->prev_strings[k];
    }
  }
}

Status WritePiece(const Store::Rep& rep, MDB_txn* txn, const Batch& batch, Prepared& prepared,
                  const WriteOptions& options, Revision* r) {
  const auto& ops = batch.ops();
  std::vector<Prep>& preps = prepared.preps;
  if (prepared.max_op_ts) {
    r->max_op_ts = std::max(r->max_op_ts.value_or(INT64_MIN), *prepared.max_op_ts);
  }
  for (Prep& p : preps) {
    p.effective = false;
    p.log_flags = 0;
    if (!p.has_ts) p.ts = r->record_ts;
  }
  PieceWrite w{txn, rep.dbs, ops, preps, options, r->rev, 0, {}, {}};
  MDB_stat hist_stat;
  lmdb::dbi_stat(txn, rep.dbs.hist, &hist_stat);
  const bool hist_empty = hist_stat.ms_entries == 0;
  AMEM_RETURN_IF_ERROR(ResolveRelations(w, &prepared.edges));
  std::vector<NodeOutcome> outcomes;
  AMEM_RETURN_IF_ERROR(WriteNodes(w, prepared.nodes, hist_empty, &outcomes));
  EndpointChecker endpoints(txn, rep.dbs, outcomes, r->streamed ? &r->node_live : nullptr);
  AMEM_RETURN_IF_ERROR(WriteEdges(w, &endpoints, &prepared.edges));
  AMEM_RETURN_IF_ERROR(CheckDestinations(w, &endpoints, &prepared.edges));
  AMEM_RETURN_IF_ERROR(WriteKv(w, prepared.kvs));
  // This piece's own edges were checked after its nodes were written.
  if (r->streamed && r->edges_written && !outcomes.empty()) r->recheck_edges = true;
  AppendLogEntries(ops, preps, options, r);
  if (r->streamed) {
    for (const NodeOutcome& o : outcomes) r->node_live.Set(o.id, {o.live, KeyCheck(o.key)});
  }
  r->tombstone_delta += w.tombstone_delta;
  if (rep.telemetry.enabled()) AppendTelemetry(ops, preps, options, &r->telemetry);
  return Status::OK();
}

Status StartRevision(const WriteOptions& options, Revision* r) {
  r->now = NowSeconds();
  if (options.ts) AMEM_RETURN_IF_ERROR(CheckNotFuture(*options.ts, r->now));
  AMEM_RETURN_IF_ERROR(ValidateName("run", options.run, true));
  AMEM_RETURN_IF_ERROR(ValidateName("task", options.task, true));
  AMEM_RETURN_IF_ERROR(ValidateName("scope", options.scope, true));
  r->batch_ts = options.ts;
  r->record_ts = options.ts.value_or(r->now);
  return Status::OK();
}

// Sets the missing-endpoint flags of the revision's edge entries from the final
// liveness of the nodes it wrote (an endpoint it did not write keeps its check).
Status RecheckEdgeEndpoints(const Store::Rep& rep, Revision* r) {
  std::string_view in = r->log;
  LogEntry prev, e;
  for (bool first = true; !in.empty(); first = false) {
    const size_t at = r->log.size() - in.size();
    AMEM_RETURN_IF_ERROR(e.DecodeFrom(&in, first ? nullptr : &prev));
    prev = e;
    if (e.kind != static_cast<uint8_t>(Kind::kPutEdge)) continue;
    char& flags = r->log[at + 1];  // after the kind byte
    auto set = [&](std::string_view key, uint8_t flag) {
      NodeSeen seen;
      if (!r->node_live.Find(rep.HashKey(key), &seen)) return;
      flags = static_cast<char>(seen.live ? (flags & ~flag) : (flags | flag));
    };
    set(e.src_key(), kLogSrcMissing);
    set(e.dst_key(), kLogDstMissing);
  }
  return Status::OK();
}

Status FinishRevision(const Store::Rep& rep, MDB_txn* txn, Revision* r, uint64_t* committed) {
  const Dbs& dbs = rep.dbs;
  if (r->effective == 0) {
    *committed = r->prev_rev;
    return Status::OK();
  }
  if (r->recheck_edges) AMEM_RETURN_IF_ERROR(RecheckEdgeEndpoints(rep, r));
  // A record takes its own ts, else the batch's, else the clock: never the time of
  // another write (an earlier revision's). The revision's commit time never goes
  // back, so --at stays ordered: the latest of this batch's time and the last one.
  const int64_t base_ts = r->batch_ts ? *r->batch_ts : r->max_op_ts ? *r->max_op_ts : r->now;
  const int64_t rev_ts = std::max(
      base_ts, static_cast<int64_t>(
                   GetMetaU64(txn, dbs, kMetaRevisionTs, static_cast<uint64_t>(INT64_MIN))));
  std::string header;
  PutFixed64(&header, static_cast<uint64_t>(rev_ts));
  PutVarint32(&header, static_cast<uint32_t>(r->effective));
  {
    const std::string key = RevKey(r->rev);
    MDB_val k = Val(key);
    MDB_val v{header.size() + r->log.size(), nullptr};
    int rc = ::mdb_put(txn, dbs.log, &k, &v, MDB_RESERVE);
    if (rc != MDB_SUCCESS) lmdb::error::raise("mdb_put", rc);
    char* dst = static_cast<char*>(v.mv_data);
    std::memcpy(dst, header.data(), header.size());
    std::memcpy(dst + header.size(), r->log.data(), r->log.size());
  }
  Put(txn, dbs.time, TimeKey(rev_ts, r->rev), CommitNonce(r->rev));
  AMEM_RETURN_IF_ERROR(AddTombstones(txn, dbs, r->tombstone_delta));
  PutMetaU64(txn, dbs, kMetaRevision, r->rev);
  PutMetaU64(txn, dbs, kMetaRevisionTs, static_cast<uint64_t>(rev_ts));
  *committed = r->rev;
  return Status::OK();
}

}  // namespace

Status Store::Rep::WriteHooked(const std::function<Status(const PublishFn&)>& write) {
  const std::shared_ptr<const CommitHook> hook = commit_hook;
  if (!hook || (hook->active && !hook->active())) {
    return write([](MDB_txn*, uint64_t) { return Status::OK(); });
  }
  uint64_t accepted = 0;  // the revision publish accepted in this write, if any
  bool moved_on = false, again = false;
  const PublishFn publish = [&](MDB_txn* txn, uint64_t rev) -> Status {
    if (accepted != 0) {  // the transaction was rerun (the map grew) after a publish
      again = true;
      return Status::IOError("the log accepted revision " + std::to_string(accepted) +
                             " but its local commit failed; amem sync applies it from the log");
    }
    LoggedRevision logged;
    AMEM_RETURN_IF_ERROR(ReadLoggedRevision(*this, txn, rev, &logged));
    Status s = hook->publish(logged);
    if (s.ok()) accepted = rev;
    moved_on = s.IsAborted();
    return s;
  };
  for (int attempt = 1;; ++attempt) {
    moved_on = false;
    Status s = write(publish);
    if (!moved_on) {
      if (!s.ok() && accepted != 0 && !again) {
        return s.WithContext("the log accepted revision " + std::to_string(accepted) +
                             " but its local commit failed (amem sync applies it from the log)");
      }
      return s;
    }
    if (attempt >= hook->max_attempts) {
      return Status::Aborted("other writers' revisions came first " + std::to_string(attempt) +
                             " times in a row; nothing was written (" + s.message() + ")");
    }
    AMEM_RETURN_IF_ERROR(hook->catch_up());
  }
}

void Store::SetCommitHook(std::shared_ptr<const CommitHook> hook) {
  rep_->commit_hook = std::move(hook);
}

Result<uint64_t> Store::Rep::Apply(const Batch& batch, const WriteOptions& options,
                                   size_t* effective, MDB_txn* outer) {
  *effective = 0;
  if (batch.ops().empty()) {
    uint64_t rev = 0;
    auto read = [&](MDB_txn* txn) {
      rev = GetMetaU64(txn, dbs, kMetaRevision, 0);
      return CheckExpectedRevision(options, rev);
    };
    AMEM_RETURN_IF_ERROR(outer ? read(outer) : Read(read));
    return rev;
  }
  Revision r;
  AMEM_RETURN_IF_ERROR(StartRevision(options, &r));
  Prepared prepared;
  AMEM_RETURN_IF_ERROR(Prepare(*this, batch, r.now, &prepared));
  uint64_t committed = 0;
  auto write = [&](MDB_txn* txn, const PublishFn& publish) -> Status {
    AMEM_RETURN_IF_ERROR(BeginRevision(*this, txn, options, &r));
    AMEM_RETURN_IF_ERROR(WritePiece(*this, txn, batch, prepared, options, &r));
    AMEM_RETURN_IF_ERROR(FinishRevision(*this, txn, &r, &committed));
    return r.effective > 0 ? publish(txn, committed) : Status::OK();
  };
  if (outer) {
    AMEM_RETURN_IF_ERROR(write(outer, [](MDB_txn*, uint64_t) { return Status::OK(); }));
  } else {
    AMEM_RETURN_IF_ERROR(WriteHooked([&](const PublishFn& publish) {
      return Write([&](MDB_txn* txn) { return write(txn, publish); }, /*commit=*/true,
                   DiskReserveFor(batch));
    }));
  }
  *effective = r.effective;
  if (!outer && !r.telemetry.empty()) telemetry.Write(r.telemetry);
  return committed;
}

// Bytes of the pages in the transaction's trees: LMDB's main database (dbi 1,
// which holds the named ones) and ours. Not counted: the free list, and the
// trees of duplicate lists too long for one page, which count their own pages.
static uint64_t BytesInTrees(MDB_txn* txn, const Dbs& dbs) {
  constexpr MDB_dbi kLmdbMainDbi = 1;
  uint64_t bytes = 0;
  for (MDB_dbi dbi : {kLmdbMainDbi, dbs.n, dbs.e, dbs.out, dbs.in, dbs.out_dead, dbs.in_dead, dbs.kv,
                      dbs.hist, dbs.meta, dbs.log, dbs.time}) {
    MDB_stat st;
    if (::mdb_stat(txn, dbi, &st) == MDB_SUCCESS) {
      bytes += (st.ms_branch_pages + st.ms_leaf_pages + st.ms_overflow_pages) * st.ms_psize;
    }
  }
  return bytes;
}

namespace {

// A piece prepared on a stream's thread (BatchStream::SetPieceWork).
struct PreparedPiece {
  Status status;
  Prepared prepared;
};

}  // namespace

Result<uint64_t> Store::ApplyStream(BatchStream* stream, const WriteOptions& options) {
  Revision r;
  r.streamed = true;
  AMEM_RETURN_IF_ERROR(StartRevision(options, &r));
  Batch piece;
  Prepared own;  // for pieces the stream did not prepare
  uint64_t committed = 0;
  // Validation and hashing depend only on the piece, the store's settings and the
  // revision's clock (r.now, fixed above), so a stream may do them ahead.
  const Rep& rep = *rep_;
  const int64_t now = r.now;
  stream->SetPieceWork([&rep, now](const Batch& batch) -> std::shared_ptr<void> {
    auto made = std::make_shared<PreparedPiece>();
    made->status = Prepare(rep, batch, now, &made->prepared);
    return made;
  });
  struct Unset {
    BatchStream* stream;
    ~Unset() { stream->SetPieceWork(nullptr); }
  } unset{stream};
  const Rep::PublishFn* publish = nullptr;  // set by WriteHooked before each attempt
  auto write = [&](MDB_txn* txn) -> Status {
    AMEM_RETURN_IF_ERROR(stream->Rewind());
    AMEM_RETURN_IF_ERROR(BeginRevision(*rep_, txn, options, &r));
    const uint64_t at_start = BytesInTrees(txn, rep_->dbs);
    uint64_t used_at_start = 0, map_size = 0;
    if (!EnvSize(rep_->env(), &used_at_start, &map_size)) {
      return Status::IOError("store: cannot read the environment's size");
    }
    uint64_t estimated = 0, edge_ops = 0;  // over the pieces written so far
    for (;;) {
      Result<bool> more = stream->Next(&piece);
      if (!more.ok()) return more.status();
      if (!*more) break;
      if (piece.empty()) continue;
      auto made = std::static_pointer_cast<PreparedPiece>(stream->PieceWorkResult());
      if (made) {
        AMEM_RETURN_IF_ERROR(made->status);
      } else {
        AMEM_RETURN_IF_ERROR(Prepare(*rep_, piece, r.now, &own));
      }
      Prepared& prepared = made ? made->prepared : own;
      // The disk the write may take by the end of this piece, beyond the last
      // commit's size (ReserveDisk adds that and headroom): what the trees grew
      // by; the copies of committed pages the write made, which the trees'
      // counts do not show (at most the committed size, and at most what the
      // pieces' estimates allow); large duplicate lists, whose pages are counted
      // in their own trees (64 bytes per edge operation covers them); and this
      // piece, by the estimate Apply reserves for one batch.
      const uint64_t in_trees = BytesInTrees(txn, rep_->dbs);
      const uint64_t piece_estimate = DiskReserveFor(piece);
      const uint64_t reserve = (in_trees > at_start ? in_trees - at_start : 0) +
                               std::min(estimated, used_at_start) + 64 * edge_ops + piece_estimate;
      AMEM_RETURN_IF_ERROR(ReserveDisk(rep_->shared.get(), reserve));
      estimated += piece_estimate;
      for (const Batch::Op& op : piece.ops()) edge_ops += std::holds_alternative<EdgeInput>(op.input);
      AMEM_RETURN_IF_ERROR(WritePiece(*rep_, txn, piece, prepared, options, &r));
    }
    AMEM_RETURN_IF_ERROR(FinishRevision(*rep_, txn, &r, &committed));
    return r.effective > 0 ? (*publish)(txn, committed) : Status::OK();
  };
  const uint64_t hint = std::min<uint64_t>(stream->SizeHint(), uint64_t{1} << 50);
  AMEM_RETURN_IF_ERROR(rep_->GrowMapFor(3 * hint));
  AMEM_RETURN_IF_ERROR(rep_->WriteHooked([&](const Rep::PublishFn& hooked) {
    publish = &hooked;
    return rep_->Write(write);
  }));
  if (!r.telemetry.empty()) rep_->telemetry.Write(r.telemetry);
  return committed;
}

Result<uint64_t> Store::Apply(const Batch& batch, const WriteOptions& options) {
  size_t effective = 0;
  return rep_->Apply(batch, options, &effective);
}

Result<uint64_t> Store::PutNode(NodeInput node, const WriteOptions& options) {
  Batch b;
  b.PutNode(std::move(node));
  return Apply(b, options);
}

Result<uint64_t> Store::PutEdge(EdgeInput edge, const WriteOptions& options) {
  Batch b;
  b.PutEdge(std::move(edge));
  return Apply(b, options);
}

Result<uint64_t> Store::PutKv(KvInput kv, const WriteOptions& options) {
  Batch b;
  b.PutKv(std::move(kv));
  return Apply(b, options);
}

Result<uint64_t> Store::DeleteNode(std::string_view key, const WriteOptions& options) {
  Batch b;
  b.DeleteNode(std::string(key));
  return rep_->ApplyDelete(b, options, "node '" + std::string(key) + "'");
}

Result<uint64_t> Store::DeleteEdge(std::string_view src, std::string_view rel,
                                   std::string_view dst, const WriteOptions& options) {
  Batch b;
  b.DeleteEdge(std::string(src), std::string(rel), std::string(dst));
  return rep_->ApplyDelete(b, options,
                           "edge '" + std::string(src) + "' " + std::string(rel) + " '" +
                               std::string(dst) + "'");
}

Result<uint64_t> Store::Rep::ApplyDelete(const Batch& batch, const WriteOptions& options,
                                        const std::string& what) {
  size_t effective = 0;
  auto r = Apply(batch, options, &effective);
  if (r.ok() && effective == 0) return Status::NotFound(what);
  return r;
}

}  // namespace amem
