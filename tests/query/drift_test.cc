#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "query/drift.h"
#include "tests/query/cog_test_util.h"
#include "tests/query/fixture.h"

using namespace amem;
using namespace amem::query;
using amem::testing::GraphFixture;

namespace {

using amem::cogtest::kDay;

// run-a: settled. run-b: its cache belief corrected twice (in run-c), its index
// belief once. run-c: the corrections.
GraphFixture Runs() {
  GraphFixture g;
  for (int i = 0; i < 4; ++i) {
    g.Node("fact:a" + std::to_string(i), NodeType::kFact, "settled thing " + std::to_string(i))
        .Run("run-a")
        .Ts(1 * kDay);
  }
  g.Node("fact:cache-v1", NodeType::kFact, "cache size is 64 mb").Run("run-b").Ts(2 * kDay)
      .Confidence(0.9f);
  g.Node("fact:index-v1", NodeType::kFact, "index is btree").Run("run-b").Ts(2 * kDay)
      .Confidence(0.5f);
  g.Node("fact:other", NodeType::kFact, "other").Run("run-b").Ts(2 * kDay);
  g.Node("correction:cache-v2", NodeType::kCorrection, "cache size is 128 mb").Run("run-c")
      .Ts(3 * kDay).Confidence(0.7f);
  g.Node("correction:cache-v3", NodeType::kCorrection, "cache size is 256 mb").Run("run-c")
      .Ts(5 * kDay).Confidence(0.5f);
  g.Node("correction:index-v2", NodeType::kCorrection, "index is lsm").Run("run-c")
      .Ts(4 * kDay).Confidence(0.9f);
  g.Edge("correction:cache-v2", "supersedes", "fact:cache-v1").Ts(3 * kDay);
  g.Edge("correction:cache-v3", "supersedes", "correction:cache-v2").Ts(5 * kDay);
  g.Edge("correction:index-v2", "supersedes", "fact:index-v1").Ts(4 * kDay);
  return g;
}

}  // namespace

TEST_CASE("drift by run orders the repeatedly corrected run first", "[query][drift]") {
  GraphFixture g = Runs();
  auto r = g.Open();
  auto res = Drift(*r);
  REQUIRE(res.ok());
  CHECK_FALSE(res->by_topic);
  REQUIRE(res->clusters.size() == 3);
  const DriftCluster& b = res->clusters[0];
  CHECK(b.label == "run-b");
  CHECK(b.nodes == 3);
  CHECK(b.superseded == 2);
  CHECK(b.stability == Approx(1.0 / 3));
  CHECK(b.events == 2);
  // Deltas: cache 0.7 - 0.9, index 0.9 - 0.5.
  CHECK(b.direction == Approx((-0.2 + 0.4) / 2));
  CHECK(std::string(b.trend) == "rising");
  // Span: node ts day 2 .. event day 4 = 2 days.
  CHECK(b.revisions_per_day == Approx(1.0));
  REQUIRE(b.trajectory.size() == 2);
  CHECK(b.trajectory[0].old_node.key == "fact:cache-v1");
  CHECK(b.trajectory[0].new_node.key == "correction:cache-v2");
  CHECK(b.trajectory[1].old_node.key == "fact:index-v1");
  CHECK(b.trajectory[1].ts == 4 * kDay);

  const DriftCluster& c = res->clusters[1];
  CHECK(c.label == "run-c");
  CHECK(c.stability == Approx(2.0 / 3));
  CHECK(std::string(c.trend) == "falling");
  const DriftCluster& a = res->clusters[2];
  CHECK(a.label == "run-a");
  CHECK(a.stability == 1.0);
  CHECK(std::string(a.trend) == "none");
  CHECK(a.trajectory.empty());

  DriftOptions o;
  o.limit = 1;
  o.trajectory_limit = 1;
  auto one = Drift(*r, o);
  REQUIRE(one.ok());
  CHECK(one->cluster_count == 3);
  REQUIRE(one->clusters.size() == 1);
  CHECK(one->clusters[0].trajectory.size() == 1);
}

TEST_CASE("drift by topic follows each belief's versions", "[query][drift]") {
  GraphFixture g = Runs();
  auto r = g.Open();
  DriftOptions o;
  o.topic = "cache";
  auto res = Drift(*r, o);
  REQUIRE(res.ok());
  CHECK(res->by_topic);
  CHECK(res->relevant == 3);
  REQUIRE(res->clusters.size() == 1);
  const DriftCluster& c = res->clusters[0];
  CHECK(c.label == "correction:cache-v3");
  REQUIRE(c.head);
  CHECK(c.head->key == "correction:cache-v3");
  CHECK(c.nodes == 3);
  CHECK(c.stability == Approx(1.0 / 3));
  CHECK(std::string(c.trend) == "falling");
  REQUIRE(c.trajectory.size() == 2);
  CHECK(c.trajectory[1].new_node.key == "correction:cache-v3");

  // "btree" finds only v1; its component brings in v2. "size index": no node has
  // both words, so any word counts.
  o.topic = "btree";
  res = Drift(*r, o);
  REQUIRE(res.ok());
  REQUIRE(res->clusters.size() == 1);
  CHECK(res->clusters[0].label == "correction:index-v2");
  CHECK(res->clusters[0].nodes == 2);
  o.topic = "size index";
  res = Drift(*r, o);
  REQUIRE(res.ok());
  CHECK(res->clusters.size() == 2);
  CHECK(res->clusters[0].label == "correction:cache-v3");  // less stable first
  o.topic = "zebra";
  res = Drift(*r, o);
  REQUIRE(res.ok());
  CHECK(res->clusters.empty());
  o.topic = "a !";
  CHECK(Drift(*r, o).status().IsInvalidArgument());
}

TEST_CASE("drift output is identical across runs", "[query][drift]") {
  GraphFixture empty;
  auto e = empty.Open();
  auto none = Drift(*e);
  REQUIRE(none.ok());
  CHECK(none->clusters.empty());
  for (uint64_t seed = 1; seed <= 5; ++seed) {
    auto r = cogtest::MakeRandomGraph(seed, 60, 150).fixture.Open();
    DriftOptions o;
    auto a = Drift(*r, o);
    auto b = Drift(*r, o);
    REQUIRE(a.ok());
    REQUIRE(b.ok());
    CHECK(RenderJson(DriftJson(*a, o)) == RenderJson(DriftJson(*b, o)));
    size_t total = 0;
    for (const DriftCluster& c : a->clusters) total += c.nodes;
    CHECK(total == r->node_count());
    o.topic = "cache";
    auto t = Drift(*r, o);
    REQUIRE(t.ok());
    auto t2 = Drift(*r, o);
    REQUIRE(t2.ok());
    CHECK(RenderJson(DriftJson(*t, o)) == RenderJson(DriftJson(*t2, o)));
  }
}
