#include "query/traverse.h"

#include <catch2/catch.hpp>

#include <map>

#include <nlohmann/json.hpp>

#include "snapshot/reader.h"
#include "tests/query/fixture.h"
#include "tests/query/graph_gen.h"

using namespace amem;
using namespace amem::query;
using amem::testing::GraphFixture;

namespace {

std::map<std::string, uint32_t> Depths(const snapshot::Reader& r, const TraverseResult& t) {
  std::map<std::string, uint32_t> out;
  for (const auto& n : t.nodes) out[std::string(r.key(n.node))] = n.depth;
  return out;
}

// a -> b -> c -> a (cycle), a -> d (calls), e -> a (incoming only), f isolated.
GraphFixture Small() {
  GraphFixture g;
  for (const char* k : {"a", "b", "c", "d", "e", "f"}) g.Node(k);
  g.Edge("a", "related_to", "b");
  g.Edge("b", "related_to", "c");
  g.Edge("c", "related_to", "a");
  g.Edge("a", "calls", "d");
  g.Edge("e", "supports", "a");
  return g;
}

}  // namespace

TEST_CASE("traverse follows direction and relations, level by level", "[query][traverse]") {
  auto g = Small();
  auto r = g.Open();
  uint32_t a = GraphFixture::Index(*r, "a");
  using M = std::map<std::string, uint32_t>;

  TraverseOptions out;
  auto t = Traverse(*r, a, out);
  CHECK(Depths(*r, t) == M{{"a", 0}, {"b", 1}, {"d", 1}, {"c", 2}});
  CHECK(t.nodes.front().node == a);
  CHECK(t.nodes.front().edge == kNoEdge);
  CHECK_FALSE(t.truncated);
  // Neighbours in (relation, index) order: related_to (4) before calls (9).
  CHECK(r->key(t.nodes[1].node) == "b");
  CHECK(r->key(t.nodes[2].node) == "d");
  // The tree edge of c is b -related_to-> c, followed forward.
  const auto& c = t.nodes[3];
  CHECK(r->key(c.parent) == "b");
  CHECK(r->key(r->edge_source(c.edge)) == "b");
  CHECK(c.forward);

  TraverseOptions in;
  in.direction = Direction::kIn;
  CHECK(Depths(*r, Traverse(*r, a, in)) == M{{"a", 0}, {"c", 1}, {"e", 1}, {"b", 2}});

  TraverseOptions both;
  both.direction = Direction::kBoth;
  both.depth = 1;
  CHECK(Depths(*r, Traverse(*r, a, both)) == M{{"a", 0}, {"b", 1}, {"c", 1}, {"d", 1}, {"e", 1}});

  TraverseOptions calls;
  calls.relations = *ParseRelations(*r, {"calls"});
  CHECK(Depths(*r, Traverse(*r, a, calls)) == M{{"a", 0}, {"d", 1}});

  TraverseOptions zero;
  zero.depth = 0;
  CHECK(Depths(*r, Traverse(*r, a, zero)) == M{{"a", 0}});

  auto f = Traverse(*r, GraphFixture::Index(*r, "f"), both);
  CHECK(f.nodes.size() == 1);
}

TEST_CASE("traverse honours limit and min-confidence", "[query][traverse]") {
  auto g = Small();
  g.state().nodes[3].confidence = 0.2f;  // d
  auto r = g.Open();
  uint32_t a = GraphFixture::Index(*r, "a");
  TraverseOptions o;
  o.limit = 2;
  auto t = Traverse(*r, a, o);
  CHECK(t.nodes.size() == 2);
  CHECK(t.truncated);
  o.limit = 4;  // exactly everything: not truncated
  CHECK_FALSE(Traverse(*r, a, o).truncated);
  o.limit = 0;
  CHECK(Traverse(*r, a, o).nodes.empty());

  TraverseOptions conf;
  conf.min_confidence = 0.5f;
  CHECK(Depths(*r, Traverse(*r, a, conf)).count("d") == 0);
  // The start is reported whatever its confidence.
  CHECK(Traverse(*r, GraphFixture::Index(*r, "d"), conf).nodes.size() == 1);
}

TEST_CASE("traverse JSON carries depth and tree edges", "[query][traverse]") {
  auto g = Small();
  auto r = g.Open();
  TraverseOptions o;
  o.direction = Direction::kIn;
  Json j = TraverseJson(*r, Traverse(*r, GraphFixture::Index(*r, "a"), o), o);
  CHECK(j["query"] == "traverse");
  CHECK(j["start"]["key"] == "a");
  CHECK(j["nodes"].size() == 4);
  CHECK(j["nodes"][0].contains("via") == false);
  CHECK(j["nodes"][1]["via"]["followed"] == "backward");
  CHECK(j["nodes"][1]["via"]["dst"] == "a");
}

TEST_CASE("traverse matches a reference BFS on random graphs", "[query][traverse]") {
  for (uint64_t seed = 1; seed <= 6; ++seed) {
    auto g = amem::testing::RandomGraph(seed, 40, 90);
    auto r = g.Open();
    for (Direction d : {Direction::kOut, Direction::kIn, Direction::kBoth}) {
      TraverseOptions o;
      o.direction = d;
      o.depth = 3;
      o.limit = 1000;
      if (seed % 2) o.relations = *ParseRelations(*r, {"caused_by,contradicts"});
      for (uint32_t s = 0; s < r->node_count(); s += 7) {
        auto t = Traverse(*r, s, o);
        // Reference: the same level order, neighbours by scanning every edge.
        std::vector<TraversedNode> ref{{s, 0, s, kNoEdge, true}};
        std::vector<bool> seen(r->node_count());
        seen[s] = true;
        for (size_t h = 0; h < ref.size(); ++h) {
          if (ref[h].depth >= o.depth) break;
          for (const auto& nb : amem::testing::RefNeighbors(*r, ref[h].node, d, o.relations)) {
            if (seen[nb.other]) continue;
            seen[nb.other] = true;
            ref.push_back({nb.other, ref[h].depth + 1, ref[h].node, nb.edge, !nb.backward});
          }
        }
        REQUIRE(t.nodes.size() == ref.size());
        for (size_t k = 0; k < ref.size(); ++k) {
          CHECK(t.nodes[k].node == ref[k].node);
          CHECK(t.nodes[k].depth == ref[k].depth);
          CHECK(t.nodes[k].edge == ref[k].edge);
        }
      }
    }
  }
}
