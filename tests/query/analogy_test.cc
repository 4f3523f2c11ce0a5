#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "query/analogy.h"
#include "query/internal/negation.h"
#include "tests/query/cog_test_util.h"
#include "tests/query/fixture.h"

using namespace amem;
using namespace amem::query;
using amem::testing::GraphFixture;

namespace {

// A decision caused by two facts and decided for a module: the anchor, a twin of it
// elsewhere, a neighbour with the same shape (excluded) and distractors.
GraphFixture Patterns(bool vectors) {
  GraphFixture g(4);
  auto add = [&](const std::string& key, NodeType t, const std::string& text,
                 std::vector<float> v) {
    auto ref = g.Node(key, t, text);
    if (vectors) ref.Vector(std::move(v));
  };
  auto decision = [&](const std::string& p, const std::string& text, std::vector<float> v) {
    add("decision:" + p, NodeType::kDecision, text, v);
    add("fact:" + p + "-1", NodeType::kFact, p + " evidence one", {0, 0, 1, 0});
    add("fact:" + p + "-2", NodeType::kFact, p + " evidence two", {0, 0, 0, 1});
    add("module:" + p, NodeType::kModule, p + " module", {0, 1, 0, 0});
    g.Edge("decision:" + p, "caused_by", "fact:" + p + "-1");
    g.Edge("decision:" + p, "caused_by", "fact:" + p + "-2");
    g.Edge("decision:" + p, "decided_for", "module:" + p);
  };
  decision("anchor", "use lmdb for the store", {1, 0, 0, 0});
  decision("twin", "use sqlite for the index", {0.8f, 0.6f, 0, 0});
  add("entity:peer", NodeType::kEntity, "peer", {0, 0, 1, 1});
  g.Edge("entity:peer", "related_to", "decision:twin");  // the twin's in-edge
  // Same shape but 1 hop from the anchor: excluded.
  add("decision:near", NodeType::kDecision, "use lmdb for the store", {1, 0, 0, 0});
  g.Edge("decision:near", "caused_by", "fact:anchor-1");
  g.Edge("decision:near", "caused_by", "fact:anchor-2");
  g.Edge("decision:near", "decided_for", "module:anchor");
  g.Edge("decision:near", "related_to", "decision:anchor");
  // Similar words, different shape.
  add("fact:words", NodeType::kFact, "use lmdb always", {1, 0, 0, 0});
  g.Edge("fact:words", "supports", "fact:twin-1");
  add("entity:lonely", NodeType::kEntity, "nothing in common", {0, 0, 1, 1});
  return g;
}

}  // namespace

TEST_CASE("analogy: a planted structural twin is the top analogy", "[query][analogy]") {
  for (bool vectors : {false, true}) {
    for (bool term_index : {true, false}) {
      INFO("vectors " << vectors << " term_index " << term_index);
      GraphFixture g = Patterns(vectors);
      snapshot::WriterOptions wo;
      wo.term_index = term_index;
      auto r = g.Open(wo);
      uint32_t anchor = GraphFixture::Index(*r, "decision:anchor");
      AnalogyOptions o;
      o.limit = 20;
      auto res = Analogy(*r, anchor, o);
      REQUIRE(res.ok());
      CHECK(res->anchor.key == "decision:anchor");
      REQUIRE(!res->rows.empty());
      const AnalogyRow& top = res->rows[0];
      CHECK(top.node.key == "decision:twin");
      CHECK(top.structural == Approx(1.0));
      CHECK(top.content_from_vectors == vectors);
      if (vectors) {
        CHECK(top.content == Approx(0.8));
      } else {
        // {use, lmdb, store} vs {use, sqlite, index}: 1 / 5.
        CHECK(top.content == Approx(0.2));
      }
      CHECK(top.score == Approx(0.6 * top.structural + 0.4 * top.content));
      // Excluded: the anchor and its neighbours.
      for (const AnalogyRow& row : res->rows) {
        CHECK(row.node.key != "decision:anchor");
        CHECK(row.node.key != "decision:near");
        CHECK(row.node.key != "fact:anchor-1");
        CHECK(row.node.key != "module:anchor");
      }
      CHECK(res->candidates == r->node_count() - 5);
      for (size_t k = 1; k < res->rows.size(); ++k) {
        const AnalogyRow& a = res->rows[k - 1];
        const AnalogyRow& b = res->rows[k];
        CHECK((a.score > b.score || (a.score == b.score && a.node.index < b.node.index)));
      }
    }
  }
}

TEST_CASE("analogy: text anchor, type filter, limit and errors", "[query][analogy]") {
  GraphFixture g = Patterns(false);
  auto r = g.Open();
  AnalogyOptions o;
  auto res = AnalogyForText(*r, "sqlite index", o);
  REQUIRE(res.ok());
  CHECK(res->anchor.key == "decision:twin");
  REQUIRE(!res->rows.empty());
  CHECK(res->rows[0].node.key == "decision:anchor");
  CHECK(AnalogyForText(*r, "zebra", o).status().IsNotFound());
  CHECK(AnalogyForText(*r, "", o).status().IsNotFound());
  CHECK(Analogy(*r, r->node_count(), o).status().IsInvalidArgument());
  o.types.Add(NodeType::kFact);
  o.limit = 2;
  res = Analogy(*r, GraphFixture::Index(*r, "decision:anchor"), o);
  REQUIRE(res.ok());
  CHECK(res->rows.size() == 2);
  for (const AnalogyRow& row : res->rows) CHECK(row.node.type == NodeType::kFact);
  o.limit = 0;
  res = Analogy(*r, GraphFixture::Index(*r, "decision:anchor"), o);
  REQUIRE(res.ok());
  CHECK(res->rows.empty());
}

TEST_CASE("analogy: fingerprints count degrees and relations", "[query][analogy]") {
  GraphFixture g = Patterns(false);
  auto r = g.Open();
  float f[kFingerprintDims];
  Fingerprint(*r, GraphFixture::Index(*r, "decision:anchor"), f);
  CHECK(f[0] == 1);  // in: related_to from near
  CHECK(f[1] == 3);
  CHECK(f[2 + kCausedBy] == 2);
  CHECK(f[2 + kDecidedFor] == 1);
  CHECK(f[2 + kRelatedTo] == 1);
  Fingerprint(*r, GraphFixture::Index(*r, "entity:lonely"), f);
  for (float v : f) CHECK(v == 0);
}

TEST_CASE("analogy matches a brute-force reference on random graphs", "[query][analogy]") {
  for (uint64_t seed = 1; seed <= 8; ++seed) {
    auto r = cogtest::MakeRandomGraph(seed, 50, 120).fixture.Open();
    uint32_t anchor = static_cast<uint32_t>(seed % r->node_count());
    AnalogyOptions o;
    o.limit = r->node_count();
    auto res = Analogy(*r, anchor, o);
    REQUIRE(res.ok());
    // Every row's structural score is the plain cosine of the two fingerprints.
    float fa[kFingerprintDims], fc[kFingerprintDims];
    Fingerprint(*r, anchor, fa);
    for (const AnalogyRow& row : res->rows) {
      Fingerprint(*r, row.node.index, fc);
      double dot = 0, na = 0, nc = 0;
      for (int k = 0; k < kFingerprintDims; ++k) {
        dot += fa[k] * fc[k];
        na += fa[k] * fa[k];
        nc += fc[k] * fc[k];
      }
      double expect = na > 0 && nc > 0 ? dot / std::sqrt(na * nc) : 0;
      CHECK(row.structural == Approx(expect));
      CHECK(row.content >= 0);
      CHECK(row.content <= 1);
    }
    auto again = Analogy(*r, anchor, o);
    REQUIRE(again.ok());
    CHECK(RenderJson(AnalogyJson(*res)) == RenderJson(AnalogyJson(*again)));
  }
}

TEST_CASE("analogy gives the same answer for any number of workers", "[query][analogy]") {
  // Big enough for three workers of 16K candidates each.
  auto r = cogtest::MakeRandomGraph(3, 50000, 120000).fixture.Open();
  for (uint32_t anchor : {0u, 777u, 49999u}) {
    std::string first;
    for (int threads : {1, 2, 3}) {
      INFO("anchor " << anchor << ", " << threads << " workers");
      AnalogyOptions o;
      o.limit = 25;
      o.threads = threads;
      auto res = Analogy(*r, anchor, o);
      REQUIRE(res.ok());
      CHECK(res->rows.size() == 25);
      const std::string json = RenderJson(AnalogyJson(*res));
      if (first.empty()) first = json;
      CHECK(json == first);
    }
  }
}

namespace {

// Analogy by its definition (analogy.h), candidate by candidate through the
// reader's accessors, with the content cosine summed as the query does (eight
// float lanes): what Analogy must answer, bit for bit.

std::vector<AnalogyRow> ReferenceAnalogy(const snapshot::Reader& r, uint32_t anchor,
                                         const AnalogyOptions& o) {
  std::set<uint32_t> excluded{anchor};
  for (uint32_t j = r.out_begin(anchor); j < r.out_end(anchor); ++j) {
    excluded.insert(r.edge_target(j));
  }
  for (uint32_t k = r.in_begin(anchor); k < r.in_end(anchor); ++k) {
    excluded.insert(r.in_source(k));
  }
  float fa[kFingerprintDims], fc[kFingerprintDims];
  Fingerprint(r, anchor, fa);
  const float* va = r.vector(anchor);
  double unused, va2 = 0;
  if (va) LaneDotAndNorm(va, va, r.dimension(), &unused, &va2);
  TermSignature sa, sc;
  sa.Assign(r.content(anchor));
  std::vector<AnalogyRow> rows;
  for (uint32_t c = 0; c < r.node_count(); ++c) {
    if (excluded.count(c) || !o.types.Matches(r.type(c)) || r.is_stub(c)) continue;
    Fingerprint(r, c, fc);
    double dot = 0, na = 0, nc = 0;
    for (int k = 0; k < kFingerprintDims; ++k) {
      dot += static_cast<double>(fa[k]) * fc[k];
      na += static_cast<double>(fa[k]) * fa[k];
      nc += static_cast<double>(fc[k]) * fc[k];
    }
    AnalogyRow row;
    row.node.index = c;
    row.structural = na > 0 && nc > 0 ? dot / std::sqrt(na * nc) : 0.0;
    const float* vc = va ? r.vector(c) : nullptr;
    if (vc) {
      double d, n2;
      LaneDotAndNorm(va, vc, r.dimension(), &d, &n2);
      row.content = va2 > 0 && n2 > 0 ? d / std::sqrt(va2 * n2) : 0.0;
      row.content_from_vectors = true;
    } else {
      sc.Assign(r.content(c));  // no shared word: Jaccard 0, as the query's shortcut
      row.content = Jaccard(sa.terms, sc.terms);
    }
    row.score = kStructuralWeight * row.structural + kContentWeight * row.content;
    rows.push_back(row);
  }
  std::sort(rows.begin(), rows.end(), [](const AnalogyRow& a, const AnalogyRow& b) {
    return a.score != b.score ? a.score > b.score : a.node.index < b.node.index;
  });
  if (rows.size() > o.limit) rows.resize(o.limit);
  return rows;
}

}  // namespace

TEST_CASE("analogy equals its definition on tangled graphs, for any thread count",
          "[query][analogy]") {
  for (uint64_t seed = 1; seed <= 10; ++seed) {
    GraphFixture g = cogtest::MakeTangledGraph(seed, 60 + 20 * static_cast<uint32_t>(seed), 400);
    snapshot::WriterOptions wo;
    wo.term_index = seed % 2 == 0;
    auto r = g.Open(wo);
    // Small limits let the scan skip candidates that cannot reach the rows kept.
    for (size_t limit : {size_t{1}, size_t{5}, size_t{r->node_count()}}) {
      for (uint32_t anchor : {0u, static_cast<uint32_t>(seed * 7 % r->node_count())}) {
        AnalogyOptions o;
        o.limit = limit;
        if (seed % 4 == 1) o.types.Add(NodeType::kFact);
        std::vector<AnalogyRow> ref = ReferenceAnalogy(*r, anchor, o);
        std::string first;
        for (int threads : {1, 2, 3, 7}) {
          INFO("seed " << seed << " limit " << limit << " anchor " << anchor << " threads "
                     << threads);
          o.threads = threads;
          auto res = Analogy(*r, anchor, o);
          REQUIRE(res.ok());
          REQUIRE(res->rows.size() == ref.size());
          for (size_t k = 0; k < ref.size(); ++k) {
            REQUIRE(res->rows[k].node.index == ref[k].node.index);
            REQUIRE(res->rows[k].score == ref[k].score);
            REQUIRE(res->rows[k].structural == ref[k].structural);
            REQUIRE(res->rows[k].content == ref[k].content);
            REQUIRE(res->rows[k].content_from_vectors == ref[k].content_from_vectors);
          }
          std::string json = RenderJson(AnalogyJson(*res));
          if (threads == 1) first = json;
          REQUIRE(json == first);
        }
      }
    }
  }
}
