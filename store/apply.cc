// The write path: Store::Apply and the single-operation helpers.
//
// A batch is validated completely before the transaction starts; inside it the
// operations are applied grouped by keyspace and sorted by key (sequential B-tree
// inserts are several times faster than random ones). Operations on the same
// entity keep their batch order, and different entities commute, so the result
// is the same as applying the batch in order. Endpoint checks for edges look at
// the state at the end of the batch.
#include <algorithm>
#include <map>

#include "common/clock.h"
#include "common/coding.h"
#include "store/batch.h"
#include "store/store_rep.h"
#include "store/validate.h"

namespace amem {

using namespace store_internal;

namespace {

using Kind = Change::Kind;

struct Prep {
  Kind kind = Kind::kPutNode;
  uint64_t a = 0, b = 0;  // node: id. edge: src id, dst id.
  RelationId rel = 0;
  std::string canon;   // canonical meta / payload
  std::string kv_key;  // KvKey
  std::optional<int64_t> given_ts;
  int64_t ts = 0;  // given_ts, else the batch's, else the revision's
  std::string_view run, task, scope;
  // Per attempt (a map-full retry reruns the transaction).
  bool effective = false;
  bool new_edge = false;
  uint8_t log_flags = 0;
  NodeType type = NodeType::kEntity;  // for telemetry of deletes
};

Status OpError(size_t i, const Status& s) { return s.WithContext("op " + std::to_string(i)); }

std::string Quote(std::string_view s) { return "'" + std::string(s) + "'"; }

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

// Checks that a stored node under `id` (if any, live or not) has key `key`.
// *live tells whether a live node is there.
Status CheckEndpoint(MDB_txn* txn, const Dbs& dbs, uint64_t id, std::string_view key,
                     bool* live) {
  *live = false;
  std::string_view value;
  if (!Get(txn, dbs.n, NodeKey(id), &value)) return Status::OK();
  NodeValue v;
  AMEM_RETURN_IF_ERROR(v.DecodeFrom(value).WithContext("node " + FormatHexId(id)));
  if (v.key != key) {
    return Status::InvalidArgument("id collision: key " + Quote(key) + " and stored key " +
                                   Quote(v.key) + " have the same id " + FormatHexId(id));
  }
  *live = !v.tombstone;
  return Status::OK();
}

}  // namespace

Result<uint64_t> Store::Rep::Apply(const Batch& batch, const WriteOptions& options,
                                   size_t* effective) {
  *effective = 0;
  const auto& ops = batch.ops();
  if (ops.empty()) {
    uint64_t rev = 0;
    AMEM_RETURN_IF_ERROR(Read([&](MDB_txn* txn) {
      rev = GetMetaU64(txn, dbs, kMetaRevision, 0);
      return Status::OK();
    }));
    return rev;
  }
  if (options.ts.has_value() || !options.run.empty() || !options.task.empty() ||
      !options.scope.empty()) {
    AMEM_RETURN_IF_ERROR(ValidateName("run", options.run, true));
    AMEM_RETURN_IF_ERROR(ValidateName("task", options.task, true));
    AMEM_RETURN_IF_ERROR(ValidateName("scope", options.scope, true));
  }

  // ---- validation, before any transaction ----
  std::vector<Prep> preps(ops.size());
  std::optional<int64_t> max_op_ts;
  size_t node_ops = 0, edge_ops = 0, kv_ops = 0;
  for (size_t i = 0; i < ops.size(); ++i) {
    const Batch::Op& op = ops[i];
    Prep& p = preps[i];
    p.kind = op.kind;
    const std::optional<int64_t>* ts = nullptr;
    const std::optional<std::string>* run = nullptr;
    const std::optional<std::string>* task = nullptr;
    const std::optional<std::string>* scope = nullptr;
    Status s;
    switch (op.kind) {
      case Kind::kPutNode:
      case Kind::kDeleteNode: {
        const NodeInput& n = op.node();
        s = op.kind == Kind::kPutNode ? ValidateNode(n, dimension, &p.canon)
                                      : ValidateNodeKey("key", n.key);
        p.a = HashKey(n.key);
        ts = &n.ts, run = &n.run, task = &n.task, scope = &n.scope;
        ++node_ops;
        break;
      }
      case Kind::kPutEdge:
      case Kind::kDeleteEdge: {
        const EdgeInput& e = op.edge();
        if (op.kind == Kind::kPutEdge) {
          s = ValidateEdge(e, &p.canon);
        } else {
          s = ValidateNodeKey("src", e.src);
          if (s.ok()) s = ValidateNodeKey("dst", e.dst);
        }
        p.a = HashKey(e.src);
        p.b = HashKey(e.dst);
        ts = &e.ts, run = &e.run, task = &e.task;
        ++edge_ops;
        break;
      }
      case Kind::kPutKv:
      case Kind::kDeleteKv: {
        const KvInput& kv = op.kv();
        s = op.kind == Kind::kPutKv ? ValidateKv(kv) : ValidateKvName(kv);
        p.kv_key = KvKey(kv.scope, kv.ns, kv.key);
        p.scope = kv.scope;
        ts = &kv.ts, run = &kv.run, task = &kv.task;
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
    if (ts && ts->has_value()) {
      p.given_ts = **ts;
      max_op_ts = std::max(max_op_ts.value_or(INT64_MIN), **ts);
    }
    p.run = run && run->has_value() ? std::string_view(**run) : std::string_view(options.run);
    p.task = task && task->has_value() ? std::string_view(**task) : std::string_view(options.task);
    if (op.kind != Kind::kPutKv && op.kind != Kind::kDeleteKv) {
      p.scope = scope && scope->has_value() ? std::string_view(**scope)
                                            : std::string_view(options.scope);
    }
  }
  const int64_t base_ts = options.ts ? *options.ts : max_op_ts ? *max_op_ts : NowSeconds();

  // Key orders, independent of the transaction attempt.
  struct NodeRef { uint64_t id; uint32_t i; };
  struct EdgeRef { uint64_t x; RelationId rel; uint64_t y; uint32_t i; };
  struct KvRef { std::string_view key; uint32_t i; };
  std::vector<NodeRef> nodes;
  std::vector<EdgeRef> edges;
  std::vector<KvRef> kvs;
  nodes.reserve(node_ops);
  edges.reserve(edge_ops);
  kvs.reserve(kv_ops);
  for (size_t i = 0; i < ops.size(); ++i) {
    auto idx = static_cast<uint32_t>(i);
    switch (ops[i].kind) {
      case Kind::kPutNode: case Kind::kDeleteNode:
        nodes.push_back({preps[i].a, idx});
        break;
      case Kind::kPutEdge: case Kind::kDeleteEdge:
        edges.push_back({preps[i].a, 0, preps[i].b, idx});
        break;
      case Kind::kPutKv: case Kind::kDeleteKv:
        kvs.push_back({preps[i].kv_key, idx});
        break;
      case Kind::kDefineRelation:
        break;
    }
  }
  std::sort(nodes.begin(), nodes.end(), [](const NodeRef& l, const NodeRef& r) {
    return l.id != r.id ? l.id < r.id : l.i < r.i;
  });
  std::sort(kvs.begin(), kvs.end(), [](const KvRef& l, const KvRef& r) {
    return l.key != r.key ? l.key < r.key : l.i < r.i;
  });
  auto edge_less = [](const EdgeRef& l, const EdgeRef& r) {
    if (l.x != r.x) return l.x < r.x;
    if (l.rel != r.rel) return l.rel < r.rel;
    if (l.y != r.y) return l.y < r.y;
    return l.i < r.i;
  };

  uint64_t committed = 0;
  int64_t rev_ts = 0;
  Status s = Write([&](MDB_txn* txn) -> Status {
    *effective = 0;
    for (Prep& p : preps) p.effective = p.new_edge = false, p.log_flags = 0;
    const uint64_t prev_rev = GetMetaU64(txn, dbs, kMetaRevision, 0);
    const uint64_t rev = prev_rev + 1;
    rev_ts = std::max(base_ts, static_cast<int64_t>(GetMetaU64(txn, dbs, kMetaRevisionTs,
                                                               static_cast<uint64_t>(INT64_MIN))));
    for (Prep& p : preps) p.ts = p.given_ts.value_or(options.ts.value_or(rev_ts));
    std::string buf, current;

    // ---- relations, in batch order; then every edge's relation ----
    std::map<std::string, RelationId, std::less<>> rel_ids;
    for (size_t i = 0; i < ops.size(); ++i) {
      if (ops[i].kind != Kind::kDefineRelation) continue;
      bool added = false;
      Status rs = DefineRelationTxn(txn, dbs, ops[i].edge().rel, &added);
      if (!rs.ok()) return OpError(i, rs);
      preps[i].effective = added;
    }
    for (EdgeRef& ref : edges) {
      const std::string& name = ops[ref.i].edge().rel;
      auto it = rel_ids.find(name);
      if (it == rel_ids.end()) {
        auto id = LookupRelationTxn(txn, dbs, name);
        if (!id.ok()) return OpError(ref.i, id.status());
        it = rel_ids.emplace(name, *id).first;
      }
      ref.rel = preps[ref.i].rel = it->second;
    }

    // ---- nodes, by id ----
    for (const NodeRef& ref : nodes) {
      Prep& p = preps[ref.i];
      const NodeInput& in = ops[ref.i].node();
      const std::string key = NodeKey(p.a);
      std::string_view value;
      NodeValue cur;
      bool found = Get(txn, dbs.n, key, &value);
      if (found) {
        current.assign(value);
        AMEM_RETURN_IF_ERROR(cur.DecodeFrom(current).WithContext("node " + FormatHexId(p.a)));
        if (cur.key != in.key && p.kind == Kind::kPutNode) {
          return OpError(ref.i, Status::InvalidArgument(
                                    "id collision: key " + Quote(in.key) + " and stored key " +
                                    Quote(cur.key) + " have the same id " + FormatHexId(p.a)));
        }
        if (cur.key != in.key) continue;  // deleting a key that is not stored
      } else if (p.kind == Kind::kPutNode) {
        // A removed tombstone leaves older versions in hist; they name the key.
        Cursor c(txn, dbs.hist);
        std::string prefix = HistKey(kHistNode, key, 0).substr(0, 1 + kNodeKeySize);
        if (c.SeekRange(prefix) && c.key().substr(0, prefix.size()) == prefix) {
          NodeValue old;
          AMEM_RETURN_IF_ERROR(old.DecodeFrom(c.value()).WithContext("hist node"));
          if (old.key != in.key) {
            return OpError(ref.i, Status::InvalidArgument(
                                      "id collision: key " + Quote(in.key) + " and key " +
                                      Quote(old.key) + " (in history) have the same id " +
                                      FormatHexId(p.a)));
          }
        }
      }
      const bool live = found && !cur.tombstone;
      NodeValue next;
      next.rev = rev;
      next.updated_ts = p.ts;
      next.created_ts = live ? cur.created_ts : p.ts;
      next.scope = p.scope;
      next.run = p.run;
      next.task = p.task;
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
      if (found) Supersede(txn, dbs, kHistNode, key, current, cur.rev, rev);
      buf.clear();
      next.EncodeTo(&buf);
      Put(txn, dbs.n, key, buf);
      p.type = next.type;
      p.effective = true;
    }

    // ---- edges by (src, rel, dst): e records and out lists ----
    std::sort(edges.begin(), edges.end(), edge_less);
    for (const EdgeRef& ref : edges) {
      Prep& p = preps[ref.i];
      const EdgeInput& in = ops[ref.i].edge();
      const std::string key = EdgeKey(p.a, p.rel, p.b);
      std::string_view value;
      EdgeValue cur;
      bool found = Get(txn, dbs.e, key, &value);
      if (found) {
        current.assign(value);
        AMEM_RETURN_IF_ERROR(cur.DecodeFrom(current).WithContext("edge record"));
        if (cur.src_key != in.src || cur.dst_key != in.dst) {
          if (p.kind == Kind::kDeleteEdge) continue;
          return OpError(ref.i, Status::InvalidArgument(
                                    "id collision: edge " + Quote(in.src) + " -> " +
                                    Quote(in.dst) + " has the same ids as stored edge " +
                                    Quote(cur.src_key) + " -> " + Quote(cur.dst_key)));
        }
      }
      const bool live = found && !cur.tombstone;
      EdgeValue next;
      next.rev = rev;
      next.updated_ts = p.ts;
      next.created_ts = live ? cur.created_ts : p.ts;
      next.src_key = in.src;
      next.dst_key = in.dst;
      next.run = p.run;
      next.task = p.task;
      if (p.kind == Kind::kPutEdge) {
        next.weight = in.weight;
        next.payload = p.canon;
        if (live) p.log_flags |= kLogOverwrite;
        bool src_live = false;
        AMEM_RETURN_IF_ERROR(CheckEndpoint(txn, dbs, p.a, in.src, &src_live).WithContext(
            "op " + std::to_string(ref.i)));
        if (!src_live) p.log_flags |= kLogSrcMissing;
      } else {
        if (!live) continue;
        next.tombstone = true;
        next.payload = "{}";
      }
      if (found) Supersede(txn, dbs, kHistEdge, key, current, cur.rev, rev);
      buf.clear();
      next.EncodeTo(&buf);
      Put(txn, dbs.e, key, buf);
      if (!found) {
        p.new_edge = true;
        PutDup(txn, dbs.out, NodeKey(p.a), AdjEntry(p.rel, p.b));
      }
      p.effective = true;
    }

    // ---- in lists and destination checks, by (dst, rel, src) ----
    for (EdgeRef& ref : edges) std::swap(ref.x, ref.y);
    std::sort(edges.begin(), edges.end(), edge_less);
    for (EdgeRef& ref : edges) {
      Prep& p = preps[ref.i];
      if (p.new_edge) PutDup(txn, dbs.in, NodeKey(p.b), AdjEntry(p.rel, p.a));
      if (p.kind == Kind::kPutEdge && p.effective) {
        bool dst_live = false;
        AMEM_RETURN_IF_ERROR(CheckEndpoint(txn, dbs, p.b, ops[ref.i].edge().dst, &dst_live)
                                 .WithContext("op " + std::to_string(ref.i)));
        if (!dst_live) p.log_flags |= kLogDstMissing;
      }
    }
    for (EdgeRef& ref : edges) std::swap(ref.x, ref.y);

    // ---- kv, by key ----
    for (const KvRef& ref : kvs) {
      Prep& p = preps[ref.i];
      const KvInput& in = ops[ref.i].kv();
      std::string_view value;
      KvValue cur;
      bool found = Get(txn, dbs.kv, ref.key, &value);
      if (found) {
        current.assign(value);
        AMEM_RETURN_IF_ERROR(cur.DecodeFrom(current).WithContext("kv record"));
      }
      const bool live = found && !cur.tombstone;
      KvValue next;
      next.rev = rev;
      next.ts = p.ts;
      next.run = p.run;
      next.task = p.task;
      if (p.kind == Kind::kPutKv) {
        next.value = in.value;
        if (live) p.log_flags |= kLogOverwrite;
      } else {
        if (!live) continue;
        next.tombstone = true;
      }
      if (found) Supersede(txn, dbs, kHistKv, ref.key, current, cur.rev, rev);
      buf.clear();
      next.EncodeTo(&buf);
      Put(txn, dbs.kv, ref.key, buf);
      p.effective = true;
    }

    // ---- the log value, the time index and the counter ----
    for (const Prep& p : preps) *effective += p.effective ? 1 : 0;
    if (*effective == 0) {
      committed = prev_rev;
      return Status::OK();
    }
    buf.clear();
    PutFixed64(&buf, static_cast<uint64_t>(rev_ts));
    PutVarint32(&buf, static_cast<uint32_t>(*effective));
    for (size_t i = 0; i < ops.size(); ++i) {
      const Prep& p = preps[i];
      if (!p.effective) continue;
      LogEntry e;
      e.kind = static_cast<uint8_t>(p.kind);
      e.flags = p.log_flags;
      e.run = p.run;
      e.task = p.task;
      std::string rel_name;
      switch (p.kind) {
        case Kind::kPutNode: case Kind::kDeleteNode:
          e.a = ops[i].node().key;
          break;
        case Kind::kPutEdge: case Kind::kDeleteEdge: {
          auto name = RelationNameTxn(txn, dbs, p.rel);
          if (!name.ok()) return name.status();
          rel_name = std::move(name).value();
          e.a = ops[i].edge().src;
          e.b = rel_name;
          e.c = ops[i].edge().dst;
          break;
        }
        case Kind::kPutKv: case Kind::kDeleteKv:
          e.a = ops[i].kv().scope;
          e.b = ops[i].kv().ns;
          e.c = ops[i].kv().key;
          break;
        case Kind::kDefineRelation:
          e.a = ops[i].edge().rel;
          break;
      }
      e.EncodeTo(&buf);
    }
    Put(txn, dbs.log, RevKey(rev), buf);
    Put(txn, dbs.time, TimeKey(rev_ts, rev), {});
    PutMetaU64(txn, dbs, kMetaRevision, rev);
    PutMetaU64(txn, dbs, kMetaRevisionTs, static_cast<uint64_t>(rev_ts));
    committed = rev;
    return Status::OK();
  });
  AMEM_RETURN_IF_ERROR(s);

  if (telemetry.enabled() && *effective > 0) {
    std::string lines;
    for (size_t i = 0; i < ops.size(); ++i) {
      const Prep& p = preps[i];
      if (!p.effective || p.kind == Kind::kDefineRelation) continue;
      const bool del = p.kind == Kind::kDeleteNode || p.kind == Kind::kDeleteEdge ||
                       p.kind == Kind::kDeleteKv;
      const char* op = del ? "delete" : (p.log_flags & kLogOverwrite) ? "overwrite" : "write";
      uint64_t id = p.a;
      const char* type = "kv";
      if (p.kind == Kind::kPutNode || p.kind == Kind::kDeleteNode) {
        type = NodeTypeName(p.type);
      } else if (p.kind == Kind::kPutEdge || p.kind == Kind::kDeleteEdge) {
        id = Hash64(EdgeKey(p.a, p.rel, p.b));
        type = "edge";
      } else {
        id = Hash64(p.kv_key);
      }
      Telemetry::AddEvent(&lines, op, id, type, p.scope, p.run, p.task, p.ts);
    }
    telemetry.Write(lines);
  }
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
  size_t effective = 0;
  auto r = rep_->Apply(b, options, &effective);
  if (r.ok() && effective == 0) return Status::NotFound("node '" + std::string(key) + "'");
  return r;
}

Result<uint64_t> Store::DeleteEdge(std::string_view src, std::string_view rel,
                                   std::string_view dst, const WriteOptions& options) {
  Batch b;
  b.DeleteEdge(std::string(src), std::string(rel), std::string(dst));
  size_t effective = 0;
  auto r = rep_->Apply(b, options, &effective);
  if (r.ok() && effective == 0) {
    return Status::NotFound("edge '" + std::string(src) + "' " + std::string(rel) + " '" +
                            std::string(dst) + "'");
  }
  return r;
}

}  // namespace amem
