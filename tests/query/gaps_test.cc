#include <catch2/catch.hpp>

#include <algorithm>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "query/internal/cog_graph.h"
#include "query/gaps.h"
#include "tests/query/cog_test_util.h"
#include "tests/query/fixture.h"

using namespace amem;
using namespace amem::query;
using amem::testing::GraphFixture;

namespace {

using amem::cogtest::kDay;
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
  // 6. orphaned: a constraint on code the code graph no longer has (stubs); a link
  //    to a live symbol, or to a stub that is not code, is fine.
  node("constraint:no-alloc", NodeType::kConstraint, 0.5f);
  g.Edge("constraint:no-alloc", "constrains", "symbol:gone.cc#Parse");
  g.Edge("constraint:no-alloc", "constrains", "file:gone.cc");
  g.Node("symbol:live.cc#Run", NodeType::kSymbol, "function Run").Ts(kNow - kDay);
  node("fact:about-live", NodeType::kFact, 0.9f);
  g.Edge("fact:about-live", "related_to", "symbol:live.cc#Run");
  g.Edge("fact:about-live", "related_to", "entity:never-written");
  return g;
}

// The five kinds by their definitions (gaps.h), node by node through the
// reader's accessors: what FindGaps must find, in its order. (The sixth, orphaned,
// comes from query/orphans.h, tested on its own; the random graphs hold no code.)
struct ReferenceGap {
  uint32_t node;
  GapKind kind;
  double severity;
  uint32_t other;  // the node the description names, or kNone
  uint32_t downstream;
};
constexpr uint32_t kNone = ~0u;

bool Superseded(const snapshot::Reader& r, uint32_t i) {
  for (uint32_t k = r.in_begin(i); k < r.in_end(i); ++k) {
    if (r.edge_rel(r.in_edge(k)) == kSupersedes && r.in_source(k) != i) return true;
  }
  return false;
}

// Versions in the longest supersedes chain from v, not revisiting `path`.
uint32_t ChainVersions(const snapshot::Reader& r, uint32_t v, std::vector<uint32_t>* path) {
  path->push_back(v);
  uint32_t best = 0;
  for (uint32_t j = r.out_begin(v); j < r.out_end(v); ++j) {
    uint32_t w = r.edge_target(j);
    if (r.edge_rel(j) != kSupersedes || w == v) continue;
    if (std::find(path->begin(), path->end(), w) != path->end()) continue;
    best = std::max(best, ChainVersions(r, w, path));
  }
  path->pop_back();
  return best + 1;
}

std::vector<ReferenceGap> ReferenceGaps(const snapshot::Reader& r, const GapsOptions& o) {
  const int64_t now = o.now ? *o.now : r.newest_timestamp();
  std::vector<ReferenceGap> out;
  auto dependents = [&](uint32_t x) {
    std::vector<uint32_t> d;
    ForEachDependent(r, x, [&](uint32_t w, uint32_t) { d.push_back(w); });
    return d;
  };
  auto downstream = [&](uint32_t start) {
    std::set<uint32_t> seen{start};
    std::vector<uint32_t> frontier{start};
    for (int hop = 0; hop < 3; ++hop) {
      std::vector<uint32_t> next;
      for (uint32_t u : frontier) {
        for (uint32_t w : dependents(u)) {
          if (seen.insert(w).second) next.push_back(w);
        }
      }
      frontier = next;
    }
    return static_cast<uint32_t>(seen.size() - 1);
  };
  for (uint32_t i = 0; i < r.node_count(); ++i) {
    if (r.is_stub(i)) continue;
    const NodeType type = r.type(i);
    const float conf = r.confidence(i);
    std::set<uint32_t> support;
    ForEachSupport(r, i, [&](uint32_t s, uint32_t) { support.insert(s); });
    if (type == NodeType::kDecision && support.empty()) {
      out.push_back({i, GapKind::kUnjustifiedDecision, 0.6 + 0.4 * conf, kNone, 0});
    }
    if (type == NodeType::kInference && support.size() == 1) {
      out.push_back({i, GapKind::kSingleSourceInference, 0.4 + 0.4 * conf, *support.begin(), 0});
    }
    uint32_t best = kNone, active = kNone;
    for (uint32_t d : dependents(i)) {
      if (d == i) continue;
      float dc = r.confidence(d);
      if (dc > conf && (best == kNone || dc > r.confidence(best) ||
                        (dc == r.confidence(best) && d < best))) {
        best = d;
      }
      if (r.type(d) == NodeType::kDecision && !Superseded(r, d)) active = std::min(active, d);
    }
    if (conf < o.threshold && best != kNone) {
      out.push_back({i, GapKind::kLowConfidenceFoundation,
                     0.3 + 0.6 * (r.confidence(best) - conf), best, 0});
    }
    const int64_t age = now - r.updated_ts(i);
    if (age > o.stale_days * kDay && active != kNone) {
      double days = static_cast<double>(age) / kDay;
      double over = o.stale_days > 0 ? (days - o.stale_days) / o.stale_days : 1.0;
      out.push_back({i, GapKind::kStaleEvidence, 0.3 + 0.5 * std::min(1.0, over), active, 0});
    }
    bool head = false;
    for (uint32_t j = r.out_begin(i); j < r.out_end(i); ++j) {
      head |= r.edge_rel(j) == kSupersedes && r.edge_target(j) != i;
    }
    if (head && !Superseded(r, i)) {
      std::vector<uint32_t> path;
      uint32_t versions = ChainVersions(r, i, &path);
      if (versions > 2) {
        out.push_back({i, GapKind::kUnstableKnowledge, std::min(1.0, 0.2 * (versions - 1)), kNone,
                       0});
      }
    }
  }
  std::sort(out.begin(), out.end(), [](const ReferenceGap& a, const ReferenceGap& b) {
    if (a.severity != b.severity) return a.severity > b.severity;
    if (a.node != b.node) return a.node < b.node;
    return a.kind < b.kind;
  });
  for (ReferenceGap& g : out) g.downstream = downstream(g.node);
  return out;
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
                                    {"orphaned", "constraint:no-alloc"},
                                });
    CHECK(res->total == 6);
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
      if (row.kind == GapKind::kOrphaned) {
        CHECK(row.severity == Approx(0.5 + 0.4 * 0.5));
        CHECK(row.description == "linked to code the graph no longer has: file:gone.cc "
                                 "(and 1 more links)");
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
  CHECK(res->total == 5);
  o.threshold = 1.5;
  CHECK(FindGaps(*r, o).status().IsInvalidArgument());
  o.threshold = 0.5;
  o.stale_days = -1;
  CHECK(FindGaps(*r, o).status().IsInvalidArgument());
}

TEST_CASE("gaps: categories choose the kinds looked for and counted", "[query][gaps]") {
  auto r = PlantedGaps().Open();
  GapsOptions o;
  auto kinds = ParseGapKinds({"orphaned"});
  REQUIRE(kinds.ok());
  o.kinds = *kinds;
  auto res = FindGaps(*r, o);
  REQUIRE(res.ok());
  REQUIRE(res->gaps.size() == 1);
  CHECK(res->gaps[0].node.key == "constraint:no-alloc");
  CHECK(res->total == 1);
  CHECK(res->counts[static_cast<int>(GapKind::kUnjustifiedDecision)] == 0);
  kinds = ParseGapKinds({"orphaned,unjustified_decision", "stale_evidence"});
  REQUIRE(kinds.ok());
  o.kinds = *kinds;
  res = FindGaps(*r, o);
  REQUIRE(res.ok());
  CHECK(KindsAndKeys(*res) == std::set<std::pair<std::string, std::string>>{
                                  {"unjustified_decision", "decision:bare"},
                                  {"stale_evidence", "fact:old"},
                                  {"orphaned", "constraint:no-alloc"}});
  auto bad = ParseGapKinds({"orphans"});
  CHECK(bad.status().IsInvalidArgument());
  CHECK_THAT(bad.status().message(), Catch::Contains("'orphans'") && Catch::Contains("orphaned"));
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

TEST_CASE("gaps equals its definition, node by node, on tangled graphs", "[query][gaps]") {
  // Chains here are short enough for the reference's plain DFS (no memo) and the
  // graphs hold cycles, forks, self-loops and stubs.
  int rows = 0;
  for (uint64_t seed = 1; seed <= 12; ++seed) {
    auto r = cogtest::MakeTangledGraph(seed, 40 + 10 * static_cast<uint32_t>(seed), 300).Open();
    for (int variant = 0; variant < 4; ++variant) {
      GapsOptions o;
      o.limit = r->node_count() * kGapKindCount;
      if (variant == 1) o.threshold = 0.8;
      if (variant == 2) o.stale_days = 0;
      if (variant == 3) {
        o.threshold = 0.3;
        o.stale_days = 45;
        o.now = r->newest_timestamp() + 10 * kDay;
      }
      INFO("seed " << seed << " variant " << variant);
      auto res = FindGaps(*r, o);
      REQUIRE(res.ok());
      std::vector<ReferenceGap> ref = ReferenceGaps(*r, o);
      REQUIRE(res->total == ref.size());
      REQUIRE(res->gaps.size() == ref.size());
      size_t counts[kGapKindCount] = {};
      for (size_t k = 0; k < ref.size(); ++k) {
        const GapRow& row = res->gaps[k];
        ++counts[static_cast<int>(ref[k].kind)];
        REQUIRE(row.node.index == ref[k].node);
        REQUIRE(row.kind == ref[k].kind);
        REQUIRE(row.severity == ref[k].severity);
        REQUIRE(row.downstream == ref[k].downstream);
        if (ref[k].other != kNone) {
          REQUIRE(row.description.find(std::string(r->key(ref[k].other))) != std::string::npos);
        }
      }
      for (int k = 0; k < kGapKindCount; ++k) REQUIRE(res->counts[k] == counts[k]);
      rows += static_cast<int>(ref.size());
      // A limit keeps the first rows, in the same order, and still counts them all.
      o.limit = 3;
      auto top = FindGaps(*r, o);
      REQUIRE(top.ok());
      REQUIRE(top->total == ref.size());
      REQUIRE(top->gaps.size() == std::min<size_t>(3, ref.size()));
      for (size_t k = 0; k < top->gaps.size(); ++k) {
        REQUIRE(RenderJson(GapsJson(*top)["gaps"][k]) == RenderJson(GapsJson(*res)["gaps"][k]));
      }
    }
  }
  CHECK(rows > 1000);  // every kind, many times over
}
