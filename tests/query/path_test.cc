#include "query/path.h"

#include <catch2/catch.hpp>

#include <cmath>
#include <limits>
#include <queue>

#include <nlohmann/json.hpp>

#include "snapshot/reader.h"
#include "tests/query/fixture.h"
#include "tests/query/graph_gen.h"

using namespace amem;
using namespace amem::query;
using amem::testing::GraphFixture;

namespace {

std::vector<std::string> Keys(const snapshot::Reader& r, const PathResult& p) {
  std::vector<std::string> out;
  for (uint32_t i : p.nodes) out.emplace_back(r.key(i));
  return out;
}

// Every step uses an edge joining the two nodes in an allowed direction.
void CheckWellFormed(const snapshot::Reader& r, const PathResult& p, const PathOptions& o,
                     uint32_t s, uint32_t t) {
  REQUIRE(p.found);
  REQUIRE(p.nodes.size() == p.edges.size() + 1);
  CHECK(p.nodes.front() == s);
  CHECK(p.nodes.back() == t);
  for (size_t k = 0; k < p.edges.size(); ++k) {
    uint32_t e = p.edges[k], u = p.nodes[k], v = p.nodes[k + 1];
    CHECK(o.relations.Matches(r.edge_rel(e)));
    bool fwd = r.edge_source(e) == u && r.edge_target(e) == v;
    bool bwd = r.edge_source(e) == v && r.edge_target(e) == u;
    if (o.direction == Direction::kOut) CHECK(fwd);
    if (o.direction == Direction::kIn) CHECK(bwd);
    if (o.direction == Direction::kBoth) CHECK((fwd || bwd));
  }
}

double Cost(const snapshot::Reader& r, uint32_t e, PathOptions::Cost c) {
  double w = r.edge_weight(e);
  if (c == PathOptions::Cost::kWeight) return w;
  return w >= 1 ? 0 : -std::log(w);
}

}  // namespace

TEST_CASE("path finds the shortest chain, respecting direction", "[query][path]") {
  // a -> b -> c -> d and a shortcut a -> x -> d; e <- d only.
  GraphFixture g;
  for (const char* k : {"a", "b", "c", "d", "x", "e", "lonely"}) g.Node(k);
  g.Edge("a", "caused_by", "b", 0.9f);
  g.Edge("b", "caused_by", "c", 0.9f);
  g.Edge("c", "caused_by", "d", 0.9f);
  g.Edge("a", "related_to", "x", 0.1f);
  g.Edge("x", "related_to", "d", 0.1f);
  g.Edge("e", "supports", "d", 1.0f);
  auto r = g.Open();
  auto I = [&](const char* k) { return GraphFixture::Index(*r, k); };
  using V = std::vector<std::string>;

  PathOptions o;
  auto p = FindPath(*r, I("a"), I("d"), o);
  CheckWellFormed(*r, p, o, I("a"), I("d"));
  CHECK(Keys(*r, p) == V{"a", "x", "d"});
  CHECK(p.cost == 2);

  o.relations = *ParseRelations(*r, {"caused_by"});
  CHECK(Keys(*r, FindPath(*r, I("a"), I("d"), o)) == V{"a", "b", "c", "d"});

  PathOptions out;
  out.direction = Direction::kOut;
  CHECK_FALSE(FindPath(*r, I("a"), I("e"), out).found);  // e -> d, not d -> e
  CHECK_FALSE(FindPath(*r, I("d"), I("a"), out).found);
  PathOptions in;
  in.direction = Direction::kIn;
  auto back = FindPath(*r, I("d"), I("a"), in);
  CheckWellFormed(*r, back, in, I("d"), I("a"));
  CHECK(back.edges.size() == 2);
  CHECK(Keys(*r, FindPath(*r, I("a"), I("e"), PathOptions{})) == V{"a", "x", "d", "e"});

  PathOptions shallow;
  shallow.max_depth = 1;
  CHECK_FALSE(FindPath(*r, I("a"), I("d"), shallow).found);
  shallow.max_depth = 2;
  CHECK(FindPath(*r, I("a"), I("d"), shallow).found);

  CHECK_FALSE(FindPath(*r, I("a"), I("lonely"), PathOptions{}).found);
  auto self = FindPath(*r, I("a"), I("a"), PathOptions{});
  CHECK(self.found);
  CHECK(self.nodes.size() == 1);
  CHECK(self.cost == 0);
}

TEST_CASE("path hops describe the whole path even when its rows are cut", "[query][path]") {
  GraphFixture g;
  for (const char* k : {"a", "b", "c", "d"}) g.Node(k);
  g.Edge("a", "caused_by", "b");
  g.Edge("b", "caused_by", "c");
  g.Edge("c", "caused_by", "d");
  auto r = g.Open();
  auto I = [&](const char* k) { return GraphFixture::Index(*r, k); };
  for (bool weighted : {false, true}) {
    PathOptions o;
    o.weighted = weighted;
    PathResult p = FindPath(*r, I("a"), I("d"), o);
    CHECK(p.hops == 3);
    CHECK(p.cost == 3);
    CHECK(PathJson(*r, p, o)["hops"] == 3);
    // What `path --limit 1` does: keep one node; hops and cost stay the path's.
    p.nodes.resize(1);
    p.edges.clear();
    Json doc = PathJson(*r, p, o);
    CHECK(doc["hops"] == 3);
    CHECK(doc["cost"] == 3.0);
    CHECK(doc["nodes"].size() == 1);
  }
  CHECK(FindPath(*r, I("a"), I("a"), PathOptions{}).hops == 0);
  PathOptions out;
  out.direction = Direction::kOut;
  CHECK(FindPath(*r, I("d"), I("a"), out).hops == 0);  // not found
}

TEST_CASE("weighted path: cost = weight, or -ln(weight) for the most reliable chain",
          "[query][path]") {
  GraphFixture g;
  for (const char* k : {"a", "b", "c", "d", "x"}) g.Node(k);
  g.Edge("a", "caused_by", "b", 0.9f);
  g.Edge("b", "caused_by", "c", 0.9f);
  g.Edge("c", "caused_by", "d", 0.9f);
  g.Edge("a", "related_to", "x", 0.1f);
  g.Edge("x", "related_to", "d", 0.1f);
  auto r = g.Open();
  auto I = [&](const char* k) { return GraphFixture::Index(*r, k); };
  using V = std::vector<std::string>;
  PathOptions w;
  w.weighted = true;
  auto cheap = FindPath(*r, I("a"), I("d"), w);
  CHECK(Keys(*r, cheap) == V{"a", "x", "d"});  // 0.2 < 2.7
  CHECK(cheap.cost == Approx(0.2));
  w.cost = PathOptions::Cost::kNegLog;
  auto reliable = FindPath(*r, I("a"), I("d"), w);
  CHECK(Keys(*r, reliable) == V{"a", "b", "c", "d"});  // 0.9^3 > 0.1^2
  CHECK(reliable.cost == Approx(-3 * std::log(0.9f)).epsilon(1e-6));
}

TEST_CASE("path agrees with reference BFS and Dijkstra on random graphs", "[query][path]") {
  for (uint64_t seed = 11; seed <= 16; ++seed) {
    auto g = amem::testing::RandomGraph(seed, 50, 110);
    auto r = g.Open();
    const uint32_t n = r->node_count();
    for (Direction d : {Direction::kOut, Direction::kIn, Direction::kBoth}) {
      for (bool weighted : {false, true}) {
        PathOptions o;
        o.direction = d;
        o.weighted = weighted;
        o.cost = seed % 2 ? PathOptions::Cost::kNegLog : PathOptions::Cost::kWeight;
        if (seed % 3 == 0) o.relations = *ParseRelations(*r, {"caused_by,supports,supersedes"});
        for (uint32_t s = 0; s < n; s += 9) {
          // Reference single-source distances (hops or costs) by scanning every edge.
          std::vector<double> dist(n, std::numeric_limits<double>::infinity());
          dist[s] = 0;
          using Item = std::pair<double, uint32_t>;
          std::priority_queue<Item, std::vector<Item>, std::greater<Item>> pq;
          pq.push({0, s});
          while (!pq.empty()) {
            auto [du, u] = pq.top();
            pq.pop();
            if (du > dist[u]) continue;
            for (const auto& nb : amem::testing::RefNeighbors(*r, u, d, o.relations)) {
              double c = weighted ? Cost(*r, nb.edge, o.cost) : 1.0;
              if (du + c < dist[nb.other]) {
                dist[nb.other] = du + c;
                pq.push({du + c, nb.other});
              }
            }
          }
          for (uint32_t t = 0; t < n; t += 4) {
            auto p = FindPath(*r, s, t, o);
            INFO("seed " << seed << " dir " << DirectionName(d) << " weighted " << weighted
                         << " s " << s << " t " << t);
            if (std::isinf(dist[t])) {
              CHECK_FALSE(p.found);
              continue;
            }
            CheckWellFormed(*r, p, o, s, t);
            CHECK(p.cost == Approx(dist[t]).margin(1e-9));
            double sum = 0;
            for (uint32_t e : p.edges) sum += weighted ? Cost(*r, e, o.cost) : 1.0;
            CHECK(sum == Approx(p.cost).margin(1e-9));
            // Same answer twice (scratch reuse must not leak between calls).
            auto again = FindPath(*r, s, t, o);
            CHECK(again.nodes == p.nodes);
            CHECK(again.edges == p.edges);
          }
        }
      }
    }
  }
}
