// Query 7, resolve: what is the current version of this (docs/QUERIES.md #7).
#ifndef AMEM_QUERY_RESOLVE_H_
#define AMEM_QUERY_RESOLVE_H_

#include <cstdint>
#include <vector>

#include "query/query.h"
#include "query/render.h"

namespace amem::query {

struct ResolveOptions {
  size_t limit = 1000;  // longest chain followed
};

struct ResolveResult {
  std::vector<uint32_t> chain;  // the node first, the current version last
  std::vector<uint32_t> edges;  // edges[i]: chain[i+1] supersedes chain[i]
  // Versions that competed with the one taken, summed over the chain.
  uint64_t competing = 0;
  bool cycle = false;      // stopped because every newer version was already on the chain
  bool truncated = false;  // stopped by the limit
};

// Follows incoming `supersedes` edges (A supersedes B: A is newer) until a node
// nobody supersedes. When several versions supersede one node, the newest
// created_ts wins, then the highest dense index. REQUIRES: node < reader.node_count().
ResolveResult Resolve(const snapshot::Reader& reader, uint32_t node, const ResolveOptions& options);
Json ResolveJson(const snapshot::Reader& reader, const ResolveResult& result);

}  // namespace amem::query

#endif  // AMEM_QUERY_RESOLVE_H_
