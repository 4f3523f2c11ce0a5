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

}  // namespace amem::io
