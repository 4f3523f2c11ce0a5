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
