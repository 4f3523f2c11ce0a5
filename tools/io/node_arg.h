// Nodes as both front ends name and delete them: `amem put-edge SRC DST`, `amem
// del-node NODE`, and the MCP tools' "node", "src", "dst", "from", "to" accept a
// node's key or its 16-hex-digit id; `del-node --with-edges` and MCP delete_memory
// delete the same edges with the node.
#ifndef AMEM_TOOLS_IO_NODE_ARG_H_
#define AMEM_TOOLS_IO_NODE_ARG_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "store/store.h"

namespace amem::io {

// The key of the node named by `arg` (a key or a 16-hex-digit id) as of `view`.
// An argument that names no node is returned as a key: edges may point at nodes that
// do not exist yet.
std::string NodeKeyForArg(const Store& store, std::string_view arg,
                          const ReadView& view = {});

// Every live edge touching the node `key` as of `view`: its outgoing edges, then
// its incoming ones, a self-loop once. The store's read errors.
Result<std::vector<EdgeRecord>> EdgesTouching(const Store& store, const std::string& key,
                                              const ReadView& view);

// The node's delete and a delete of every live edge touching it, as of the
// latest revision R, written with expected_revision R (read again when
// another writer committed in between, so no edge linked meanwhile is left).
// *edges: how many edges it deleted.
Result<uint64_t> DeleteNodeAndEdges(Store* store, const std::string& key, WriteOptions options,
                                    size_t* edges);

}  // namespace amem::io

#endif  // AMEM_TOOLS_IO_NODE_ARG_H_
