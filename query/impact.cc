// impact (docs/QUERIES.md #4). Choices where docs/QUERIES.md is silent: the root is not
// counted even when a cycle leads back to it; each dependent is reported once, at
// its smallest depth, with the first edge (in BFS order) that reached it.
#include "query/impact.h"

#include "query/internal/scratch.h"

namespace amem::query {

ImpactResult Impact(const snapshot::Reader& reader, uint32_t root, const ImpactOptions& options) {
  assert(root < reader.node_count());
  ImpactResult result;
  result.root = root;
  NodeMap<uint8_t>& seen = ThreadScratch<uint8_t, kScratchA>();
  seen.Reset(reader.node_count());
  seen.Set(root, 1);
  // All reached nodes are kept for the walk itself; only `limit` become rows.
  std::vector<ImpactedNode> queue;
  queue.push_back({root, 0, 0});
  for (size_t head = 0; head < queue.size(); ++head) {
    const ImpactedNode cur = queue[head];
    if (cur.depth >= options.depth) break;
    ForEachDependent(reader, cur.node, [&](uint32_t dep, uint32_t edge) {
      if (!seen.Insert(dep, 1)) return;
      queue.push_back({dep, cur.depth + 1, edge});
      ++result.reached;
      if (reader.type(dep) == NodeType::kDecision) ++result.decisions;
      if (reader.type(dep) == NodeType::kInference) ++result.inferences;
    });
  }
  size_t rows = std::min<size_t>(queue.size() - 1, options.limit);
  result.nodes.assign(queue.begin() + 1, queue.begin() + 1 + rows);
  result.truncated = rows < queue.size() - 1;
  return result;
}

}  // namespace amem::query
