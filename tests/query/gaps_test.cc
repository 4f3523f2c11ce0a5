#include <catch2/catch.hpp>

#include <set>
#include <utility>

#include "query/gaps.h"
#include "tests/query/cog_test_util.h"
#include "tests/query/fixture.h"

using namespace amem;
using namespace amem::query;
using amem::testing::GraphFixture;

namespace {

constexpr int64_t kDay = 86400;
constexpr int64_t kNow = 1000 * kDay;

// Every kind of gap planted exactly once; everything else is sound.
GraphFixture PlantedGaps() {
  GraphFixture g;
  auto node = [&](const char* key, NodeType type, float conf) {
    g.Node(key, type, key).Confidence(conf).Ts(kNow - kDay);
  };
  // Sound core: a decision with two solid, fresh supports.
  node("fact:a", NodeType::kFact, 0.9f);
  node("fact:b", NodeType::kFact, 0.8f);
  node("decision:sound", NodeType::kDecision, 0.9f);
  g.Edge("fact:a", "supports", "decision:sound");
  g.Edge("fact:b", "supports", "decision:sound");
  node("inference:sound", NodeType::kInference, 0.7f);
  g.Edge("inference:sound", "caused_by", "fact:a");
  g.Edge("fact:b", "supports", "inference:sound");
  // 1. unjustified decision (related_to is not support).
  node("decision:bare", NodeType::kDecision, 0.5f);
  g.Edge("decision:bare", "related_to", "fact:a");
  // 2. single-source inference: two edges, one supporter.
  node("inference:single", NodeType::kInference, 0.5f);
  g.Edge("inference:single", "caused_by", "fact:b");
  g.Edge("fact:b", "supports", "inference:single");
  // 3. low-confidence foundation under a stronger claim.
  node("fact:weak", NodeType::kFact, 0.2f);
  g.Edge("fact:weak", "supports", "fact:a");
  node("fact:weak-ok", NodeType::kFact, 0.1f);  // weak, but its dependent is weaker
  node("fact:weaker", NodeType::kFact, 0.05f);
  g.Edge("fact:weak-ok", "supports", "fact:weaker");
  g.Edge("fact:a", "supports", "fact:weaker");
  g.Edge("fact:b", "supports", "fact:weak-ok");
  // 4. unstable knowledge: v3 supersedes v2 supersedes v1; a 2-chain is fine.
  node("fact:v1", NodeType::kFact, 0.6f);
  node("fact:v2", NodeType::kFact, 0.6f);
  node("correction:v3", NodeType::kCorrection, 0.6f);
  g.Edge("fact:v2", "supersedes", "fact:v1");
  g.Edge("correction:v3", "supersedes", "fact:v2");
  node("fact:w1", NodeType::kFact, 0.6f);
  node("fact:w2", NodeType::kFact, 0.6f);
  g.Edge("fact:w2", "supersedes", "fact:w1");
  // 5. stale evidence for an active decision; stale evidence of a superseded
  //    decision or of a fact is fine.
  g.Node("fact:old", NodeType::kFact, "old").Confidence(0.9f).Ts(kNow - 40 * kDay);
  g.Edge("fact:old", "supports", "decision:sound");
  g.Node("fact:old-2", NodeType::kFact, "old too").Confidence(0.9f).Ts(kNow - 40 * kDay);
  node("decision:retired", NodeType::kDecision, 0.9f);
  node("decision:current", NodeType::kDecision, 0.9f);
  g.Edge("fact:old-2", "supports", "decision:retired");
  g.Edge("fact:old-2", "supports", "fact:b");
  g.Edge("decision:current", "supersedes", "decision:retired");
  g.Edge("fact:a", "supports", "decision:current");
  g.Edge("fact:b", "supports", "decision:retired");
  g.Node("fact:clock", NodeType::kFact, "newest").Confidence(0.9f).Ts(kNow);
  g.Edge("fact:clock", "related_to", "fact:a");
  return g;
}

std::set<std::pair<std::string, std::string>> KindsAndKeys(const GapsResult& res) {
  std::set<std::pair<std::string, std::string>> out;
  for (const GapRow& g : res.gaps) out.insert({GapKindName(g.kind), g.node.key});
  return out;
}

}  // namespace

TEST_CASE("gaps: each kind appears exactly where planted", "[query][gaps]") {
  GraphFixture g = PlantedGaps();
  for (bool term_index : {true, false}) {
    snapshot::WriterOptions wo;
    wo.term_index = term_index;
    auto r = g.Open(wo);
    auto res = FindGaps(*r);
    REQUIRE(res.ok());
    CHECK(res->now == kNow);
    CHECK(KindsAndKeys(*res) == std::set<std::pair<std::string, std::string>>{
                                    {"unjustified_decision", "decision:bare"},
                                    {"single_source_inference", "inference:single"},
                                    {"low_confidence_foundation", "fact:weak"},
                                    {"unstable_knowledge", "correction:v3"},
                                    {"stale_evidence", "fact:old"},
                                });
    CHECK(res->total == 5);
    for (int k = 0; k < kGapKindCount; ++k) CHECK(res->counts[k] == 1);
    for (size_t k = 1; k < res->gaps.size(); ++k) {
      CHECK(res->gaps[k - 1].severity >= res->gaps[k].severity);
    }
    for (const GapRow& row : res->gaps) {
      CHECK_FALSE(row.description.empty());
      CHECK(row.severity > 0);
      CHECK(row.severity <= 1);
      if (row.kind == GapKind::kUnjustifiedDecision) {
        CHECK(row.severity == Approx(0.6 + 0.4 * 0.5));
        CHECK(row.downstream == 0);
      }
      if (row.kind == GapKind::kLowConfidenceFoundation) {
        // weak -> a -> {decision:sound, weaker, inference:sound, decision:current}
        CHECK(row.downstream == 5);
        CHECK(row.description.find("fact:a") != std::string::npos);
      }
      if (row.kind == GapKind::kStaleEvidence) {
        CHECK(row.description.find("40 days") != std::string::npos);
      }
      if (row.kind == GapKind::kUnstableKnowledge) {
        CHECK(row.description.find("3 versions") != std::string::npos);
      }
    }
  }
}

TEST_CASE("gaps: options move the thresholds", "[query][gaps]") {
  GraphFixture g = PlantedGaps();
  auto r = g.Open();
  GapsOptions o;
  o.stale_days = 50;  // fact:old is 40 days old
  auto res = FindGaps(*r, o);
  REQUIRE(res.ok());
  CHECK(res->counts[static_cast<int>(GapKind::kStaleEvidence)] == 0);
  o.stale_days = 30;
  o.now = kNow + 30 * kDay;  // now everything but fact:clock... is older than 30 days
  res = FindGaps(*r, o);
  REQUIRE(res.ok());
  CHECK(res->now == kNow + 30 * kDay);
  CHECK(res->counts[static_cast<int>(GapKind::kStaleEvidence)] > 1);
  o = {};
  o.threshold = 0.0;
  res = FindGaps(*r, o);
  REQUIRE(res.ok());
  CHECK(res->counts[static_cast<int>(GapKind::kLowConfidenceFoundation)] == 0);
  o.limit = 2;
  res = FindGaps(*r, o);
  REQUIRE(res.ok());
  CHECK(res->gaps.size() == 2);
  CHECK(res->total == 4);
  o.threshold = 1.5;
  CHECK(FindGaps(*r, o).status().IsInvalidArgument());
  o.threshold = 0.5;
  o.stale_days = -1;
  CHECK(FindGaps(*r, o).status().IsInvalidArgument());
}

TEST_CASE("gaps: longer and cyclic supersedes chains", "[query][gaps]") {
  GraphFixture g;
  for (int i = 0; i < 5; ++i) g.Node("fact:c" + std::to_string(i));
  for (int i = 1; i < 5; ++i) {
    g.Edge("fact:c" + std::to_string(i), "supersedes", "fact:c" + std::to_string(i - 1));
  }
  // A pure cycle has no head and must not hang.
  g.Node("fact:x");
  g.Node("fact:y");
  g.Edge("fact:x", "supersedes", "fact:y");
  g.Edge("fact:y", "supersedes", "fact:x");
  // A head above a cycle.
  g.Node("fact:h");
  g.Edge("fact:h", "supersedes", "fact:x");
  auto r = g.Open();
  auto res = FindGaps(*r);
  REQUIRE(res.ok());
  REQUIRE(res->gaps.size() == 2);
  CHECK(res->gaps[0].node.key == "fact:c4");
  CHECK(res->gaps[0].severity == Approx(0.8));
  CHECK(res->gaps[1].node.key == "fact:h");
  CHECK(res->gaps[1].kind == GapKind::kUnstableKnowledge);
}

TEST_CASE("gaps: empty graph and identical output across runs", "[query][gaps]") {
  GraphFixture empty;
  auto e = empty.Open();
  auto none = FindGaps(*e);
  REQUIRE(none.ok());
  CHECK(none->gaps.empty());
  for (uint64_t seed = 1; seed <= 5; ++seed) {
    auto r = cogtest::MakeRandomGraph(seed, 60, 150).fixture.Open();
    auto a = FindGaps(*r);
    auto b = FindGaps(*r);
    REQUIRE(a.ok());
    REQUIRE(b.ok());
    CHECK(RenderJson(GapsJson(*a)) == RenderJson(GapsJson(*b)));
  }
}

namespace amem::query {
namespace {

TEST_CASE("gaps: a limit keeps the first rows of the whole answer and all the counts",
          "[query][gaps]") {
  for (uint64_t seed = 1; seed <= 6; ++seed) {
    auto r = cogtest::MakeRandomGraph(seed, 400, 1200).fixture.Open();
    GapsOptions all;
    all.limit = 1u << 30;
    auto whole = FindGaps(*r, all);
    REQUIRE(whole.ok());
    REQUIRE(whole->gaps.size() == whole->total);
    REQUIRE(whole->total > 20);
    for (size_t limit : {size_t{0}, size_t{1}, size_t{7}, size_t{20}}) {
      GapsOptions o;
      o.limit = limit;
      auto part = FindGaps(*r, o);
      REQUIRE(part.ok());
      CHECK(part->total == whole->total);
      for (int k = 0; k < kGapKindCount; ++k) CHECK(part->counts[k] == whole->counts[k]);
      REQUIRE(part->gaps.size() == limit);
      for (size_t k = 0; k < limit; ++k) {
        CHECK(part->gaps[k].node.index == whole->gaps[k].node.index);
        CHECK(part->gaps[k].kind == whole->gaps[k].kind);
        CHECK(part->gaps[k].severity == whole->gaps[k].severity);
        CHECK(part->gaps[k].downstream == whole->gaps[k].downstream);
        CHECK(part->gaps[k].description == whole->gaps[k].description);
      }
    }
  }
}

}  // namespace
}  // namespace amem::query
