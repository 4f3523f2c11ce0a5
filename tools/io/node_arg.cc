#include "tools/io/node_arg.h"

#include <cstdint>

#include "common/hash.h"

namespace amem::io {

std::string NodeKeyForArg(const Store& store, std::string_view arg, const ReadView& view) {
  uint64_t id = 0;
  if (!ParseHexId(arg, &id)) return std::string(arg);
  Result<NodeRecord> node = store.ResolveNode(arg, view);
  return node.ok() ? node->key : std::string(arg);
}

Result<std::vector<EdgeRecord>> EdgesTouching(const Store& store, const std::string& key,
                                              const ReadView& view) {
  Result<std::vector<EdgeRecord>> out = store.Out(key, {}, view);
  if (!out.ok()) return out.status();
  Result<std::vector<EdgeRecord>> in = store.In(key, {}, view);
  if (!in.ok()) return in.status();
  for (EdgeRecord& e : *in) {
    if (e.src_key != e.dst_key) out->push_back(std::move(e));  // a self-loop is listed already
  }
  return out;
}

Result<uint64_t> DeleteNodeAndEdges(Store* store, const std::string& key, WriteOptions options,
                                    size_t* edges) {
  constexpr int kAttempts = 32;
  Status last;
  for (int attempt = 0; attempt < kAttempts; ++attempt) {
    Result<uint64_t> at = store->revision();
    if (!at.ok()) return at.status();
    const ReadView view = ReadView::AtRevision(*at);
    Result<NodeRecord> node = store->GetNode(key, view);
    if (!node.ok()) return node.status();
    Result<std::vector<EdgeRecord>> touching = io::EdgesTouching(*store, key, view);
    if (!touching.ok()) return touching.status();
    Batch batch;
    for (const EdgeRecord& e : *touching) batch.DeleteEdge(e.src_key, e.rel_name, e.dst_key);
    *edges = touching->size();
    batch.DeleteNode(key);
    options.expected_revision = *at;
    Result<uint64_t> rev = store->Apply(batch, options);
    if (rev.ok() || !rev.status().IsAborted()) return rev;
    last = rev.status();
  }
  return last;
}

}  // namespace amem::io
