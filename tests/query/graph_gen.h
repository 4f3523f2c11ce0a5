// Random graphs and reference (obviously correct, slow) walks for the query
// property tests. Deterministic: a fixed-seed generator of our own (the standard
// distributions are not specified bit-for-bit across libraries).
#ifndef AMEM_TESTS_QUERY_GRAPH_GEN_H_
#define AMEM_TESTS_QUERY_GRAPH_GEN_H_

#include <algorithm>
#include <cstdint>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "query/query.h"
#include "snapshot/reader.h"
#include "tests/query/fixture.h"

namespace amem::testing {

class SplitMix {
 public:
  explicit SplitMix(uint64_t seed) : s_(seed) {}
  uint64_t Next() {
    uint64_t z = (s_ += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  uint32_t Below(uint32_t n) { return static_cast<uint32_t>(Next() % n); }

 private:
  uint64_t s_;
};

// n nodes "n0".."n{n-1}" and m distinct random edges with relations 0..rels-1 and
// weights in (0, 1]; timestamps, confidences, types and runs vary.
inline GraphFixture RandomGraph(uint64_t seed, int n, int m, int rels = 4) {
  SplitMix rng(seed);
  GraphFixture g;
  for (int i = 0; i < n; ++i) {
    g.Node("n" + std::to_string(i), static_cast<NodeType>(rng.Below(kNodeTypeCount)),
           "node " + std::to_string(i))
        .Confidence(static_cast<float>(rng.Below(101)) / 100.0f)
        .Ts(1000 + rng.Below(50))
        .Run("r" + std::to_string(rng.Below(3)));
  }
  std::set<std::tuple<int, int, int>> seen;
  for (int k = 0; k < m; ++k) {
    int a = static_cast<int>(rng.Below(n)), b = static_cast<int>(rng.Below(n));
    int rel = static_cast<int>(rng.Below(rels));
    if (!seen.insert({a, rel, b}).second) continue;
    g.Edge("n" + std::to_string(a), BuiltinRelationName(static_cast<RelationId>(rel)),
           "n" + std::to_string(b), static_cast<float>(1 + rng.Below(100)) / 100.0f);
  }
  return g;
}

struct RefNeighbor {
  RelationId rel;
  uint32_t other;
  bool backward;  // false sorts first: forward before backward
  uint32_t edge;
  bool operator<(const RefNeighbor& o) const {
    return std::tie(rel, other, backward, edge) < std::tie(o.rel, o.other, o.backward, o.edge);
  }
};

// Neighbours of u by scanning every edge, sorted by (relation, other, forward first).
inline std::vector<RefNeighbor> RefNeighbors(const snapshot::Reader& r, uint32_t u,
                                             query::Direction d,
                                             const query::RelationFilter& rels) {
  std::vector<RefNeighbor> out;
  for (uint32_t e = 0; e < r.edge_count(); ++e) {
    if (!rels.Matches(r.edge_rel(e))) continue;
    if (d != query::Direction::kIn && r.edge_source(e) == u) {
      out.push_back({r.edge_rel(e), r.edge_target(e), false, e});
    }
    if (d != query::Direction::kOut && r.edge_target(e) == u) {
      out.push_back({r.edge_rel(e), r.edge_source(e), true, e});
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace amem::testing

#endif  // AMEM_TESTS_QUERY_GRAPH_GEN_H_
