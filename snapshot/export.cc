#include "snapshot/export.h"

#include <algorithm>
#include <climits>
#include <optional>
#include <vector>

#include "common/progress.h"
#include "snapshot/reader.h"

namespace amem::snapshot {

Result<ExportResult> ExportSnapshot(const Store& store, const std::string& path,
                                    const ExportOptions& options) {
  Progress progress(options.progress);
  progress.Stage("reading the store");
  ExportResult out;
  // The writer reads the records in place, as views into the store's read
  // transaction, which stays open until the file is written. Streamed into the
  // temp file: the ~100 MB file is never assembled in memory.
  // The edges as refs into the store's pages, decoded as the writer reads
  // them: an EdgeView each would be 480 MB at 3M edges.
  Store::VisitOptions visit;
  visit.edge_refs = true;
  AMEM_RETURN_IF_ERROR(store.VisitState(options.view, visit, [&](StoreStateView& state) {
    progress.Stage("writing " + std::to_string(state.nodes.size()) + " nodes, " +
                   std::to_string(state.edge_refs.size()) + " edges to " + path);
    SnapshotSummary written;
    AMEM_RETURN_IF_ERROR(WriteFileAtomic(path, [&](ByteSink* sink) -> Status {
      // The writer frees the node and edge vectors once it has what it needs.
      Result<SnapshotSummary> summary = WriteSnapshot(std::move(state), options.writer, sink);
      if (!summary.ok()) return summary.status();
      written = *summary;
      return Status::OK();
    }));
    out = ExportResult();
    out.revision = state.revision;
    out.revision_ts = state.revision_ts;
    out.nodes = written.nodes;
    out.edges = written.edges;
    out.stubs = written.stubs;
    out.kv = static_cast<uint32_t>(state.kv.size());
    out.bytes = written.bytes;
    return Status::OK();
  }));
  return out;
}

namespace {

NodeInput NodeFromSnapshot(const Reader& r, uint32_t i, int64_t ts) {
  NodeInput n;
  n.key = std::string(r.key(i));
  n.type = r.type(i);
  n.content = std::string(r.content(i));
  n.meta = std::string(r.meta(i));
  n.confidence = r.confidence(i);
  if (const float* v = r.vector(i)) n.vector.assign(v, v + r.dimension());
  n.ts = ts;
  n.run = std::string(r.run(i));
  n.task = std::string(r.task(i));
  n.scope = std::string(r.scope(i));
  return n;
}

EdgeInput EdgeFromSnapshot(const Reader& r, uint32_t j, int64_t ts) {
  EdgeInput e;
  e.src = std::string(r.key(r.edge_source(j)));
  e.rel = std::string(r.relation_name(r.edge_rel(j)));
  e.dst = std::string(r.key(r.edge_target(j)));
  e.weight = r.edge_weight(j);
  e.payload = std::string(r.edge_payload(j));
  e.ts = ts;
  e.run = std::string(r.edge_run(j));
  e.task = std::string(r.edge_task(j));
  return e;
}

}  // namespace

Result<ImportResult> ImportSnapshot(const std::string& path, Store* store,
                                   const ImportOptions& options) {
  ReadOptions ro;
  ro.verify_checksum = true;
  auto opened = Reader::Open(path, ro);
  if (!opened.ok()) return opened.status();
  const Reader& r = **opened;
  if (!r.has_extensions()) {
    return Status::NotSupported(path + ": a seed-spec file without keys cannot be imported");
  }
  AMEM_ASSIGN_OR_RETURN(before, store->revision());
  if (before != 0) return Status::InvalidArgument("import needs an empty store");
  if (store->dimension() != r.dimension()) {
    return Status::InvalidArgument("store dimension " + std::to_string(store->dimension()) +
                                   " differs from the file's " + std::to_string(r.dimension()));
  }
  ImportResult out;
  Batch first, second;
  // Custom relations in id order, so the store hands out the same ids.
  for (RelationId rel : r.relations()) {
    if (rel >= kFirstCustomRelation) first.DefineRelation(std::string(r.relation_name(rel)));
  }
  for (uint32_t i = 0; i < r.node_count(); ++i) {
    if (r.is_stub(i)) continue;
    first.PutNode(NodeFromSnapshot(r, i, r.created_ts(i)));
    if (r.updated_ts(i) != r.created_ts(i)) second.PutNode(NodeFromSnapshot(r, i, r.updated_ts(i)));
    ++out.nodes;
  }
  for (uint32_t j = 0; j < r.edge_count(); ++j) {
    first.PutEdge(EdgeFromSnapshot(r, j, r.edge_created_ts(j)));
    if (r.edge_updated_ts(j) != r.edge_created_ts(j)) {
      second.PutEdge(EdgeFromSnapshot(r, j, r.edge_updated_ts(j)));
    }
    ++out.edges;
  }
  for (uint32_t k = 0; k < r.kv_count(); ++k) {
    KvEntry e = r.kv(k);
    KvInput kv;
    kv.scope = std::string(e.scope);
    kv.ns = std::string(e.ns);
    kv.key = std::string(e.key);
    kv.value = std::string(e.value);
    kv.ts = e.ts;
    kv.run = std::string(e.run);
    kv.task = std::string(e.task);
    first.PutKv(std::move(kv));
    ++out.kv;
  }
  int64_t newest = INT64_MIN;
  for (const Batch* b : {&first, &second}) {
    for (const Batch::Op& op : b->ops()) {
      if (op.kind == Batch::Op::Kind::kPutNode && op.node().ts) newest = std::max(newest, *op.node().ts);
      if (op.kind == Batch::Op::Kind::kPutEdge && op.edge().ts) newest = std::max(newest, *op.edge().ts);
      if (op.kind == Batch::Op::Kind::kPutKv && op.kv().ts) newest = std::max(newest, *op.kv().ts);
    }
  }
  // Never the clock: two imports of one file give one store state. A file with no
  // timestamped record (an empty state) has the Info block's newest_ts, 0.
  const int64_t ts = options.revision_ts ? *options.revision_ts
                     : newest != INT64_MIN ? newest
                                           : r.newest_timestamp();
  std::vector<Batch> batches;
  batches.push_back(std::move(first));
  if (!second.empty()) batches.push_back(std::move(second));
  Result<uint64_t> rev = store->ImportBase(batches, options.revision, ts);
  if (!rev.ok()) return rev.status();
  out.revision = *rev;
  return out;
}

}  // namespace amem::snapshot
