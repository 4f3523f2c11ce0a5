// Query 11, path: how are these two connected (docs/QUERIES.md #11).
#ifndef AMEM_QUERY_PATH_H_
#define AMEM_QUERY_PATH_H_

#include <cstddef>
#include <cstdint>
#include <vector>

#include "query/query.h"
#include "query/render.h"

namespace amem::query {

struct PathOptions {
  enum class Cost : uint8_t { kWeight, kNegLog };
  Direction direction = Direction::kBoth;
  RelationFilter relations;
  uint32_t max_depth = 20;  // hops; unweighted search only
  bool weighted = false;
  Cost cost = Cost::kWeight;  // weighted only
};

struct PathResult {
  bool found = false;
  std::vector<uint32_t> nodes;  // from the source to the target
  std::vector<uint32_t> edges;  // edges[i] joins nodes[i] and nodes[i+1]
  uint32_t hops = 0;            // edges on the whole path, kept if nodes/edges are cut
  double cost = 0;              // hops (unweighted) or the summed edge costs
  uint64_t visited = 0;         // nodes labelled by both searches (work done)
};

// Unweighted: bidirectional BFS expanding one whole level of the smaller frontier at
// a time; guaranteed shortest within max_depth hops. Weighted: bidirectional
// Dijkstra; cost = weight, or -ln(weight) with kNegLog (the most reliable chain).
// An edge whose cost would be negative or undefined (weight < 0 or NaN; with
// kNegLog weight <= 0) is not used; with kNegLog a weight above 1 costs 0.
// Ties between equally short paths are broken by the (relation, dense index)
// neighbour order, so the answer is deterministic.
// REQUIRES: source, target < reader.node_count().
PathResult FindPath(const snapshot::Reader& reader, uint32_t source, uint32_t target,
                    const PathOptions& options);
Json PathJson(const snapshot::Reader& reader, const PathResult& result,
              const PathOptions& options);

// The path document of `result` cut to at most `limit` nodes (0: all), with
// "truncated" saying whether it was cut.
Json PathAnswer(const snapshot::Reader& reader, PathResult result,
                const PathOptions& options, size_t limit);

}  // namespace amem::query

#endif  // AMEM_QUERY_PATH_H_
