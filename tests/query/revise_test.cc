#include <catch2/catch.hpp>

#include <algorithm>
#include <map>
#include <set>

#include <nlohmann/json.hpp>

#include "common/tokenizer.h"
#include "query/internal/cog_graph.h"
#include "query/revise.h"
#include "tests/query/cog_test_util.h"
#include "tests/query/fixture.h"

using namespace amem;
using namespace amem::query;
using amem::testing::GraphFixture;

namespace {

std::set<std::string> Keys(const std::vector<ReviseRow>& rows) {
  std::set<std::string> out;
  for (const ReviseRow& r : rows) out.insert(r.node.key);
  return out;
}

const ReviseRow* Find(const ReviseResult& res, const std::string& key) {
  for (const ReviseRow& r : res.affected) {
    if (r.node.key == key) return &r;
  }
  return nullptr;
}

// The paper's Figure 4.
GraphFixture PaperGraph() {
  GraphFixture g;
  g.Node("fact:f1", NodeType::kFact, "the api is stable").Confidence(0.9f);
  g.Node("fact:f2", NodeType::kFact, "the tests pass").Confidence(0.8f);
  g.Node("decision:d1", NodeType::kDecision, "ship on friday").Confidence(0.8f);
  g.Node("inference:i1", NodeType::kInference, "clients will not break").Confidence(0.6f);
  g.Node("decision:d2", NodeType::kDecision, "skip the migration guide").Confidence(0.5f);
  g.Node("episode:e", NodeType::kEpisode, "release meeting").Confidence(1.0f);
  g.Edge("fact:f1", "supports", "decision:d1");
  g.Edge("fact:f2", "supports", "decision:d1");
  g.Edge("fact:f1", "supports", "inference:i1");
  g.Edge("decision:d2", "caused_by", "inference:i1");
  g.Edge("episode:e", "caused_by", "decision:d1");  // d1 stands, so e is untouched
  g.Edge("fact:f1", "related_to", "fact:f2");       // not a dependency
  return g;
}

}  // namespace

TEST_CASE("revise: alternative support halts the cascade", "[query][revise]") {
  GraphFixture g = PaperGraph();
  auto r = g.Open();
  auto res = Revise(*r, {GraphFixture::Index(*r, "fact:f1")});
  REQUIRE(res.ok());
  REQUIRE(res->retracted.size() == 1);
  CHECK(res->retracted[0].key == "fact:f1");
  CHECK(Keys(res->affected) ==
        std::set<std::string>{"decision:d1", "inference:i1", "decision:d2"});

  const ReviseRow* d1 = Find(*res, "decision:d1");
  REQUIRE(d1);
  CHECK_FALSE(d1->falls);
  CHECK(d1->support_total == 2);
  CHECK(d1->support_lost == 1);
  CHECK(d1->confidence_loss == Approx(0.4));
  CHECK(d1->depth == 1);

  // An inference with no other support falls and takes its decision with it.
  const ReviseRow* i1 = Find(*res, "inference:i1");
  const ReviseRow* d2 = Find(*res, "decision:d2");
  REQUIRE(i1);
  REQUIRE(d2);
  CHECK(i1->falls);
  CHECK(i1->confidence_loss == Approx(0.6));
  CHECK(d2->falls);
  CHECK(d2->depth == 2);
  CHECK(Keys(res->unsupported_inferences) == std::set<std::string>{"inference:i1"});
  CHECK(Keys(res->unsupported_decisions) == std::set<std::string>{"decision:d2"});
  CHECK(res->fallen_count == 2);
  CHECK(res->total_impact == Approx(0.4 + 0.6 + 0.5));

  // Sorted by loss descending, then index.
  REQUIRE(res->affected.size() == 3);
  CHECK(res->affected[0].node.key == "inference:i1");
  CHECK(res->affected[1].confidence_loss >= res->affected[2].confidence_loss);
}

TEST_CASE("revise: directions follow the relation contract", "[query][revise]") {
  GraphFixture g = PaperGraph();
  auto r = g.Open();
  // Retracting an effect or a claim does not touch its causes or evidence.
  auto res = Revise(*r, {GraphFixture::Index(*r, "decision:d2")});
  REQUIRE(res.ok());
  CHECK(res->affected.empty());
  CHECK(res->total_impact == 0);
  // Retracting both supports of d1 makes it fall, and e (caused by d1) with it.
  auto both = Revise(*r, {GraphFixture::Index(*r, "fact:f1"), GraphFixture::Index(*r, "fact:f2"),
                          GraphFixture::Index(*r, "fact:f1")});
  REQUIRE(both.ok());
  CHECK(both->retracted.size() == 2);
  const ReviseRow* d1 = Find(*both, "decision:d1");
  const ReviseRow* e = Find(*both, "episode:e");
  REQUIRE(d1);
  REQUIRE(e);
  CHECK(d1->falls);
  CHECK(e->falls);
  CHECK(both->unsupported_decision_count == 2);
}

TEST_CASE("revise: the outcome does not depend on visiting order", "[query][revise]") {
  // w is supported by a (depth 1) and b (depth 2); both fall, so w falls.
  GraphFixture g;
  for (auto k : {"fact:r", "fact:a", "fact:m", "fact:b", "inference:w"}) g.Node(k);
  g.Edge("fact:r", "supports", "fact:a");
  g.Edge("fact:r", "supports", "fact:m");
  g.Edge("fact:m", "supports", "fact:b");
  g.Edge("fact:a", "supports", "inference:w");
  g.Edge("fact:b", "supports", "inference:w");
  g.Edge("inference:w", "supports", "inference:w");  // a self-loop is no support
  auto r = g.Open();
  auto res = Revise(*r, {GraphFixture::Index(*r, "fact:r")});
  REQUIRE(res.ok());
  const ReviseRow* w = Find(*res, "inference:w");
  REQUIRE(w);
  CHECK(w->falls);
  CHECK(w->support_total == 2);
  CHECK(res->fallen_count == 4);
}

TEST_CASE("revise: cycles terminate and mutual support stands", "[query][revise]") {
  GraphFixture g;
  for (auto k : {"fact:r", "fact:a", "fact:b"}) g.Node(k);
  g.Edge("fact:r", "supports", "fact:a");
  g.Edge("fact:a", "supports", "fact:b");
  g.Edge("fact:b", "supports", "fact:a");
  auto r = g.Open();
  auto res = Revise(*r, {GraphFixture::Index(*r, "fact:r")});
  REQUIRE(res.ok());
  REQUIRE(res->affected.size() == 1);
  CHECK(res->affected[0].node.key == "fact:a");
  CHECK_FALSE(res->affected[0].falls);
  // Retracting the whole cycle's support plus one member brings the other down.
  auto two = Revise(*r, {GraphFixture::Index(*r, "fact:r"), GraphFixture::Index(*r, "fact:b")});
  REQUIRE(two.ok());
  REQUIRE(two->affected.size() == 1);
  CHECK(two->affected[0].falls);
}

TEST_CASE("revise: bad input is a clear error", "[query][revise]") {
  GraphFixture g = PaperGraph();
  auto r = g.Open();
  auto res = Revise(*r, {r->node_count()});
  CHECK(res.status().IsInvalidArgument());
  auto hyp = ContradictedBy(*r, "not the");
  CHECK(hyp.status().IsInvalidArgument());
  GraphFixture empty;
  auto e = empty.Open();
  auto none = Revise(*e, {});
  REQUIRE(none.ok());
  CHECK(none->affected.empty());
}

TEST_CASE("revise --hypothesis retracts what it contradicts, by whole words",
          "[query][revise]") {
  for (bool term_index : {true, false}) {
    GraphFixture g;
    g.Node("fact:cache", NodeType::kFact, "The cache is enabled.").Confidence(0.9f);
    g.Node("fact:cache-now", NodeType::kFact, "the cache is now enabled");
    g.Node("fact:cache-more", NodeType::kFact, "the cache is enabled and fast");
    g.Node("fact:node", NodeType::kFact, "we know the node cache is enabled");
    g.Node("fact:neg", NodeType::kFact, "the cache is never enabled");
    g.Node("decision:keep", NodeType::kDecision, "keep the warm path");
    g.Edge("fact:cache", "supports", "decision:keep");
    snapshot::WriterOptions wo;
    wo.term_index = term_index;
    auto r = g.Open(wo);
    auto hit = ContradictedBy(*r, "The cache is NOT enabled");
    REQUIRE(hit.ok());
    REQUIRE(hit->size() == 1);
    CHECK(r->key((*hit)[0]) == "fact:cache");
    auto res = Revise(*r, *hit);
    REQUIRE(res.ok());
    REQUIRE(res->affected.size() == 1);
    CHECK(res->affected[0].node.key == "decision:keep");
    CHECK(res->affected[0].falls);
    // The positive hypothesis contradicts the negated fact only.
    auto pos = ContradictedBy(*r, "cache enabled");
    REQUIRE(pos.ok());
    REQUIRE(pos->size() == 1);
    CHECK(r->key((*pos)[0]) == "fact:neg");
    // Words the snapshot does not know: nothing to retract.
    auto unknown = ContradictedBy(*r, "the zebra is not enabled");
    REQUIRE(unknown.ok());
    CHECK(unknown->empty());
  }
}

TEST_CASE("revise matches a reference fixed point on random graphs", "[query][revise]") {
  for (uint64_t seed = 1; seed <= 20; ++seed) {
    cogtest::RandomGraph rg = cogtest::MakeRandomGraph(seed, 40, 90);
    auto r = rg.fixture.Open();
    const uint32_t n = r->node_count();
    std::vector<uint32_t> roots{static_cast<uint32_t>(seed % n),
                                static_cast<uint32_t>((seed * 7) % n)};
    auto res = Revise(*r, roots);
    REQUIRE(res.ok());
    // Reference: iterate to the least fixed point.
    std::vector<char> fallen(n, 0);
    for (uint32_t x : roots) fallen[x] = 1;
    for (bool changed = true; changed;) {
      changed = false;
      for (uint32_t w = 0; w < n; ++w) {
        if (fallen[w]) continue;
        uint32_t total = 0, lost = 0;
        ForEachSupport(*r, w, [&](uint32_t s, uint32_t) {
          ++total;
          lost += fallen[s];
        });
        if (total > 0 && lost == total) fallen[w] = changed = 1;
      }
    }
    std::map<uint32_t, bool> expect;  // affected -> falls
    for (uint32_t w = 0; w < n; ++w) {
      if (std::count(roots.begin(), roots.end(), w)) continue;
      bool touched = false;
      ForEachSupport(*r, w, [&](uint32_t s, uint32_t) { touched |= fallen[s] != 0; });
      if (touched) expect[w] = fallen[w] != 0;
    }
    ReviseOptions all;
    all.limit = n;
    auto full = Revise(*r, roots, all);
    REQUIRE(full.ok());
    std::map<uint32_t, bool> got;
    for (const ReviseRow& row : full->affected) got[row.node.index] = row.falls;
    INFO("seed " << seed);
    CHECK(got == expect);
    // Identical output across runs.
    auto again = Revise(*r, roots, all);
    REQUIRE(again.ok());
    CHECK(RenderJson(ReviseJson(*full)) == RenderJson(ReviseJson(*again)));
  }
}
