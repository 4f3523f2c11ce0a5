// PageRank and Brandes kernels against straightforward reference implementations
// written here, on hand-built and generated graphs.
#include "query/internal/graph_kernels.h"

#include <catch2/catch.hpp>

#include <algorithm>
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

// The paper's formula in doubles, iterated over an edge list as networkx's
// pagerank does: push each node's share along its out-edges, spread the dangling
// rank uniformly, stop once the L1 change is below 1e-6 (networkx: tol = 1e-6 / N,
// compared with N * tol) or after `max_iterations`.
struct Reference {
  std::vector<double> scores;
  int iterations = 0;
};
Reference ReferencePageRank(uint32_t n, const EdgeList& edges, int max_iterations = 100) {
  Reference ref;
  ref.scores.assign(n, 1.0 / n);
  std::vector<int> out(n, 0);
  for (auto [u, v] : edges) ++out[u];
  std::vector<double>& pr = ref.scores;
  while (ref.iterations < max_iterations) {
    double dangling = 0;
    for (uint32_t u = 0; u < n; ++u) {
      if (out[u] == 0) dangling += pr[u];
    }
    std::vector<double> next(n, (1 - 0.85) / n + 0.85 * dangling / n);
    for (auto [u, v] : edges) next[v] += 0.85 * pr[u] / out[u];
    double change = 0;
    for (uint32_t v = 0; v < n; ++v) change += std::fabs(next[v] - pr[v]);
    pr = next;
    ++ref.iterations;
    if (change < 1e-6) break;
  }
  return ref;
}

double L1(const std::vector<double>& a, const std::vector<double>& b) {
  REQUIRE(a.size() == b.size());
  double d = 0;
  for (size_t i = 0; i < a.size(); ++i) d += std::fabs(a[i] - b[i]);
  return d;
}

std::vector<uint32_t> AllNodes(uint32_t n) { return SampleSources(n, n, 1); }

TEST_CASE("Pull graph layout: nodes grouped by in-degree per block, long lists last",
          "[query][centrality]") {
  // In block 0, node 0 receives 4,091 edges and node 2 nine (both longer than the
  // fixed-length groups), node 1 one, node 7 eight; nodes 3 and 4 have no
  // out-edges; 4097 nodes make two blocks.
  const uint32_t n = kPullBlock + 1;
  static_assert(kPullShortList == 8, "node 7's list fills the longest fixed group");
  EdgeList edges = {{0, 2}, {1, 2}, {0, 2}, {2, 2}, {5, 2}, {6, 2}, {7, 2}, {8, 2}, {2, 1}};
  edges.emplace_back(n - 1, 2);  // in block 1, to a node in block 0
  edges.emplace_back(0, n - 1);
  for (uint32_t u = 5; u < n - 1; ++u) edges.emplace_back(u, 0);
  for (uint32_t u = 10; u < 18; ++u) edges.emplace_back(u, 7);
  PullGraph g = PullGraphFromEdges(n, edges);
  REQUIRE(g.node_count == n);
  REQUIRE(g.blocks.size() == 2);
  const PullGraph::Block& b0 = g.blocks[0];
  // Degree 0: every node of the block but 0, 1, 2 and 7, in node order.
  REQUIRE(b0.group_end[0] == kPullBlock - 4);
  REQUIRE(b0.order[0] == 3);
  REQUIRE(b0.order[3] == 6);
  REQUIRE(b0.order[4] == 8);
  REQUIRE(std::is_sorted(b0.order.begin(), b0.order.begin() + b0.group_end[0]));
  REQUIRE(b0.group_end[1] == kPullBlock - 3);
  for (uint32_t d = 2; d < kPullShortList; ++d) REQUIRE(b0.group_end[d] == kPullBlock - 3);
  REQUIRE(b0.group_end[kPullShortList] == kPullBlock - 2);
  REQUIRE(std::vector<uint16_t>(b0.order.end() - 4, b0.order.end()) ==
          std::vector<uint16_t>{1, 7, 0, 2});
  // Lists in that order, each in the order given.
  std::vector<uint32_t> want = {2, 10, 11, 12, 13, 14, 15, 16, 17};
  for (uint32_t u = 5; u < n - 1; ++u) want.push_back(u);
  for (uint32_t u : {0u, 1u, 0u, 2u, 5u, 6u, 7u, 8u, n - 1}) want.push_back(u);
  REQUIRE(b0.long_end == std::vector<uint32_t>{9 + (n - 6), 9 + (n - 6) + 9});
  REQUIRE(b0.sources == want);
  REQUIRE(b0.dangling == std::vector<uint32_t>{3, 4});
  const PullGraph::Block& b1 = g.blocks[1];
  REQUIRE(b1.order == std::vector<uint16_t>{0});
  REQUIRE(b1.group_end[0] == 0);
  REQUIRE(b1.group_end[1] == 1);
  REQUIRE(b1.sources == std::vector<uint32_t>{0});
  REQUIRE(b1.long_end.empty());
  REQUIRE(b1.dangling.empty());
  REQUIRE(g.out_degree[0] == 3);
  REQUIRE(g.out_degree[2] == 2);
}

TEST_CASE("PageRank on a hand-built graph: cycle with a dangling node", "[query][centrality]") {
  // 0 -> 1 -> 2 -> 0, and 2 -> 3 (3 has no out-edges).
  EdgeList edges = {{0, 1}, {1, 2}, {2, 0}, {2, 3}};
  PageRankResult r = PageRank(PullGraphFromEdges(4, edges), {});
  REQUIRE(r.converged);
  REQUIRE(r.iterations > 1);
  REQUIRE(r.iterations <= 100);
  double sum = 0;
  for (double s : r.scores) sum += s;
  REQUIRE(sum == Approx(1.0).epsilon(1e-6));
  // 2 collects everything 1 has; 1 collects all of 0; 0 and 3 split 2's rank,
  // exactly: each adds the one same share.
  REQUIRE(r.scores[2] > r.scores[1]);
  REQUIRE(r.scores[1] > r.scores[0]);
  REQUIRE(r.scores[0] == r.scores[3]);
  Reference ref = ReferencePageRank(4, edges);
  REQUIRE(r.iterations == ref.iterations);
  REQUIRE(L1(r.scores, ref.scores) < 1e-6);
  for (uint32_t v = 0; v < 4; ++v) REQUIRE(r.scores[v] == Approx(ref.scores[v]).epsilon(1e-6));
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

TEST_CASE("PageRank returns the ranks of its last iteration, however it stopped",
          "[query][centrality][property]") {
  // A run that stops on the tolerance after K iterations and one capped at K
  // iterations must return the same ranks bit for bit: whether the last iteration
  // kept its ranks as it went (when it looked like the last) or a sweep after it
  // recomputed them. Capped one iteration earlier, they differ. Random graphs
  // converge steadily (the last iteration is foreseen); once a chain has settled
  // the change drops at once (it is not).
  for (uint64_t seed = 1; seed <= 12; ++seed) {
    Lcg g{seed};
    uint32_t n = 50 + g.Next(seed <= 3 ? 500 : 20000);
    EdgeList edges;
    if (seed <= 6) {
      edges = RandomEdges(n, 3 * n, seed * 131);
      for (uint32_t u = 0; u < n; u += 7) edges.emplace_back(u, 1);
    } else {  // a cycle of 50 nodes, and a chain of 1-6 ending in a dangling node
      n = 50 + static_cast<uint32_t>(seed) - 6;
      const uint32_t tail = 50;
      for (uint32_t u = 0; u < tail; ++u) edges.emplace_back(u, (u + 1) % tail);
      for (uint32_t u = tail; u + 1 < n; ++u) edges.emplace_back(u, u + 1);
    }
    PullGraph graph = PullGraphFromEdges(n, edges);
    for (double tolerance : {1e-3, 1e-4, 1e-5, 1e-6, 3e-7}) {
      PageRankOptions o;
      o.tolerance = tolerance;
      o.threads = 2;
      PageRankResult stopped = PageRank(graph, o);
      INFO("seed " << seed << " n " << n << " tolerance " << tolerance);
      REQUIRE(stopped.converged);
      o.tolerance = 0;
      o.max_iterations = stopped.iterations;
      PageRankResult capped = PageRank(graph, o);
      REQUIRE_FALSE(capped.converged);
      REQUIRE(capped.iterations == stopped.iterations);
      REQUIRE(capped.scores == stopped.scores);
      if (stopped.iterations > 1) {
        o.max_iterations = stopped.iterations - 1;
        REQUIRE(PageRank(graph, o).scores != stopped.scores);
      }
    }
  }
}

TEST_CASE("PageRank sums to 1 and stays within 1e-6 (L1) of the reference",
          "[query][centrality][property]") {
  // Up to 30,000 nodes: several blocks of the kernel, and lists longer than its
  // fixed-length groups (a hub receives from a tenth of the nodes).
  for (uint64_t seed = 1; seed <= 16; ++seed) {
    Lcg g{seed};
    uint32_t n = 1 + g.Next(seed <= 12 ? 300 : 30000);
    uint32_t m = g.Next(4 * n);
    EdgeList edges = RandomEdges(n, m, seed * 977);  // parallel edges and loops included
    for (uint32_t u = 0; u < n; u += 10) edges.emplace_back(u, n / 2);
    if (seed > 12) {  // out-degrees of 255 and more take the kernel's wide path
      for (uint32_t v = 0; v < 300; ++v) edges.emplace_back(n / 3, v % n);
      for (uint32_t v = 0; v < 255; ++v) edges.emplace_back(n / 5, (v * 7) % n);
    }
    PageRankResult r = PageRank(PullGraphFromEdges(n, edges), {});
    INFO("seed " << seed << " n " << n << " m " << edges.size());
    REQUIRE(r.converged);
    double sum = 0;
    for (double s : r.scores) sum += s;
    REQUIRE(sum == Approx(1.0).epsilon(1e-6));
    Reference ref = ReferencePageRank(n, edges);
    REQUIRE(r.iterations == ref.iterations);
    REQUIRE(L1(r.scores, ref.scores) < 1e-6);
    for (uint32_t v = 0; v < n; ++v) {
      REQUIRE(r.scores[v] == Approx(ref.scores[v]).epsilon(1e-6));
    }
  }
}

TEST_CASE("PageRank is identical for any thread count, and exact on ties",
          "[query][centrality][property]") {
  // 20,000 nodes (5 blocks of the kernel): random edges among the first 18,000; of
  // the rest, 1,000 receive one edge each from node 0 and 100 receive the same two
  // (from 5 and 7), so the scores within each group must tie exactly.
  const uint32_t n = 20000, m0 = 18000;
  EdgeList edges = RandomEdges(m0, 3 * m0, 5);
  for (uint32_t v = m0; v < m0 + 1000; ++v) edges.emplace_back(0, v);
  for (uint32_t v = m0 + 1000; v < m0 + 1100; ++v) {
    edges.emplace_back(7, v);
    edges.emplace_back(5, v);
  }
  PullGraph graph = PullGraphFromEdges(n, edges);
  PageRankOptions o;
  o.threads = 1;
  PageRankResult one = PageRank(graph, o);
  for (int threads : {2, 3, 8}) {
    o.threads = threads;
    PageRankResult other = PageRank(graph, o);
    INFO("threads " << threads);
    REQUIRE(other.iterations == one.iterations);
    REQUIRE(other.scores == one.scores);  // bit for bit
  }
  for (uint32_t v = m0; v < m0 + 1000; ++v) REQUIRE(one.scores[v] == one.scores[m0]);
  for (uint32_t v = m0 + 1000; v < m0 + 1100; ++v) REQUIRE(one.scores[v] == one.scores[m0 + 1000]);
  REQUIRE(one.scores[m0 + 1000] > one.scores[m0 + 1100]);  // which has no in-edge
  Reference ref = ReferencePageRank(n, edges);
  REQUIRE(L1(one.scores, ref.scores) < 1e-6);
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
