// centrality on snapshots: degree and betweenness against brute force, PageRank
// against the kernel on the same edges, filters, sampling, thread independence.
#include "query/centrality.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include <nlohmann/json.hpp>

#include "query/internal/graph_kernels.h"
#include "tests/query/fixture.h"
#include "tests/query/rank_reference.h"

namespace amem::query {
namespace {

using testing::GraphFixture;

CentralityResult Run(const snapshot::Reader& r, const CentralityOptions& o) {
  auto res = Centrality(r, o);
  INFO(res.status().ToString());
  REQUIRE(res.ok());
  return std::move(res).value();
}

// Scores of every node (limit = N), by index.
std::vector<double> AllScores(const snapshot::Reader& r, CentralityOptions o) {
  o.limit = r.node_count();
  CentralityResult res = Run(r, o);
  std::vector<double> s(r.node_count(), -1);
  for (const CentralityRow& row : res.rows) s[row.index] = row.score;
  return s;
}

std::string Key(uint32_t i) {
  char buf[16];
  std::snprintf(buf, sizeof(buf), "n:%04u", i);  // dense order = i (one session)
  return buf;
}

struct Generated {
  GraphFixture g;
  std::vector<std::pair<uint32_t, uint32_t>> edges;  // all relations
  std::vector<std::pair<uint32_t, uint32_t>> supports;  // rel supports only
  std::vector<uint32_t> rels;  // edges[k]'s relation: 0 related_to, 1 supports
};

Generated RandomGraph(uint32_t n, uint32_t m, uint64_t seed) {
  Generated out;
  testing::Lcg lcg{seed};
  auto next = [&lcg](uint32_t bound) { return lcg.Next(bound); };
  for (uint32_t i = 0; i < n; ++i) {
    out.g.Node(Key(i), i % 3 == 0 ? NodeType::kDecision : NodeType::kFact);
  }
  std::vector<bool> used(static_cast<size_t>(n) * n * 2, false);  // one edge per triple
  for (uint32_t k = 0; k < m; ++k) {
    uint32_t u = next(n), v = next(n), rel = next(2);
    size_t slot = (static_cast<size_t>(u) * n + v) * 2 + rel;
    if (used[slot]) continue;
    used[slot] = true;
    out.g.Edge(Key(u), rel ? "supports" : "related_to", Key(v));
    out.edges.emplace_back(u, v);
    out.rels.push_back(rel);
    if (rel) out.supports.emplace_back(u, v);
  }
  return out;
}

// Normalised as the query reports it.
std::vector<double> BruteBetweenness(uint32_t n, const testing::EdgeList& e) {
  std::vector<double> bc = testing::BruteForceBetweenness(n, e);
  for (double& b : bc) b = n > 2 ? b / ((n - 1.0) * (n - 2.0)) : 0;
  return bc;
}

TEST_CASE("centrality on a hand-built graph", "[query][centrality]") {
  // hub <- a, b, c (supports); hub -> d (related_to); d -> e (related_to).
  GraphFixture g;
  g.Node("hub", NodeType::kDecision);
  for (const char* k : {"a", "b", "c", "d", "e"}) g.Node(k);
  g.Edge("a", "supports", "hub");
  g.Edge("b", "supports", "hub");
  g.Edge("c", "supports", "hub");
  g.Edge("hub", "related_to", "d");
  g.Edge("d", "related_to", "e");
  auto r = g.Open();
  const uint32_t hub = g.Index(*r, "hub"), d = g.Index(*r, "d"), e = g.Index(*r, "e");

  CentralityOptions o;
  o.metric = CentralityMetric::kDegree;
  CentralityResult deg = Run(*r, o);
  REQUIRE(deg.rows[0].index == hub);
  REQUIRE(deg.rows[0].score == Approx(4.0 / 5));
  REQUIRE(deg.rows[1].index == d);
  REQUIRE(deg.rows[1].score == Approx(2.0 / 5));
  REQUIRE(deg.edge_count == 5);

  o.rels = *ParseRelations(*r, {"supports"});
  CentralityResult sup = Run(*r, o);
  REQUIRE(sup.edge_count == 3);
  REQUIRE(sup.rows[0].score == Approx(3.0 / 5));
  REQUIRE(AllScores(*r, o)[d] == 0);

  o = CentralityOptions();
  o.metric = CentralityMetric::kBetweenness;
  CentralityResult bc = Run(*r, o);
  REQUIRE_FALSE(bc.sampled);
  REQUIRE(bc.sources == 6);
  // Undirected: hub separates {a,b,c} from each other and from {d,e}: 3 + 6 = 9
  // unordered pairs; d separates e from the 4 others. Normalised: 2 * x / (5 * 4).
  REQUIRE(bc.rows[0].index == hub);
  REQUIRE(bc.rows[0].score == Approx(2.0 * 9 / 20));
  REQUIRE(bc.rows[1].index == d);
  REQUIRE(bc.rows[1].score == Approx(2.0 * 4 / 20));
  REQUIRE(AllScores(*r, o)[e] == 0);

  o = CentralityOptions();
  CentralityResult pr = Run(*r, o);
  REQUIRE(pr.converged);
  REQUIRE(pr.iterations > 0);
  REQUIRE(pr.rows.size() == 6);
  REQUIRE(pr.rows[0].index == e);  // everything flows down hub -> d -> e
  double sum = 0;
  for (const CentralityRow& row : pr.rows) sum += row.score;
  REQUIRE(sum == Approx(1.0));

  o.types.Add(NodeType::kDecision);
  CentralityResult only = Run(*r, o);
  REQUIRE(only.matched == 1);
  REQUIRE(only.rows.size() == 1);
  REQUIRE(only.rows[0].index == hub);
  for (const CentralityRow& row : pr.rows) {
    if (row.index == hub) REQUIRE(row.score == only.rows[0].score);  // filter != subgraph
  }

  o = CentralityOptions();
  o.limit = 2;
  REQUIRE(Run(*r, o).rows.size() == 2);

  Json doc = CentralityJson(*r, pr);
  REQUIRE(doc["query"] == "centrality");
  REQUIRE(doc["metric"] == "pagerank");
  REQUIRE(doc["converged"] == true);
  REQUIRE(doc["results"][0]["key"] == "e");
}

TEST_CASE("centrality edge cases: empty graph, one node, metric names", "[query][centrality]") {
  GraphFixture empty;
  auto r = empty.Open();
  for (auto m : {CentralityMetric::kPageRank, CentralityMetric::kDegree,
                 CentralityMetric::kBetweenness}) {
    CentralityOptions o;
    o.metric = m;
    CentralityResult res = Run(*r, o);
    REQUIRE(res.rows.empty());
    REQUIRE(res.node_count == 0);
  }
  GraphFixture one;
  one.Node("solo");
  auto r1 = one.Open();
  for (auto m : {CentralityMetric::kPageRank, CentralityMetric::kDegree,
                 CentralityMetric::kBetweenness}) {
    CentralityOptions o;
    o.metric = m;
    CentralityResult res = Run(*r1, o);
    REQUIRE(res.rows.size() == 1);
    REQUIRE(res.rows[0].score == (m == CentralityMetric::kPageRank ? 1.0 : 0.0));
  }
  REQUIRE(*ParseCentralityMetric("betweenness") == CentralityMetric::kBetweenness);
  REQUIRE(ParseCentralityMetric("closeness").status().IsInvalidArgument());
  CentralityOptions bad;
  bad.damping = 1.5;
  REQUIRE(Centrality(*r1, bad).status().IsInvalidArgument());
}

TEST_CASE("centrality matches brute force and references on generated graphs",
          "[query][centrality][property]") {
  for (uint64_t seed = 1; seed <= 6; ++seed) {
    const uint32_t n = 5 + static_cast<uint32_t>(seed * 7);
    Generated gen = RandomGraph(n, 3 * n, seed);
    auto r = gen.g.Open();
    INFO("seed " << seed << " n " << n);

    CentralityOptions o;
    o.metric = CentralityMetric::kDegree;
    std::vector<double> deg = AllScores(*r, o);
    std::vector<double> brute(n, 0);
    for (auto [u, v] : gen.edges) {
      brute[u] += 1.0 / (n - 1);
      brute[v] += 1.0 / (n - 1);
    }
    for (uint32_t v = 0; v < n; ++v) REQUIRE(deg[v] == Approx(brute[v]));

    o.metric = CentralityMetric::kBetweenness;
    o.threads = 1;
    std::vector<double> bc1 = AllScores(*r, o);
    o.threads = 2;
    std::vector<double> bc2 = AllScores(*r, o);
    REQUIRE(bc1 == bc2);
    std::vector<double> ref = BruteBetweenness(n, gen.edges);
    for (uint32_t v = 0; v < n; ++v) REQUIRE(bc1[v] == Approx(ref[v]).margin(1e-12));

    // With a relation filter only those edges exist.
    o.rels = *ParseRelations(*r, {"supports"});
    std::vector<double> bcs = AllScores(*r, o);
    std::vector<double> refs = BruteBetweenness(n, gen.supports);
    for (uint32_t v = 0; v < n; ++v) REQUIRE(bcs[v] == Approx(refs[v]).margin(1e-12));

    // The pull graph read off the snapshot is the one built from the edge list in
    // the order of the in-lists (by relation: related_to sorts after supports; then
    // by source), with any number of threads, so PageRank agrees bit for bit, with
    // or without a relation filter.
    for (bool filtered : {false, true}) {
      INFO("filtered " << filtered);
      o = CentralityOptions();
      if (filtered) o.rels = *ParseRelations(*r, {"supports"});
      std::vector<std::tuple<uint32_t, uint32_t, uint32_t>> by_list;  // (target, rel, source)
      for (size_t k = 0; k < gen.edges.size(); ++k) {
        if (filtered && gen.rels[k] == 0) continue;
        by_list.emplace_back(gen.edges[k].second, 1 - gen.rels[k], gen.edges[k].first);
      }
      std::sort(by_list.begin(), by_list.end());
      std::vector<std::pair<uint32_t, uint32_t>> edges;
      for (auto [v, rel, u] : by_list) edges.emplace_back(u, v);
      PullGraph expected = PullGraphFromEdges(n, edges);
      for (int threads : {1, 2, 3}) REQUIRE(BuildPullGraph(*r, o.rels, threads) == expected);
      std::vector<double> pr = AllScores(*r, o);
      PageRankResult kernel = PageRank(expected, {});
      double sum = 0;
      for (uint32_t v = 0; v < n; ++v) {
        REQUIRE(pr[v] == kernel.scores[v]);
        sum += pr[v];
      }
      REQUIRE(sum == Approx(1.0).epsilon(1e-6));
    }
  }
}

TEST_CASE("sampled betweenness is fixed, scaled and thread-independent",
          "[query][centrality][property]") {
  Generated gen = RandomGraph(60, 150, 7);
  auto r = gen.g.Open();
  CentralityOptions o;
  o.metric = CentralityMetric::kBetweenness;
  o.exact_limit = 10;  // force sampling
  o.sample_sources = 20;
  o.threads = 1;
  CentralityResult a = Run(*r, o);
  REQUIRE(a.sampled);
  REQUIRE(a.sources == 20);
  o.threads = 2;
  CentralityResult b = Run(*r, o);
  REQUIRE(a.rows.size() == b.rows.size());
  for (size_t k = 0; k < a.rows.size(); ++k) {
    REQUIRE(a.rows[k].index == b.rows[k].index);
    REQUIRE(a.rows[k].score == b.rows[k].score);
  }
  // Sampling every node equals the exact answer.
  o.sample_sources = 60;
  std::vector<double> all = AllScores(*r, o);
  std::vector<double> ref = BruteBetweenness(60, gen.edges);
  for (uint32_t v = 0; v < 60; ++v) REQUIRE(all[v] == Approx(ref[v]).margin(1e-12));
}

}  // namespace
}  // namespace amem::query

namespace amem::query {
namespace {

TEST_CASE("the pull graph read off a snapshot is the same for any thread count",
          "[query][centrality]") {
  // 10,000 nodes: three blocks of the kernel, split across the workers.
  const uint32_t n = 10000;
  GraphFixture g;
  for (uint32_t i = 0; i < n; ++i) g.Node(Key(i));
  testing::Lcg lcg{11};
  std::set<std::tuple<uint32_t, uint32_t, uint32_t>> seen;
  std::vector<std::tuple<uint32_t, uint32_t, uint32_t>> by_list;  // (target, rel, source)
  for (uint32_t k = 0; k < 3 * n; ++k) {
    uint32_t u = lcg.Next(n), v = k % 7 == 0 ? 17 : lcg.Next(n), rel = lcg.Next(2);
    if (!seen.insert({u, v, rel}).second) continue;
    g.Edge(Key(u), rel ? "supports" : "related_to", Key(v));
    by_list.emplace_back(v, 1 - rel, u);
  }
  std::sort(by_list.begin(), by_list.end());
  std::vector<std::pair<uint32_t, uint32_t>> edges, supports;
  for (auto [v, rel, u] : by_list) {
    edges.emplace_back(u, v);
    if (rel == 0) supports.emplace_back(u, v);
  }
  auto r = g.Open();
  const PullGraph expected = PullGraphFromEdges(n, edges);
  const PullGraph expected_supports = PullGraphFromEdges(n, supports);
  const RelationFilter only_supports = *ParseRelations(*r, {"supports"});
  for (int threads : {1, 2, 3, 5}) {
    INFO("threads " << threads);
    REQUIRE(BuildPullGraph(*r, {}, threads) == expected);
    REQUIRE(BuildPullGraph(*r, only_supports, threads) == expected_supports);
  }
  CentralityOptions o;
  o.limit = n;
  o.threads = 1;
  CentralityResult one = Run(*r, o);
  o.threads = 2;
  CentralityResult two = Run(*r, o);
  REQUIRE(one.iterations == two.iterations);
  for (size_t k = 0; k < one.rows.size(); ++k) {
    REQUIRE(one.rows[k].index == two.rows[k].index);
    REQUIRE(one.rows[k].score == two.rows[k].score);
  }
  REQUIRE(one.rows[0].index == 17);  // a seventh of the edges point at it
}

}  // namespace
}  // namespace amem::query
