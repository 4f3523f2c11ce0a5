// traverse (docs/QUERIES.md #1). Choices where docs/QUERIES.md is silent:
// - The start node is the first row (depth 0, no tree edge) and counts toward limit.
// - --min-confidence prunes: a neighbour below it is not visited, so nothing is
//   reached through it.
// - --direction both follows each edge either way; the tree edge keeps the stored
//   direction and says which way it was followed ("forward").
#include "query/traverse.h"

#include "query/internal/neighbors.h"
#include "query/internal/scratch.h"
#include "snapshot/reader.h"

namespace amem::query {

TraverseResult Traverse(const snapshot::Reader& reader, uint32_t start,
                        const TraverseOptions& options) {
  assert(start < reader.node_count());
  TraverseResult result;
  result.start = start;
  if (options.limit == 0) {
    result.truncated = true;
    return result;
  }
  NodeMap<uint8_t>& seen = ThreadScratch<uint8_t, kScratchA>();
  seen.Reset(reader.node_count());
  seen.Set(start, 1);
  result.nodes.push_back({start, 0, start, kNoEdge, true});
  // result.nodes doubles as the BFS queue: rows [head, size) wait for expansion.
  for (size_t head = 0; head < result.nodes.size() && !result.truncated; ++head) {
    const TraversedNode cur = result.nodes[head];
    if (cur.depth >= options.depth) break;  // level order: all later rows are as deep
    ForEachNeighbor(reader, cur.node, options.direction, options.relations,
                    [&](uint32_t other, uint32_t edge, bool forward) {
                      if (result.truncated || seen.Has(other)) return;
                      if (reader.confidence(other) < options.min_confidence) return;
                      if (result.nodes.size() >= options.limit) {
                        result.truncated = true;
                        return;
                      }
                      seen.Set(other, 1);
                      result.nodes.push_back({other, cur.depth + 1, cur.node, edge, forward});
                    });
  }
  return result;
}

}  // namespace amem::query
