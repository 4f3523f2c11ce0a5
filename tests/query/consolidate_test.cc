#include <catch2/catch.hpp>

#include <algorithm>
#include <map>
#include <set>
#include <tuple>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "query/internal/cog_graph.h"
#include "query/consolidate.h"
#include "query/gaps.h"
#include "query/internal/negation.h"
#include "snapshot/writer.h"
#include "tests/query/cog_test_util.h"
#include "tests/query/fixture.h"
#include "tests/store/store_test_util.h"

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

// Writes the fixture's nodes and edges to `store` through the public API.
void WriteFixture(Store& store, GraphFixture& g) {
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
  REQUIRE(store.Apply(batch).ok());
}

// The store's current state as a snapshot.
std::unique_ptr<snapshot::Reader> SnapshotOf(Store& store) {
  auto state = store.ReadState();
  INFO(state.status().ToString());
  REQUIRE(state.ok());
  auto bytes = snapshot::BuildSnapshot(*state);
  REQUIRE(bytes.ok());
  auto reader = snapshot::Reader::OpenBuffer(*bytes);
  REQUIRE(reader.ok());
  return std::move(reader).value();
}

// Plans and applies once on the store's current snapshot.
ConsolidatePlan PlanAndApply(Store& store, const ConsolidateOptions& o = {}) {
  auto r = SnapshotOf(store);
  auto plan = PlanConsolidation(*r, o);
  REQUIRE(plan.ok());
  WriteOptions wo;
  wo.ts = 5000;
  auto applied = ApplyConsolidation(store, *r, *plan, wo);
  INFO(applied.status().ToString());
  REQUIRE(applied.ok());
  CHECK(applied->supersedes_written == plan->duplicates.size());
  CHECK(applied->contradicts_written == plan->contradictions.size());
  CHECK(applied->promoted == plan->promotions.size());
  return std::move(plan).value();
}

// A second plan on the store finds nothing to change and applying it commits
// nothing.
void CheckFixedPoint(Store& store, const ConsolidateOptions& o = {}) {
  auto r = SnapshotOf(store);
  auto again = PlanConsolidation(*r, o);
  REQUIRE(again.ok());
  CHECK(again->duplicates.empty());
  CHECK(again->contradictions.empty());
  CHECK(again->promotions.empty());
  uint64_t rev = store.revision().value();
  auto noop = ApplyConsolidation(store, *r, *again);
  REQUIRE(noop.ok());
  CHECK(store.revision().value() == rev);
  CHECK(noop->revision == rev);
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
  // One cluster: b (newer than a, smaller index than c) supersedes the others.
  CHECK(Dups(*rt, *tp) == std::set<KeyPair>{{"fact:b", "fact:a"}, {"fact:b", "fact:c"}});
  CHECK(tp->similar_pairs == 3);
  CHECK(tp->orphans.size() == 3);
}

TEST_CASE("consolidate duplicates equal a brute-force all-pairs scan and clustering",
          "[query][consolidate]") {
  for (uint64_t seed = 1; seed <= 10; ++seed) {
    auto r = cogtest::MakeRandomGraph(seed, 80, 60).fixture.Open();
    const uint32_t n = r->node_count();
    for (double t : {0.5, 0.75, 0.9, 1.0}) {
      ConsolidateOptions o;
      o.dedup_threshold = t;
      auto plan = PlanConsolidation(*r, o);
      REQUIRE(plan.ok());
      // Reference: every similar pair, by the type each node has after the plan's
      // promotions (checked on their own above), linked or not.
      std::set<uint32_t> promoted(plan->promotions.begin(), plan->promotions.end());
      auto type_after = [&](uint32_t i) {
        return promoted.count(i) ? NodeType::kFact : r->type(i);
      };
      std::vector<TermSignature> sig(n);
      for (uint32_t i = 0; i < n; ++i) sig[i].Assign(r->content(i));
      std::vector<std::vector<uint32_t>> similar(n);
      uint64_t pairs = 0;
      for (uint32_t a = 0; a < n; ++a) {
        for (uint32_t b = a + 1; b < n; ++b) {
          if (type_after(a) != type_after(b) || sig[a].negated != sig[b].negated) continue;
          if (sig[a].terms.empty() || sig[b].terms.empty()) continue;
          if (Jaccard(sig[a].terms, sig[b].terms) >= t) {
            similar[a].push_back(b);
            similar[b].push_back(a);
            ++pairs;
          }
        }
      }
      // Clusters by depth-first search; the winner by confidence, then created_ts,
      // then the smaller index; one edge to every member not linked to it yet.
      std::set<KeyPair> expect;
      std::map<KeyPair, double> expect_sim;
      std::vector<uint8_t> seen(n, 0);
      for (uint32_t s0 = 0; s0 < n; ++s0) {
        if (seen[s0] || similar[s0].empty()) continue;
        std::vector<uint32_t> cluster, stack{s0};
        seen[s0] = 1;
        while (!stack.empty()) {
          uint32_t x = stack.back();
          stack.pop_back();
          cluster.push_back(x);
          for (uint32_t y : similar[x]) {
            if (!seen[y]) seen[y] = 1, stack.push_back(y);
          }
        }
        uint32_t w = *std::min_element(cluster.begin(), cluster.end(), [&](uint32_t a, uint32_t b) {
          return std::make_tuple(-r->confidence(a), -r->created_ts(a), a) <
                 std::make_tuple(-r->confidence(b), -r->created_ts(b), b);
        });
        for (uint32_t m : cluster) {
          if (m == w || Linked(*r, w, m, kSupersedes) || Linked(*r, w, m, kContradicts)) continue;
          KeyPair kp{std::string(r->key(w)), std::string(r->key(m))};
          expect.insert(kp);
          expect_sim[kp] = Jaccard(sig[w].terms, sig[m].terms);
        }
      }
      INFO("seed " << seed << " threshold " << t);
      CHECK(plan->similar_pairs == pairs);
      CHECK(Dups(*r, *plan) == expect);
      for (const auto& d : plan->duplicates) {
        KeyPair kp{std::string(r->key(d.keep)), std::string(r->key(d.drop))};
        CHECK(d.similarity == Approx(expect_sim[kp]));
      }
    }
  }
}

TEST_CASE("consolidate --execute writes exactly the plan; a second run finds nothing",
          "[query][consolidate]") {
  amem::testing::TempDir dir;
  {
    auto store = amem::testing::OpenStore(dir.path());
    GraphFixture g;
    Plant(g);
    WriteFixture(*store, g);
    auto snapshot = [&]() { return SnapshotOf(*store); };
    auto r1 = snapshot();
    auto plan = PlanConsolidation(*r1);
    REQUIRE(plan.ok());
    REQUIRE(plan->duplicates.size() == 1);
    REQUIRE(plan->contradictions.size() == 1);
    REQUIRE(plan->promotions.size() == 1);
    auto edges_before = store->ReadState()->edges.size();

    WriteOptions wo;
    wo.ts = 5000;
    auto applied = ApplyConsolidation(*store, *r1, *plan, wo);
    REQUIRE(applied.ok());
    CHECK(applied->supersedes_written == 1);
    CHECK(applied->contradicts_written == 1);
    CHECK(applied->promoted == 1);
    CHECK(applied->skipped.empty());

    auto state = store->ReadState();
    REQUIRE(state.ok());
    CHECK(state->edges.size() == edges_before + 2);
    CHECK(store->GetEdge("fact:build-copy", "supersedes", "fact:build").ok());
    const auto& c = plan->contradictions[0];
    CHECK(store->GetEdge(r1->key(c.src), "contradicts", r1->key(c.dst)).ok());
    auto promoted = store->GetNode("inference:strong");
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
    uint64_t rev = store->revision().value();
    auto noop = ApplyConsolidation(*store, *r2, *again, wo);
    REQUIRE(noop.ok());
    CHECK(store->revision().value() == rev);
    Json doc = ConsolidateJson(*r2, *again, {}, &*noop);
    CHECK(doc["applied"]["supersedes_written"] == 0);
  }
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

TEST_CASE("consolidate --execute reaches a fixed point when a promotion makes a duplicate",
          "[query][consolidate]") {
  // An inference about to be promoted and a fact with the same words: planned as
  // duplicates in the same run (as facts), so the next run finds nothing new.
  for (float fact_confidence : {0.8f, 0.99f}) {
    INFO("fact confidence " << fact_confidence);
    amem::testing::TempDir dir;
    auto store = amem::testing::OpenStore(dir.path());
    GraphFixture g;
    g.Node("inference:ttl", NodeType::kInference, "cached entries expire after ten minutes")
        .Confidence(0.95f);
    g.Node("fact:ttl", NodeType::kFact, "Cached entries expire after ten minutes.")
        .Confidence(fact_confidence);
    for (auto [key, text] : {std::pair{"fact:s1", "the config sets ttl"},
                             std::pair{"fact:s2", "a benchmark saw expiry"},
                             std::pair{"fact:s3", "logs show evictions"}}) {
      g.Node(key, NodeType::kFact, text);
      g.Edge(key, "supports", "inference:ttl");
    }
    g.Edge("fact:ttl", "related_to", "fact:s1");
    WriteFixture(*store, g);

    auto r = SnapshotOf(*store);
    auto plan = PlanConsolidation(*r);
    REQUIRE(plan.ok());
    CHECK(Keys(*r, plan->promotions) == std::set<std::string>{"inference:ttl"});
    KeyPair expect = fact_confidence > 0.95f ? KeyPair{"fact:ttl", "inference:ttl"}
                                             : KeyPair{"inference:ttl", "fact:ttl"};
    CHECK(Dups(*r, *plan) == std::set<KeyPair>{expect});

    PlanAndApply(*store);
    auto promoted = store->GetNode("inference:ttl");
    REQUIRE(promoted.ok());
    CHECK(promoted->type == NodeType::kFact);
    CHECK(store->GetEdge(expect.first, "supersedes", expect.second).ok());
    CheckFixedPoint(*store);
  }
}

TEST_CASE("consolidate joins copies into one cluster with one winner", "[query][consolidate]") {
  const char* text = "the snapshot is rebuilt after every ingest";
  auto plant = [&](GraphFixture& g) {
    g.Node("fact:copy-a", NodeType::kFact, text).Confidence(0.6f).Ts(100);
    g.Node("fact:copy-b", NodeType::kFact, text).Confidence(0.9f).Ts(100);
    g.Node("fact:copy-c", NodeType::kFact, text).Confidence(0.6f).Ts(200);
    g.Node("fact:copy-d", NodeType::kFact, "The snapshot is rebuilt after every ingest!")
        .Confidence(0.5f)
        .Ts(300);
    g.Node("fact:other", NodeType::kFact, "the store keeps one writer").Ts(100);
    for (auto k : {"fact:copy-a", "fact:copy-b", "fact:copy-c", "fact:copy-d"}) {
      g.Edge(k, "related_to", "fact:other");
    }
  };
  const std::set<KeyPair> star{{"fact:copy-b", "fact:copy-a"},
                               {"fact:copy-b", "fact:copy-c"},
                               {"fact:copy-b", "fact:copy-d"}};

  SECTION("four copies: three edges from the winner, no unstable chain") {
    amem::testing::TempDir dir;
    auto store = amem::testing::OpenStore(dir.path());
    GraphFixture g;
    plant(g);
    WriteFixture(*store, g);
    auto r = SnapshotOf(*store);
    auto plan = PlanConsolidation(*r);
    REQUIRE(plan.ok());
    CHECK(plan->similar_pairs == 6);
    CHECK(Dups(*r, *plan) == star);
    for (const auto& d : plan->duplicates) CHECK(d.similarity == 1.0);
    Json doc = ConsolidateJson(*r, *plan, {}, nullptr);
    CHECK(doc["duplicate_count"] == 3);
    CHECK(doc["duplicate_cluster_count"] == 1);

    PlanAndApply(*store);
    auto state = store->ReadState();
    REQUIRE(state.ok());
    std::set<KeyPair> supersedes;
    for (const EdgeRecord& e : state->edges) {
      if (e.rel_name == "supersedes") supersedes.insert({e.src_key, e.dst_key});
    }
    CHECK(supersedes == star);

    auto after = SnapshotOf(*store);
    auto gaps = FindGaps(*after);
    REQUIRE(gaps.ok());
    CHECK(gaps->counts[static_cast<int>(GapKind::kUnstableKnowledge)] == 0);
    CheckFixedPoint(*store);
  }

  SECTION("a member the winner already supersedes gets no second edge") {
    GraphFixture g;
    plant(g);
    g.Edge("fact:copy-b", "supersedes", "fact:copy-c");
    auto r = g.Open();
    auto plan = PlanConsolidation(*r);
    REQUIRE(plan.ok());
    CHECK(plan->similar_pairs == 6);
    CHECK(Dups(*r, *plan) == std::set<KeyPair>{{"fact:copy-b", "fact:copy-a"},
                                               {"fact:copy-b", "fact:copy-d"}});
  }

  SECTION("a chain of near-duplicates is one cluster") {
    // a ~ b at 8/10 and b ~ c at 10/14, but a ~ c only at 8/14: c joins through b,
    // and the winner's row reports its own overlap with c. Words without digits: a
    // digit would split off a word of its own (`w10` gives `w10` and `10`).
    GraphFixture g;
    g.Node("fact:a", NodeType::kFact, "wa wb wc wd we wf wg wh").Confidence(0.9f);
    g.Node("fact:b", NodeType::kFact, "wa wb wc wd we wf wg wh wi wj").Confidence(0.5f);
    g.Node("fact:c", NodeType::kFact, "wa wb wc wd we wf wg wh wi wj wk wl wm wn")
        .Confidence(0.5f);
    auto r = g.Open();
    ConsolidateOptions o;
    o.dedup_threshold = 0.7;
    auto plan = PlanConsolidation(*r, o);
    REQUIRE(plan.ok());
    CHECK(plan->similar_pairs == 2);
    REQUIRE(plan->duplicates.size() == 2);
    CHECK(Dups(*r, *plan) == std::set<KeyPair>{{"fact:a", "fact:b"}, {"fact:a", "fact:c"}});
    CHECK(plan->duplicates[0].similarity == Approx(0.8));  // similarity descending
    CHECK(plan->duplicates[1].similarity == Approx(8.0 / 14.0));
  }
}

TEST_CASE("consolidate contradictions inside a big group of equal word sets stay linear",
          "[query][consolidate]") {
  GraphFixture g;
  auto key = [](const char* prefix, int i) {
    char buf[32];
    std::snprintf(buf, sizeof(buf), "%s-%03d", prefix, i);
    return std::string(buf);
  };
  constexpr int kPos = 200, kNeg = 300;
  for (int i = 0; i < kPos; ++i) {
    g.Node(key("fact:pos", i), NodeType::kFact, "the cache is enabled")
        .Confidence(i == 7 ? 0.99f : static_cast<float>(i % 10) / 10.0f)
        .Ts(100 + i % 3);
  }
  for (int i = 0; i < kNeg; ++i) {
    g.Node(key("fact:neg", i), NodeType::kFact, "The cache is NOT enabled.")
        .Confidence(i == 123 ? 0.99f : static_cast<float>(i % 10) / 10.0f)
        .Ts(100 + i % 5);
  }
  const std::string pos_rep = key("fact:pos", 7), neg_rep = key("fact:neg", 123);
  // One pair is linked already and is not planned again.
  g.Edge(key("fact:pos", 1), "contradicts", neg_rep);
  auto r = g.Open();
  auto plan = PlanConsolidation(*r);
  REQUIRE(plan.ok());
  // Every node meets the other side's representative once: (kPos + kNeg - 1) pairs,
  // less the linked one.
  CHECK(plan->contradictions.size() == kPos + kNeg - 2);
  std::set<std::pair<uint32_t, uint32_t>> seen;
  std::set<std::string> covered;
  for (const auto& c : plan->contradictions) {
    std::string src(r->key(c.src)), dst(r->key(c.dst));
    CHECK((src == pos_rep || dst == pos_rep || src == neg_rep || dst == neg_rep));
    CHECK(src.substr(0, 8) != dst.substr(0, 8));  // opposite polarity
    CHECK(seen.insert(std::minmax(c.src, c.dst)).second);
    covered.insert(src);
    covered.insert(dst);
  }
  CHECK(covered.size() == kPos + kNeg - 1);  // all but the linked fact:pos-001
  CHECK(Contras(*r, *plan).count({neg_rep, pos_rep}) +
            Contras(*r, *plan).count({pos_rep, neg_rep}) ==
        1);
  // The copies on each side form one cluster each.
  CHECK(plan->duplicates.size() == kPos - 1 + kNeg - 1);
  CHECK(plan->similar_pairs == uint64_t{kPos} * (kPos - 1) / 2 + uint64_t{kNeg} * (kNeg - 1) / 2);
}

TEST_CASE("consolidate --execute on random graphs reaches a fixed point",
          "[query][consolidate]") {
  for (uint64_t seed = 1; seed <= 6; ++seed) {
    for (double t : {0.5, 0.9}) {
      INFO("seed " << seed << " threshold " << t);
      amem::testing::TempDir dir;
      auto store = amem::testing::OpenStore(dir.path());
      auto rg = cogtest::MakeRandomGraph(seed, 80, 160);
      WriteFixture(*store, rg.fixture);
      ConsolidateOptions o;
      o.dedup_threshold = t;
      PlanAndApply(*store, o);
      CheckFixedPoint(*store, o);
    }
  }
}
