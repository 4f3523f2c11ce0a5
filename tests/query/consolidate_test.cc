#include <catch2/catch.hpp>

#include <unistd.h>

#include <filesystem>
#include <set>
#include <utility>

#include "query/consolidate.h"
#include "query/negation.h"
#include "snapshot/writer.h"
#include "tests/query/cog_test_util.h"
#include "tests/query/fixture.h"

using namespace amem;
using namespace amem::query;
using amem::testing::GraphFixture;

namespace {

using KeyPair = std::pair<std::string, std::string>;

const char* kBuild = "The build uses ninja and cmake with clang compiler flags enabled by "
                     "default on linux";

// Planted: one near-duplicate pair, one contradiction, one promotable inference,
// one orphan; and near misses of each.
void Plant(GraphFixture& g) {
  auto fact = [&](const std::string& key, const std::string& text, float conf = 0.8f) {
    g.Node(key, NodeType::kFact, text).Confidence(conf);
  };
  fact("fact:build", kBuild, 0.7f);
  fact("fact:build-copy", std::string(kBuild) + " machines", 0.9f);       // J = 10/11
  fact("fact:build-far", "The build uses make and gcc with default flags on linux");
  g.Node("skill:build", NodeType::kSkill, kBuild);  // same words, other type
  fact("fact:cache", "the cache is enabled");
  fact("fact:cache-not", "The cache is not enabled.");
  // Words that merely contain "no" are not negations.
  fact("fact:know", "we know the node cache is enabled");
  fact("fact:node", "the node cache is enabled");
  // Already linked: by contradicts, or by supersedes (a correction).
  fact("fact:index", "the index is stale");
  fact("fact:index-not", "the index is not stale");
  g.Edge("fact:index-not", "contradicts", "fact:index");
  fact("fact:lock", "the lock is held");
  g.Node("correction:lock", NodeType::kCorrection, "the lock is not held");
  g.Edge("correction:lock", "supersedes", "fact:lock");
  // Episodes are not beliefs: no contradiction.
  g.Node("episode:tests", NodeType::kEpisode, "tests passed");
  g.Node("episode:tests-not", NodeType::kEpisode, "tests not passed");
  g.Edge("episode:tests", "temporal_next", "episode:tests-not");

  // Promotions: > 0.9 and >= 3 distinct supporters.
  g.Node("inference:strong", NodeType::kInference, "reads scale").Confidence(0.95f);
  g.Node("inference:two", NodeType::kInference, "writes scale").Confidence(0.95f);
  g.Node("inference:edge", NodeType::kInference, "ingest scales").Confidence(0.9f);
  for (auto s : {"fact:s1", "fact:s2", "fact:s3"}) {
    fact(s, std::string("support ") + s);
    g.Edge(s, "supports", "inference:strong");
    g.Edge(s, "supports", "inference:edge");
  }
  g.Edge("inference:strong", "caused_by", "fact:s1");  // same supporter again
  g.Edge("fact:s1", "supports", "inference:two");
  g.Edge("inference:two", "caused_by", "fact:s1");
  g.Edge("fact:s2", "supports", "inference:two");
  // Give every planted fact an edge so that only the orphan is one.
  for (auto k : {"fact:build", "fact:build-copy", "fact:build-far", "skill:build", "fact:cache",
                 "fact:cache-not", "fact:know", "fact:node"}) {
    g.Edge(k, "related_to", "fact:s1");
  }
  g.Node("entity:orphan", NodeType::kEntity, "alone");
}

std::set<KeyPair> Dups(const snapshot::Reader& r, const ConsolidatePlan& p) {
  std::set<KeyPair> out;
  for (const auto& d : p.duplicates) {
    out.insert({std::string(r.key(d.keep)), std::string(r.key(d.drop))});
  }
  return out;
}
std::set<KeyPair> Contras(const snapshot::Reader& r, const ConsolidatePlan& p) {
  std::set<KeyPair> out;
  for (const auto& c : p.contradictions) {
    out.insert({std::string(r.key(c.src)), std::string(r.key(c.dst))});
  }
  return out;
}
std::set<std::string> Keys(const snapshot::Reader& r, const std::vector<uint32_t>& v) {
  std::set<std::string> out;
  for (uint32_t i : v) out.insert(std::string(r.key(i)));
  return out;
}

}  // namespace

TEST_CASE("consolidate finds what was planted and nothing else", "[query][consolidate]") {
  GraphFixture g;
  Plant(g);
  for (bool term_index : {true, false}) {
    INFO("term_index " << term_index);
    snapshot::WriterOptions wo;
    wo.term_index = term_index;
    auto r = g.Open(wo);
    auto plan = PlanConsolidation(*r);
    REQUIRE(plan.ok());
    // The higher-confidence copy wins.
    CHECK(Dups(*r, *plan) == std::set<KeyPair>{{"fact:build-copy", "fact:build"}});
    REQUIRE(plan->duplicates.size() == 1);
    CHECK(plan->duplicates[0].similarity == Approx(10.0 / 11.0));
    // Same created_ts: the higher index is "newer" and contradicts the older.
    auto contras = Contras(*r, *plan);
    REQUIRE(contras.size() == 1);
    KeyPair c = *contras.begin();
    CHECK(std::set<std::string>{c.first, c.second} ==
          std::set<std::string>{"fact:cache", "fact:cache-not"});
    CHECK(Keys(*r, plan->promotions) == std::set<std::string>{"inference:strong"});
    CHECK(Keys(*r, plan->orphans) == std::set<std::string>{"entity:orphan"});
  }
}

TEST_CASE("consolidate: thresholds, ties and errors", "[query][consolidate]") {
  GraphFixture g;
  Plant(g);
  auto r = g.Open();
  ConsolidateOptions o;
  o.dedup_threshold = 0.95;  // 10/11 is below
  auto plan = PlanConsolidation(*r, o);
  REQUIRE(plan.ok());
  CHECK(plan->duplicates.empty());
  o.dedup_threshold = 0.0;
  CHECK(PlanConsolidation(*r, o).status().IsInvalidArgument());
  o.dedup_threshold = 1.01;
  CHECK(PlanConsolidation(*r, o).status().IsInvalidArgument());

  // Equal confidence: the newer node wins.
  GraphFixture t;
  t.Node("fact:a", NodeType::kFact, "alpha beta gamma").Ts(10);
  t.Node("fact:b", NodeType::kFact, "gamma beta alpha").Ts(20);
  t.Node("fact:c", NodeType::kFact, "alpha beta gamma").Ts(20);
  auto rt = t.Open();
  auto tp = PlanConsolidation(*rt);
  REQUIRE(tp.ok());
  CHECK(Dups(*rt, *tp) == std::set<KeyPair>{{"fact:b", "fact:a"}, {"fact:c", "fact:a"},
                                            {"fact:b", "fact:c"}});
  CHECK(tp->orphans.size() == 3);
}

TEST_CASE("consolidate duplicates equal a brute-force all-pairs scan", "[query][consolidate]") {
  for (uint64_t seed = 1; seed <= 10; ++seed) {
    auto r = cogtest::MakeRandomGraph(seed, 80, 60).fixture.Open();
    for (double t : {0.5, 0.75, 0.9, 1.0}) {
      ConsolidateOptions o;
      o.dedup_threshold = t;
      auto plan = PlanConsolidation(*r, o);
      REQUIRE(plan.ok());
      std::set<std::pair<uint32_t, uint32_t>> got, expect;
      for (const auto& d : plan->duplicates) {
        got.insert({std::min(d.keep, d.drop), std::max(d.keep, d.drop)});
      }
      std::vector<TermSignature> sig(r->node_count());
      for (uint32_t i = 0; i < r->node_count(); ++i) sig[i].Assign(r->content(i));
      for (uint32_t a = 0; a < r->node_count(); ++a) {
        for (uint32_t b = a + 1; b < r->node_count(); ++b) {
          if (r->type(a) != r->type(b) || sig[a].negated != sig[b].negated) continue;
          if (sig[a].terms.empty() || sig[b].terms.empty()) continue;
          if (r->FindEdge(a, kSupersedes, b) || r->FindEdge(b, kSupersedes, a) ||
              r->FindEdge(a, kContradicts, b) || r->FindEdge(b, kContradicts, a)) {
            continue;
          }
          if (Jaccard(sig[a].terms, sig[b].terms) >= t) expect.insert({a, b});
        }
      }
      INFO("seed " << seed << " threshold " << t);
      CHECK(got == expect);
    }
  }
}

TEST_CASE("consolidate --execute writes exactly the plan; a second run finds nothing",
          "[query][consolidate]") {
  namespace fs = std::filesystem;
  fs::path dir = fs::temp_directory_path() /
                 ("amem-consolidate-test-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  {
    auto store = Store::Open(dir.string());
    REQUIRE(store.ok());
    // The planted graph, written through the public store API.
    GraphFixture g;
    Plant(g);
    Batch batch;
    for (const NodeRecord& n : g.state().nodes) {
      NodeInput in;
      in.key = n.key;
      in.type = n.type;
      in.content = n.content;
      in.confidence = n.confidence;
      in.ts = n.created_ts;
      batch.PutNode(std::move(in));
    }
    for (const EdgeRecord& e : g.state().edges) {
      EdgeInput in;
      in.src = e.src_key;
      in.rel = e.rel_name;
      in.dst = e.dst_key;
      in.ts = e.created_ts;
      batch.PutEdge(std::move(in));
    }
    REQUIRE((*store)->Apply(batch).ok());

    auto snapshot = [&]() {
      auto state = (*store)->ReadState();
      INFO(state.status().ToString());
      REQUIRE(state.ok());
      auto bytes = snapshot::BuildSnapshot(*state);
      REQUIRE(bytes.ok());
      auto reader = snapshot::Reader::OpenBuffer(*bytes);
      REQUIRE(reader.ok());
      return std::move(reader).value();
    };
    auto r1 = snapshot();
    auto plan = PlanConsolidation(*r1);
    REQUIRE(plan.ok());
    REQUIRE(plan->duplicates.size() == 1);
    REQUIRE(plan->contradictions.size() == 1);
    REQUIRE(plan->promotions.size() == 1);
    auto edges_before = (*store)->ReadState()->edges.size();

    WriteOptions wo;
    wo.ts = 5000;
    auto applied = ApplyConsolidation(**store, *r1, *plan, wo);
    REQUIRE(applied.ok());
    CHECK(applied->supersedes_written == 1);
    CHECK(applied->contradicts_written == 1);
    CHECK(applied->promoted == 1);
    CHECK(applied->skipped.empty());

    auto state = (*store)->ReadState();
    REQUIRE(state.ok());
    CHECK(state->edges.size() == edges_before + 2);
    CHECK((*store)->GetEdge("fact:build-copy", "supersedes", "fact:build").ok());
    const auto& c = plan->contradictions[0];
    CHECK((*store)->GetEdge(r1->key(c.src), "contradicts", r1->key(c.dst)).ok());
    auto promoted = (*store)->GetNode("inference:strong");
    REQUIRE(promoted.ok());
    CHECK(promoted->type == NodeType::kFact);
    CHECK(promoted->content == "reads scale");
    CHECK(promoted->confidence == 0.95f);

    // Second run: nothing to change (the orphan is only reported).
    auto r2 = snapshot();
    auto again = PlanConsolidation(*r2);
    REQUIRE(again.ok());
    CHECK(again->duplicates.empty());
    CHECK(again->contradictions.empty());
    CHECK(again->promotions.empty());
    CHECK(again->orphans.size() == 1);
    uint64_t rev = (*store)->revision();
    auto noop = ApplyConsolidation(**store, *r2, *again, wo);
    REQUIRE(noop.ok());
    CHECK((*store)->revision() == rev);
    Json doc = ConsolidateJson(*r2, *again, {}, &*noop);
    CHECK(doc["applied"]["supersedes_written"] == 0);
  }
  fs::remove_all(dir);
}

TEST_CASE("consolidate output is identical across runs", "[query][consolidate]") {
  GraphFixture g;
  Plant(g);
  auto r = g.Open();
  auto a = PlanConsolidation(*r);
  auto b = PlanConsolidation(*r);
  REQUIRE(a.ok());
  REQUIRE(b.ok());
  ConsolidateOptions o;
  std::string ja = RenderJson(ConsolidateJson(*r, *a, o, nullptr));
  CHECK(ja == RenderJson(ConsolidateJson(*r, *b, o, nullptr)));
  CHECK(ja.find("\"dry_run\":true") != std::string::npos);
  o.limit = 0;
  Json limited = ConsolidateJson(*r, *a, o, nullptr);
  CHECK(limited["duplicates"].empty());
  CHECK(limited["duplicate_count"] == 1);
}
