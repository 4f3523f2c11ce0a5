// Store::ReadHistory and Store::ApplyRevisions: the store's history as batches
// that re-create it, and applying such batches to another store (docs/LOG.md).
//
// The change log (STORE.md §4.5) names what each revision changed; the values are
// the versions the revision wrote, found with VersionAt as of that revision. An
// item written several times in one revision kept only its last version, which
// is enough: operations on one item in one revision are replayed with that
// version's values, and their timestamps are chosen so that the replay computes
// the same created_ts and updated_ts (see OpTimestamps).
#include <map>
#include <utility>

#include "common/coding.h"
#include "store/internal/store_rep.h"

namespace amem {

using namespace store_internal;

namespace {

using Kind = Change::Kind;

// One logged operation of the revision being read.
struct Entry {
  Kind kind = Kind::kPutNode;
  std::string key;       // node: its key; kv: its key
  std::string src, dst;  // edge: the endpoints' keys
  std::string rel;       // edge: the relation's name; relation: the name defined
  std::string scope, ns;  // kv
  std::string run, task;
  // What it names, for messages: the node key, "src -rel-> dst", "scope/ns/key".
  std::string Name() const {
    switch (kind) {
      case Kind::kPutNode: case Kind::kDeleteNode: return key;
      case Kind::kPutEdge: case Kind::kDeleteEdge: return src + " -" + rel + "-> " + dst;
      case Kind::kPutKv: case Kind::kDeleteKv: return scope + "/" + ns + "/" + key;
      case Kind::kDefineRelation: return rel;
    }
    return key;
  }
};

bool IsNodeKind(Kind k) { return k == Kind::kPutNode || k == Kind::kDeleteNode; }
bool IsEdgeKind(Kind k) { return k == Kind::kPutEdge || k == Kind::kDeleteEdge; }
bool IsKvKind(Kind k) { return k == Kind::kPutKv || k == Kind::kDeleteKv; }
bool IsPut(Kind k) { return k == Kind::kPutNode || k == Kind::kPutEdge || k == Kind::kPutKv; }

// Timestamps for the operations `ops` (entry positions, in order) of one revision
// on one node or edge whose version at the revision has `created` and `updated`:
// the last operation sets updated_ts; the put that created the item in this
// revision (the first operation, or the last put after a delete) sets created_ts
// unless it is also the last. When the item was live before and never deleted,
// created_ts is kept from before whatever the puts say.
std::vector<int64_t> OpTimestamps(const std::vector<Entry>& entries,
                                  const std::vector<size_t>& ops, int64_t created,
                                  int64_t updated) {
  std::vector<int64_t> ts(ops.size(), updated);
  size_t creator = 0;
  for (size_t k = 1; k < ops.size(); ++k) {
    if (IsPut(entries[ops[k]].kind) && !IsPut(entries[ops[k - 1]].kind)) creator = k;
  }
  if (creator + 1 < ops.size() && IsPut(entries[ops[creator]].kind)) ts[creator] = created;
  return ts;
}

// The entries of one log value, relation names resolved (kv: rel is the ns).
Status ReadEntries(MDB_txn* txn, const Dbs& dbs, uint64_t rev, std::string_view value,
                   int64_t* ts, std::vector<std::string>* names, std::vector<Entry>* entries) {
  entries->clear();
  return DecodeLogValue(txn, dbs, rev, value, ts, names,
                        [&](const LogEntry& e, const std::string& rel_name) {
                          Entry out;
                          out.kind = static_cast<Kind>(e.kind);
                          switch (out.kind) {
                            case Kind::kPutNode: case Kind::kDeleteNode:
                              out.key = e.node_key();
                              break;
                            case Kind::kPutEdge: case Kind::kDeleteEdge:
                              out.src = e.src_key();
                              out.rel = rel_name;
                              out.dst = e.dst_key();
                              break;
                            case Kind::kPutKv: case Kind::kDeleteKv:
                              out.scope = e.kv_scope();
                              out.ns = e.kv_ns();
                              out.key = e.kv_key();
                              break;
                            case Kind::kDefineRelation:
                              out.rel = e.relation_name();
                              break;
                          }
                          out.run = e.run;
                          out.task = e.task;
                          entries->push_back(std::move(out));
                          return Status::OK();
                        });
}

// Operations by item: main database and entity key -> entry positions.
using Items = std::map<std::pair<MDB_dbi, std::string>, std::vector<size_t>>;

Status GroupByItem(const Store::Rep& rep, MDB_txn* txn, const std::vector<Entry>& entries,
                   const std::string& where, Items* items) {
  const Dbs& dbs = rep.dbs;
  for (size_t i = 0; i < entries.size(); ++i) {
    const Entry& e = entries[i];
    if (IsNodeKind(e.kind)) {
      (*items)[{dbs.n, NodeKey(rep.HashKey(e.key))}].push_back(i);
    } else if (IsEdgeKind(e.kind)) {
      auto rel = LookupRelationTxn(txn, dbs, e.rel);
      if (!rel.ok()) return rel.status().WithContext(where);
      (*items)[{dbs.e, EdgeKey(rep.HashKey(e.src), *rel, rep.HashKey(e.dst))}].push_back(i);
    } else if (IsKvKind(e.kind)) {
      (*items)[{dbs.kv, KvKey(e.scope, e.ns, e.key)}].push_back(i);
    }
  }
  return Status::OK();
}

// The operations of one item (entry positions, in order) as batch operations.
// `have`: `value` is the version the revision wrote; else (a tombstone removed
// by compaction) only what the log says, at the commit time `commit_ts`.
struct ItemOps {
  const std::vector<Entry>& entries;
  const std::vector<size_t>& positions;
  std::string_view value;
  bool have;
  int64_t commit_ts;
  const std::string& where;
};

Status NodeOps(const ItemOps& item, std::vector<Batch::Op>* ops) {
  NodeValue v;
  if (item.have) AMEM_RETURN_IF_ERROR(v.DecodeFrom(item.value).WithContext(item.where));
  const NodeRecord r = item.have ? ToNodeRecord(0, v) : NodeRecord{};
  auto ts = item.have ? OpTimestamps(item.entries, item.positions, r.created_ts, r.updated_ts)
                      : std::vector<int64_t>(item.positions.size(), item.commit_ts);
  for (size_t k = 0; k < item.positions.size(); ++k) {
    const Entry& e = item.entries[item.positions[k]];
    NodeInput n;
    n.key = e.key;
    n.type = r.type;
    if (!r.key.empty() && e.kind == Kind::kPutNode) {
      n.content = r.content;
      n.meta = r.meta;
      n.confidence = r.confidence;
      n.vector = r.vector;
    }
    n.ts = ts[k];
    n.run = e.run;
    n.task = e.task;
    n.scope = r.scope;
    (*ops)[item.positions[k]] = Batch::Op{e.kind, std::move(n)};
  }
  return Status::OK();
}

Status EdgeOps(const ItemOps& item, std::vector<Batch::Op>* ops) {
  EdgeValue v;
  if (item.have) AMEM_RETURN_IF_ERROR(v.DecodeFrom(item.value).WithContext(item.where));
  auto ts = item.have ? OpTimestamps(item.entries, item.positions, v.created_ts, v.updated_ts)
                      : std::vector<int64_t>(item.positions.size(), item.commit_ts);
  for (size_t k = 0; k < item.positions.size(); ++k) {
    const Entry& e = item.entries[item.positions[k]];
    EdgeInput edge;
    edge.src = e.src;
    edge.rel = e.rel;
    edge.dst = e.dst;
    if (item.have && e.kind == Kind::kPutEdge) {
      edge.weight = v.weight;
      edge.payload = v.payload;
    }
    edge.ts = ts[k];
    edge.run = e.run;
    edge.task = e.task;
    (*ops)[item.positions[k]] = Batch::Op{e.kind, std::move(edge)};
  }
  return Status::OK();
}

Status KvOps(const ItemOps& item, std::vector<Batch::Op>* ops) {
  KvValue v;
  if (item.have) AMEM_RETURN_IF_ERROR(v.DecodeFrom(item.value).WithContext(item.where));
  for (size_t position : item.positions) {
    const Entry& e = item.entries[position];
    KvInput kv;
    kv.scope = e.scope;
    kv.ns = e.ns;
    kv.key = e.key;
    if (item.have && e.kind == Kind::kPutKv) kv.value = v.value;
    kv.ts = item.have ? v.ts : item.commit_ts;
    kv.run = e.run;
    kv.task = e.task;
    (*ops)[position] = Batch::Op{e.kind, std::move(kv)};
  }
  return Status::OK();
}

// Each operation as a batch operation, its values from the item's version.
// REQUIRES: ops->size() == entries.size().
Status RebuildOps(MDB_txn* txn, const Dbs& dbs, const std::vector<Entry>& entries,
                  const Items& items, uint64_t rev, int64_t commit_ts, const std::string& where,
                  std::vector<Batch::Op>* ops) {
  const At at{rev, false};
  for (size_t i = 0; i < entries.size(); ++i) {
    if (entries[i].kind != Kind::kDefineRelation) continue;
    EdgeInput rel;
    rel.rel = entries[i].rel;
    rel.run = entries[i].run;
    rel.task = entries[i].task;
    (*ops)[i] = Batch::Op{Kind::kDefineRelation, std::move(rel)};
  }
  for (const auto& [key, positions] : items) {
    const auto& [main, entity] = key;
    const char tag = main == dbs.n ? kHistNode : main == dbs.e ? kHistEdge : kHistKv;
    std::string_view value;
    bool found = false;
    AMEM_RETURN_IF_ERROR(VersionAt(txn, dbs, main, tag, entity, at, &value, &found));
    uint64_t version_rev = 0;
    bool tombstone = false;
    if (found && !PeekRev(value, &version_rev, &tombstone)) {
      return Status::Corruption(where + ": record header");
    }
    // A tombstone may have been removed by compaction: a delete then keeps
    // only what the log says (its run and task), at the commit time.
    const bool have = found && version_rev == rev;
    if (!have && IsPut(entries[positions.back()].kind)) {
      return Status::Corruption(where + ": the version written by " +
                                ChangeKindName(entries[positions.back()].kind) + " " +
                                entries[positions.back()].Name() + " is missing");
    }
    const ItemOps item{entries, positions, value, have, commit_ts, where};
    if (main == dbs.n) {
      AMEM_RETURN_IF_ERROR(NodeOps(item, ops));
    } else if (main == dbs.e) {
      AMEM_RETURN_IF_ERROR(EdgeOps(item, ops));
    } else {
      AMEM_RETURN_IF_ERROR(KvOps(item, ops));
    }
  }
  return Status::OK();
}

void AddToBatch(std::vector<Batch::Op>* ops, Batch* batch) {
  for (Batch::Op& op : *ops) {
    switch (op.kind) {
      case Kind::kPutNode: batch->PutNode(std::move(std::get<NodeInput>(op.input))); break;
      case Kind::kDeleteNode:
        batch->DeleteNode(std::move(std::get<NodeInput>(op.input)));
        break;
      case Kind::kPutEdge: batch->PutEdge(std::move(std::get<EdgeInput>(op.input))); break;
      case Kind::kDeleteEdge:
        batch->DeleteEdge(std::move(std::get<EdgeInput>(op.input)));
        break;
      case Kind::kPutKv: batch->PutKv(std::move(std::get<KvInput>(op.input))); break;
      case Kind::kDeleteKv: batch->DeleteKv(std::move(std::get<KvInput>(op.input))); break;
      case Kind::kDefineRelation:
        batch->DefineRelation(std::move(std::get<EdgeInput>(op.input)));
        break;
    }
  }
}

// The revision out->rev as its batch, from its change-log value.
Status RebuildRevision(const Store::Rep& rep, MDB_txn* txn, std::string_view value,
                       std::vector<std::string>* rel_names, std::vector<Entry>* entries,
                       LoggedRevision* out) {
  const Dbs& dbs = rep.dbs;
  AMEM_RETURN_IF_ERROR(ReadEntries(txn, dbs, out->rev, value, &out->ts, rel_names, entries));
  const std::string where = "revision " + std::to_string(out->rev);
  Items items;
  AMEM_RETURN_IF_ERROR(GroupByItem(rep, txn, *entries, where, &items));
  std::vector<Batch::Op> ops(entries->size());
  AMEM_RETURN_IF_ERROR(RebuildOps(txn, dbs, *entries, items, out->rev, out->ts, where, &ops));
  AddToBatch(&ops, &out->batch);
  return Status::OK();
}

}  // namespace

Status Store::ReadHistory(uint64_t since, uint64_t until,
                          const std::function<Status(const LoggedRevision&)>& fn) const {
  const Rep& rep = *rep_;
  const Dbs& dbs = rep.dbs;
  return rep.Read([&](MDB_txn* txn) -> Status {
    const uint64_t floor = GetMetaU64(txn, dbs, kMetaFloor, 0);
    const uint64_t base = GetMetaU64(txn, dbs, kMetaBase, 0);
    const uint64_t first = base > 0 && base == floor ? base + 1 : floor;
    AMEM_RETURN_IF_ERROR(CheckHistorySince(
        txn, dbs, since,
        "the log can start at revision " + std::to_string(first) + " (--since-rev " +
            std::to_string(first > 0 ? first - 1 : 0) + ")"));
    std::vector<Entry> entries;
    std::vector<std::string> rel_names;
    Cursor c(txn, dbs.log);
    for (bool ok = c.SeekRange(RevKey(since + 1)); ok; ok = c.Next()) {
      if (c.key().size() != 8) return Status::Corruption("log key");
      LoggedRevision out;
      out.rev = DecodeBig64(c.key().data());
      if (until != 0 && out.rev > until) break;
      AMEM_RETURN_IF_ERROR(RebuildRevision(rep, txn, c.value(), &rel_names, &entries, &out));
      AMEM_RETURN_IF_ERROR(fn(out));
    }
    return Status::OK();
  });
}

Status store_internal::ReadLoggedRevision(const Store::Rep& rep, MDB_txn* txn, uint64_t rev,
                                          LoggedRevision* out) {
  std::string_view value;
  if (!Get(txn, rep.dbs.log, RevKey(rev), &value)) {
    return Status::NotFound("revision " + std::to_string(rev) + " is not in the change log");
  }
  std::vector<Entry> entries;
  std::vector<std::string> rel_names;
  *out = LoggedRevision{};
  out->rev = rev;
  return RebuildRevision(rep, txn, value, &rel_names, &entries, out);
}


Result<uint64_t> Store::ApplyRevisions(
    const std::vector<LoggedRevision>& revisions,
    const std::function<Status(const LoggedRevision&)>& publish) {
  Rep& rep = *rep_;
  const Dbs& dbs = rep.dbs;
  uint64_t last = 0;
  // The last revision publish accepted: a transaction rerun (the map grew) writes
  // the same revisions again, and those are not handed over twice.
  uint64_t published = 0;
  uint64_t reserve = 0;  // the disk every revision may take (ReserveDisk)
  for (const LoggedRevision& r : revisions) reserve += store_internal::DiskReserveFor(r.batch);
  AMEM_RETURN_IF_ERROR(rep.Write([&](MDB_txn* txn) -> Status {
    last = GetMetaU64(txn, dbs, kMetaRevision, 0);
    for (const LoggedRevision& r : revisions) {
      const std::string where = "revision " + std::to_string(r.rev);
      if (r.rev != last + 1) {
        return Status::InvalidArgument(where + ": does not continue the store, which is at " +
                                       "revision " + std::to_string(last) + " (replay a log " +
                                       "into the store it continues, or a whole log into a " +
                                       "fresh store)");
      }
      if (r.batch.empty()) return Status::InvalidArgument(where + ": no operations");
      const auto last_ts =
          static_cast<int64_t>(GetMetaU64(txn, dbs, kMetaRevisionTs, static_cast<uint64_t>(0)));
      if (last > 0 && r.ts < last_ts) {
        return Status::InvalidArgument(where + ": commit time " + std::to_string(r.ts) +
                                       " is before revision " + std::to_string(last) + "'s (" +
                                       std::to_string(last_ts) + ")");
      }
      WriteOptions options;
      options.ts = r.ts;
      size_t effective = 0;
      auto rev = rep.Apply(r.batch, options, &effective, txn);
      if (!rev.ok()) return rev.status().WithContext(where);
      if (effective != r.batch.size()) {
        return Status::InvalidArgument(
            where + ": " + std::to_string(r.batch.size() - effective) + " of its " +
            std::to_string(r.batch.size()) + " operations change nothing (a delete of " +
            "something absent, or a relation already defined), so it cannot be the " +
            "revision that was logged");
      }
      last = *rev;
      if (publish && last > published) {
        LoggedRevision logged;
        AMEM_RETURN_IF_ERROR(ReadLoggedRevision(rep, txn, last, &logged));
        AMEM_RETURN_IF_ERROR(publish(logged));
        published = last;
      }
    }
    return Status::OK();
  }, /*commit=*/true, reserve));
  return last;
}

Result<uint64_t> Store::ImportBase(const std::vector<Batch>& batches, uint64_t rev, int64_t ts) {
  Rep& rep = *rep_;
  const Dbs& dbs = rep.dbs;
  if (rev == 0) return Status::InvalidArgument("an imported store's revision is at least 1");
  uint64_t reserve = 0;
  for (const Batch& b : batches) reserve += store_internal::DiskReserveFor(b);
  AMEM_RETURN_IF_ERROR(rep.Write([&](MDB_txn* txn) -> Status {
    const uint64_t latest = GetMetaU64(txn, dbs, kMetaRevision, 0);
    if (latest != 0) {
      return Status::InvalidArgument("import needs an empty store; this one is at revision " +
                                     std::to_string(latest));
    }
    WriteOptions options;
    options.ts = ts;
    // Each batch is written as revision `rev` (the store's revision set to the one
    // before it first), so a record written twice keeps one version, with the
    // first write's created_ts; the log value and meta are then the base's.
    for (const Batch& batch : batches) {
      PutMetaU64(txn, dbs, kMetaRevision, rev - 1);
      size_t effective = 0;
      auto applied = rep.Apply(batch, options, &effective, txn);
      if (!applied.ok()) return applied.status();
    }
    std::string header;  // LogValue (§4.5): the commit time and no entries
    PutFixed64(&header, static_cast<uint64_t>(ts));
    PutVarint32(&header, 0);
    Put(txn, dbs.log, RevKey(rev), header);
    Put(txn, dbs.time, TimeKey(ts, rev), CommitNonce(rev));
    PutMetaU64(txn, dbs, kMetaRevision, rev);
    PutMetaU64(txn, dbs, kMetaRevisionTs, static_cast<uint64_t>(ts));
    PutMetaU64(txn, dbs, kMetaFloor, rev);
    PutMetaU64(txn, dbs, kMetaBase, rev);
    return Status::OK();
  }, /*commit=*/true, reserve));
  return rev;
}

Result<StoreBase> Store::Base() const {
  StoreBase base;
  AMEM_RETURN_IF_ERROR(rep_->Read([&](MDB_txn* txn) -> Status {
    base.rev = GetMetaU64(txn, rep_->dbs, kMetaBase, 0);
    if (base.rev == 0) return Status::OK();
    std::string_view log;
    if (!Get(txn, rep_->dbs.log, RevKey(base.rev), &log)) return Status::OK();  // compacted
    if (log.size() < 8) return Status::Corruption("log value of revision " + std::to_string(base.rev));
    base.ts = static_cast<int64_t>(DecodeFixed64(log.data()));
    return Status::OK();
  }));
  return base;
}

}  // namespace amem
