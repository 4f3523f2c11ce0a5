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

}  // namespace amem::io
