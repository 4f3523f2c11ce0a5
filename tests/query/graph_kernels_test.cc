// PageRank and Brandes kernels against straightforward reference implementations
// written here, on hand-built and generated graphs.
#include "query/graph_kernels.h"

#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <utility>
#include <vector>

#include "tests/query/rank_reference.h"

namespace amem::query {
namespace {

using testing::BruteForceBetweenness;
using testing::EdgeList;
using testing::Lcg;

EdgeList RandomEdges(uint32_t n, uint32_t m, uint64_t seed) {
  Lcg g{seed};
  EdgeList e;
  for (uint32_t k = 0; k < m; ++k) e.emplace_back(g.Next(n), g.Next(n));
  return e;
}

// The paper's formula, iterated over an edge list: push each node's share along
// its out-edges; dangling rank spread uniformly.
std::vector<double> ReferencePageRank(uint32_t n, const EdgeList& edges, int iterations) {
  std::vector<double> pr(n, 1.0 / n);
  std::vector<int> out(n, 0);
  for (auto [u, v] : edges) ++out[u];
  for (int it = 0; it < iterations; ++it) {
    double dangling = 0;
    for (uint32_t u = 0; u < n; ++u) {
      if (out[u] == 0) dangling += pr[u];
    }
    std::vector<double> next(n, (1 - 0.85) / n + 0.85 * dangling / n);
    for (auto [u, v] : edges) next[v] += 0.85 * pr[u] / out[u];
    pr = next;
  }
  return pr;
}

std::vector<uint32_t> AllNodes(uint32_t n) { return SampleSources(n, n, 1); }

TEST_CASE("PageRank on a hand-built graph: cycle with a dangling node", "[query][centrality]") {
  // 0 -> 1 -> 2 -> 0, and 2 -> 3 (3 has no out-edges).
  EdgeList edges = {{0, 1}, {1, 2}, {2, 0}, {2, 3}};
  PageRankResult r = PageRank(PullGraphFromEdges(4, edges), {});
  REQUIRE(r.converged);
  REQUIRE(r.iterations > 1);
  REQUIRE(r.iterations <= 100);
  double sum = 0;
  for (double s : r.scores) sum += s;
  REQUIRE(sum == Approx(1.0).epsilon(1e-12));
  // 2 collects everything 1 has; 1 collects all of 0; 0 and 3 split 2's rank.
  REQUIRE(r.scores[2] > r.scores[1]);
  REQUIRE(r.scores[1] > r.scores[0]);
  REQUIRE(r.scores[0] == Approx(r.scores[3]).epsilon(1e-12));
  std::vector<double> ref = ReferencePageRank(4, edges, r.iterations);
  for (uint32_t v = 0; v < 4; ++v) REQUIRE(r.scores[v] == Approx(ref[v]).epsilon(1e-12));
}

TEST_CASE("PageRank: empty graph, isolated nodes, iteration cap", "[query][centrality]") {
  PageRankResult empty = PageRank(PullGraphFromEdges(0, {}), {});
  REQUIRE(empty.scores.empty());
  REQUIRE(empty.converged);
  REQUIRE(empty.iterations == 0);

  // No edges: every node is dangling, the uniform vector is the fixed point.
  PageRankResult flat = PageRank(PullGraphFromEdges(5, {}), {});
  REQUIRE(flat.converged);
  REQUIRE(flat.iterations == 1);
  for (double s : flat.scores) REQUIRE(s == Approx(0.2));

  PageRankOptions capped;
  capped.max_iterations = 3;
  capped.tolerance = 0;  // never reached
  PageRankResult r = PageRank(PullGraphFromEdges(3, {{0, 1}, {1, 2}}), capped);
  REQUIRE_FALSE(r.converged);
  REQUIRE(r.iterations == 3);
}

TEST_CASE("PageRank sums to 1 and matches the reference on generated graphs",
          "[query][centrality][property]") {
  for (uint64_t seed = 1; seed <= 12; ++seed) {
    Lcg g{seed};
    uint32_t n = 1 + g.Next(300);
    uint32_t m = g.Next(4 * n);
    EdgeList edges = RandomEdges(n, m, seed * 977);  // parallel edges and loops included
    PageRankResult r = PageRank(PullGraphFromEdges(n, edges), {});
    INFO("seed " << seed << " n " << n << " m " << m);
    REQUIRE(r.converged);
    double sum = 0;
    for (double s : r.scores) sum += s;
    REQUIRE(sum == Approx(1.0).epsilon(1e-9));
    std::vector<double> ref = ReferencePageRank(n, edges, r.iterations);
    for (uint32_t v = 0; v < n; ++v) REQUIRE(r.scores[v] == Approx(ref[v]).epsilon(1e-10));
  }
}

TEST_CASE("Betweenness on hand-built graphs", "[query][centrality]") {
  SECTION("path 0-1-2-3: inner nodes carry the pairs they separate") {
    // Ordered pairs: 1 lies between (0,2),(0,3) and back: 4; 2 likewise.
    auto r = BetweennessSums(UndirectedFromEdges(4, {{0, 1}, {1, 2}, {2, 3}}), AllNodes(4), 1);
    REQUIRE(r.ok());
    REQUIRE(*r == std::vector<double>{0, 4, 4, 0});
  }
  SECTION("star: the centre is on every path, direction and parallel edges ignored") {
    auto r = BetweennessSums(
        UndirectedFromEdges(5, {{0, 1}, {2, 0}, {0, 3}, {4, 0}, {0, 3}, {3, 0}, {1, 1}}),
        AllNodes(5), 2);
    REQUIRE(r.ok());
    REQUIRE((*r)[0] == 12);  // 4 leaves: 4 * 3 ordered pairs
    for (uint32_t v = 1; v < 5; ++v) REQUIRE((*r)[v] == 0);
  }
  SECTION("square 0-1-2-3-0: two shortest paths split the credit") {
    auto r = BetweennessSums(UndirectedFromEdges(4, {{0, 1}, {1, 2}, {2, 3}, {3, 0}}),
                             AllNodes(4), 1);
    REQUIRE(r.ok());
    for (double v : *r) REQUIRE(v == Approx(1.0));  // half of (s,t) and (t,s) each
  }
  SECTION("disconnected parts and an empty graph") {
    auto r = BetweennessSums(UndirectedFromEdges(6, {{0, 1}, {1, 2}, {3, 4}}), AllNodes(6), 2);
    REQUIRE(r.ok());
    REQUIRE(*r == std::vector<double>{0, 2, 0, 0, 0, 0});
    auto e = BetweennessSums(UndirectedFromEdges(0, {}), {}, 2);
    REQUIRE(e.ok());
    REQUIRE(e->empty());
  }
}

TEST_CASE("Betweenness matches brute force and is identical for 1 and 2 threads",
          "[query][centrality][property]") {
  for (uint64_t seed = 1; seed <= 15; ++seed) {
    Lcg g{seed + 100};
    uint32_t n = 2 + g.Next(40);
    uint32_t m = g.Next(3 * n);
    EdgeList edges = RandomEdges(n, m, seed);
    Csr csr = UndirectedFromEdges(n, edges);
    auto one = BetweennessSums(csr, AllNodes(n), 1);
    auto two = BetweennessSums(csr, AllNodes(n), 2);
    auto three = BetweennessSums(csr, AllNodes(n), 3);
    REQUIRE(one.ok());
    REQUIRE(two.ok());
    REQUIRE(three.ok());
    INFO("seed " << seed << " n " << n << " m " << m);
    REQUIRE(*one == *two);  // bit for bit
    REQUIRE(*one == *three);
    std::vector<double> ref = BruteForceBetweenness(n, edges);
    for (uint32_t v = 0; v < n; ++v) REQUIRE((*one)[v] == Approx(ref[v]).epsilon(1e-9).margin(1e-9));
  }
}

TEST_CASE("Sampled sources are fixed, distinct and sorted", "[query][centrality]") {
  std::vector<uint32_t> a = SampleSources(10000, 200, 42);
  std::vector<uint32_t> b = SampleSources(10000, 200, 42);
  REQUIRE(a == b);
  REQUIRE(a.size() == 200);
  for (size_t i = 1; i < a.size(); ++i) REQUIRE(a[i - 1] < a[i]);
  REQUIRE(a.back() < 10000);
  REQUIRE(SampleSources(10000, 200, 43) != a);
  REQUIRE(SampleSources(5, 200, 42) == std::vector<uint32_t>{0, 1, 2, 3, 4});
}

TEST_CASE("Undirected graph: neighbours sorted, merged, no self-loops", "[query][centrality]") {
  Csr csr = UndirectedFromEdges(3, {{2, 0}, {0, 2}, {0, 1}, {1, 1}, {0, 2}});
  REQUIRE(csr.offsets == std::vector<uint32_t>{0, 2, 3, 4});
  REQUIRE(csr.targets == std::vector<uint32_t>{1, 2, 0, 0});
}

}  // namespace
}  // namespace amem::query
