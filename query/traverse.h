// Query 1, traverse: what is reachable from here (docs/QUERIES.md #1).
#ifndef AMEM_QUERY_TRAVERSE_H_
#define AMEM_QUERY_TRAVERSE_H_

#include <cstdint>
#include <limits>
#include <vector>

#include "query/query.h"
#include "query/render.h"

namespace amem::query {

inline constexpr uint32_t kNoEdge = std::numeric_limits<uint32_t>::max();

struct TraverseOptions {
  Direction direction = Direction::kOut;
  RelationFilter relations;  // default: all
  uint32_t depth = 5;
  // Nodes below this confidence are neither reported nor expanded (the start
  // always is).
  float min_confidence = 0.0f;
  size_t limit = 50;  // rows, the start included
};

struct TraversedNode {
  uint32_t node = 0;
  uint32_t depth = 0;
  uint32_t parent = 0;     // the node it was reached from (itself for the start)
  uint32_t edge = kNoEdge;  // the tree edge; kNoEdge for the start
  bool forward = true;     // the tree edge was followed src -> dst
};

struct TraverseResult {
  uint32_t start = 0;
  std::vector<TraversedNode> nodes;  // level order; the start first, at depth 0
  bool truncated = false;            // the limit stopped the walk
};

// Level-order BFS from `start`; within a node, neighbours in (relation, dense index)
// order. REQUIRES: start < reader.node_count().
TraverseResult Traverse(const snapshot::Reader& reader, uint32_t start,
                        const TraverseOptions& options);
Json TraverseJson(const snapshot::Reader& reader, const TraverseResult& result,
                  const TraverseOptions& options);

}  // namespace amem::query

#endif  // AMEM_QUERY_TRAVERSE_H_
