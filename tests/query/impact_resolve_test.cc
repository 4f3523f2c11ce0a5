#include <catch2/catch.hpp>

#include <map>

#include "query/impact.h"
#include "query/resolve.h"
#include "snapshot/reader.h"
#include "tests/query/fixture.h"

using namespace amem;
using namespace amem::query;
using amem::testing::GraphFixture;

TEST_CASE("impact walks dependents: caused_by in, supports out", "[query][impact]") {
  // x is a fact. d1 caused_by x; x supports c1 (an inference); c1 supports dec
  // (a decision); d2 caused_by d1. Non-dependents: x caused_by y (x's cause),
  // z supports x (x's evidence), x related_to w.
  GraphFixture g;
  g.Node("x", NodeType::kFact);
  g.Node("d1", NodeType::kFact);
  g.Node("d2", NodeType::kInference);
  g.Node("c1", NodeType::kInference);
  g.Node("dec", NodeType::kDecision);
  for (const char* k : {"y", "z", "w"}) g.Node(k);
  g.Edge("d1", "caused_by", "x");
  g.Edge("x", "supports", "c1");
  g.Edge("c1", "supports", "dec");
  g.Edge("d2", "caused_by", "d1");
  g.Edge("x", "caused_by", "y");
  g.Edge("z", "supports", "x");
  g.Edge("x", "related_to", "w");
  g.Edge("dec", "caused_by", "x");  // a second route to dec, at depth 1
  auto r = g.Open();
  auto I = [&](const char* k) { return GraphFixture::Index(*r, k); };

  auto res = Impact(*r, I("x"), ImpactOptions{});
  std::map<std::string, uint32_t> depth;
  for (const auto& n : res.nodes) depth[std::string(r->key(n.node))] = n.depth;
  CHECK(depth == std::map<std::string, uint32_t>{{"d1", 1}, {"c1", 1}, {"dec", 1}, {"d2", 2}});
  CHECK(res.reached == 4);
  CHECK(res.decisions == 1);
  CHECK(res.inferences == 2);
  // caused_by dependents come before supports ones.
  CHECK(r->edge_rel(res.nodes[0].edge) == kCausedBy);
  CHECK(r->edge_rel(res.nodes.back().edge) != kSupports);  // d2, via caused_by

  ImpactOptions shallow;
  shallow.depth = 1;
  CHECK(Impact(*r, I("x"), shallow).reached == 3);
  ImpactOptions few;
  few.limit = 1;
  auto cut = Impact(*r, I("x"), few);
  CHECK(cut.nodes.size() == 1);
  CHECK(cut.reached == 4);  // counts cover everything
  CHECK(cut.truncated);
  CHECK(Impact(*r, I("w"), ImpactOptions{}).reached == 0);

  Json j = ImpactJson(*r, res);
  CHECK(j["affected_decisions"] == 1);
  CHECK(j["dependents"].size() == 4);
}

TEST_CASE("impact is cycle-safe and never counts the root", "[query][impact]") {
  GraphFixture g;
  g.Node("a");
  g.Node("b");
  g.Edge("a", "caused_by", "b");
  g.Edge("b", "caused_by", "a");
  g.Edge("a", "supports", "a");
  auto r = g.Open();
  auto res = Impact(*r, GraphFixture::Index(*r, "a"), ImpactOptions{});
  CHECK(res.reached == 1);
  CHECK(r->key(res.nodes[0].node) == "b");
}

TEST_CASE("resolve follows supersedes to the newest version", "[query][resolve]") {
  // v2 supersedes v1; v3a and v3b both supersede v2 (v3b newer); v4 supersedes v3b.
  GraphFixture g;
  g.Node("v1").Ts(100);
  g.Node("v2").Ts(200);
  g.Node("v3a").Ts(300);
  g.Node("v3b").Ts(310);
  g.Node("v4").Ts(400);
  g.Node("solo").Ts(1);
  g.Edge("v2", "supersedes", "v1");
  g.Edge("v3a", "supersedes", "v2");
  g.Edge("v3b", "supersedes", "v2");
  g.Edge("v4", "supersedes", "v3b");
  g.Edge("v1", "related_to", "solo");
  auto r = g.Open();
  auto I = [&](const char* k) { return GraphFixture::Index(*r, k); };
  auto keys = [&](const ResolveResult& res) {
    std::vector<std::string> out;
    for (uint32_t i : res.chain) out.emplace_back(r->key(i));
    return out;
  };
  using V = std::vector<std::string>;
  auto res = Resolve(*r, I("v1"), ResolveOptions{});
  CHECK(keys(res) == V{"v1", "v2", "v3b", "v4"});
  CHECK(res.competing == 1);
  CHECK_FALSE(res.cycle);
  REQUIRE(res.edges.size() == 3);
  CHECK(r->edge_source(res.edges[0]) == I("v2"));
  CHECK(keys(Resolve(*r, I("v4"), ResolveOptions{})) == V{"v4"});
  CHECK(keys(Resolve(*r, I("solo"), ResolveOptions{})) == V{"solo"});
  ResolveOptions two;
  two.limit = 2;
  auto cut = Resolve(*r, I("v1"), two);
  CHECK(keys(cut) == V{"v1", "v2"});
  CHECK(cut.truncated);
  Json j = ResolveJson(*r, res);
  CHECK(j["current"]["key"] == "v4");
  CHECK(j["chain"].size() == 4);
}

TEST_CASE("resolve: equal timestamps pick the highest index; cycles stop", "[query][resolve]") {
  GraphFixture g;
  g.Node("old").Ts(10);
  g.Node("new-a").Ts(20);
  g.Node("new-b").Ts(20);
  g.Edge("new-a", "supersedes", "old");
  g.Edge("new-b", "supersedes", "old");
  g.Node("p").Ts(1);
  g.Node("q").Ts(2);
  g.Edge("p", "supersedes", "q");
  g.Edge("q", "supersedes", "p");
  auto r = g.Open();
  auto I = [&](const char* k) { return GraphFixture::Index(*r, k); };
  uint32_t winner = std::max(I("new-a"), I("new-b"));
  CHECK(Resolve(*r, I("old"), ResolveOptions{}).chain.back() == winner);
  auto cyc = Resolve(*r, I("p"), ResolveOptions{});
  CHECK(cyc.cycle);
  CHECK(cyc.chain.size() == 2);
  CHECK(cyc.chain.back() == I("q"));
}
