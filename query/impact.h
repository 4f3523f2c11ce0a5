// Query 4, impact: what depends on this node (docs/QUERIES.md #4; dependents per
// docs/DESIGN.md §2: D with `D caused_by X`, C with `X supports C`).
#ifndef AMEM_QUERY_IMPACT_H_
#define AMEM_QUERY_IMPACT_H_

#include <cstdint>
#include <vector>

#include "query/query.h"
#include "query/render.h"

namespace amem::query {

struct ImpactOptions {
  uint32_t depth = 10;
  size_t limit = 100;  // rows reported; the counts cover everything reached
};

struct ImpactedNode {
  uint32_t node = 0;
  uint32_t depth = 0;  // >= 1
  uint32_t edge = 0;   // the edge that reached it (D caused_by X, or X supports C)
};

struct ImpactResult {
  uint32_t root = 0;
  std::vector<ImpactedNode> nodes;  // BFS order, at most limit
  uint64_t reached = 0;             // every dependent within depth
  uint64_t decisions = 0;           // of them, type decision
  uint64_t inferences = 0;          // of them, type inference
  bool truncated = false;
};

// BFS over dependents from `root`; per node, caused_by dependents then supports ones,
// each by dense index. The root is not a row. REQUIRES: root < reader.node_count().
ImpactResult Impact(const snapshot::Reader& reader, uint32_t root, const ImpactOptions& options);
Json ImpactJson(const snapshot::Reader& reader, const ImpactResult& result);

// Calls fn(dependent, edge) for the direct dependents of x in that order. Shared with
// other dependents-based walks.
template <typename Fn>
void ForEachDependent(const snapshot::Reader& reader, uint32_t x, Fn&& fn);

}  // namespace amem::query

#include "snapshot/reader.h"

namespace amem::query {
template <typename Fn>
void ForEachDependent(const snapshot::Reader& reader, uint32_t x, Fn&& fn) {
  auto [kb, ke] = reader.InEdgesWithRel(x, kCausedBy);
  for (uint32_t k = kb; k < ke; ++k) {
    uint32_t e = reader.in_edge(k);
    fn(reader.edge_source(e), e);
  }
  auto [ob, oe] = reader.OutEdgesWithRel(x, kSupports);
  for (uint32_t e = ob; e < oe; ++e) fn(reader.edge_target(e), e);
}
}  // namespace amem::query

#endif  // AMEM_QUERY_IMPACT_H_
