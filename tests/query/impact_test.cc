#include <catch2/catch.hpp>

#include <map>

#include <nlohmann/json.hpp>

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
