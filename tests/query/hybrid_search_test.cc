// hybrid-search (RRF of BM25 and cosine): scores worked out by hand.
#include "query/hybrid_search.h"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "query/similar.h"
#include "snapshot/reader.h"
#include "tests/query/fixture.h"

namespace amem::query {
namespace {

using testing::GraphFixture;

HybridSearchResult Run(const snapshot::Reader& r, const HybridSearchOptions& o) {
  auto res = HybridSearch(r, o);
  INFO(res.status().ToString());
  REQUIRE(res.ok());
  return std::move(res).value();
}

GraphFixture Corpus() {
  GraphFixture g(4);
  g.Node("h:1", NodeType::kFact, "lmdb store fast").Vector({1, 0, 0, 0});
  g.Node("h:2", NodeType::kDecision, "lmdb").Vector({0, 1, 0, 0});
  g.Node("h:3", NodeType::kFact, "sqlite").Vector({0.9f, 0.1f, 0, 0});
  g.Node("h:4", NodeType::kFact, "nothing here").Vector({0, 0, 1, 0});
  return g;
}

TEST_CASE("hybrid-search fuses the BM25 and cosine ranks", "[query][hybrid-search]") {
  GraphFixture g = Corpus();
  auto r = g.Open();
  HybridSearchOptions o;
  o.text = "lmdb";
  o.vector = {1, 0, 0, 0};
  o.limit = 4;
  HybridSearchResult res = Run(*r, o);
  // BM25: h2 (shorter document) then h1; missing rank 3.
  // Cosine: h1, h3, then h2 and h4 tie at 0 (index order); missing rank 5.
  REQUIRE(res.bm25_listed == 2);
  REQUIRE(res.vector_listed == 4);
  REQUIRE(res.hits.size() == 4);
  const uint32_t h1 = g.Index(*r, "h:1"), h2 = g.Index(*r, "h:2"), h3 = g.Index(*r, "h:3"),
                 h4 = g.Index(*r, "h:4");
  REQUIRE(res.hits[0].index == h1);
  REQUIRE(res.hits[0].score == Approx(0.5 / 62 + 0.5 / 61));
  REQUIRE(res.hits[0].bm25_rank == 2);
  REQUIRE(res.hits[0].vector_rank == 1);
  REQUIRE(res.hits[0].similarity == Approx(1.0));
  REQUIRE(res.hits[1].index == h2);
  REQUIRE(res.hits[1].score == Approx(0.5 / 61 + 0.5 / 63));
  REQUIRE(res.hits[1].bm25_rank == 1);
  REQUIRE(res.hits[1].vector_rank == 3);
  REQUIRE(res.hits[1].bm25_score > 0);
  REQUIRE(res.hits[2].index == h3);
  REQUIRE(res.hits[2].score == Approx(0.5 / 63 + 0.5 / 62));
  REQUIRE(res.hits[2].bm25_rank == 0);  // not listed: counted as 3
  REQUIRE(res.hits[2].bm25_score == 0);
  REQUIRE(res.hits[3].index == h4);
  REQUIRE(res.hits[3].score == Approx(0.5 / 63 + 0.5 / 64));

  o.limit = 1;  // lists fetched to 3: cosine list is h1, h3, h2
  HybridSearchResult one = Run(*r, o);
  REQUIRE(one.vector_listed == 3);
  REQUIRE(one.hits.size() == 1);
  REQUIRE(one.hits[0].index == h1);

  Json doc = HybridSearchJson(*r, res);
  REQUIRE(doc["query"] == "hybrid-search");
  REQUIRE(doc["results"][2]["bm25_rank"].is_null());
  REQUIRE(doc["results"][2]["vector_rank"] == 2);
}

TEST_CASE("hybrid-search weights, filters and inputs", "[query][hybrid-search]") {
  GraphFixture g = Corpus();
  auto r = g.Open();
  HybridSearchOptions o;
  o.text = "lmdb";
  o.vector = {1, 0, 0, 0};
  o.bm25_weight = 1;
  o.vector_weight = 0;
  HybridSearchResult bm25_only = Run(*r, o);
  REQUIRE(bm25_only.hits[0].index == g.Index(*r, "h:2"));

  o.types.Add(NodeType::kDecision);
  HybridSearchResult dec = Run(*r, o);
  REQUIRE(dec.hits.size() == 1);
  REQUIRE(dec.hits[0].index == g.Index(*r, "h:2"));

  HybridSearchOptions vector_only;
  vector_only.text = "the";  // no searchable terms: the BM25 list is empty
  vector_only.vector = {0, 0, 1, 0};
  HybridSearchResult v = Run(*r, vector_only);
  REQUIRE(v.bm25_listed == 0);
  REQUIRE(v.hits[0].index == g.Index(*r, "h:4"));

  HybridSearchOptions text_only;
  text_only.text = "sqlite";  // cosine list from the built-in embedding of the text
  HybridSearchResult t = Run(*r, text_only);
  REQUIRE(t.bm25_listed == 1);
  REQUIRE(t.vector_listed >= 1);
  bool found = false;
  for (const HybridHit& h : t.hits) found |= h.index == g.Index(*r, "h:3") && h.bm25_rank == 1;
  REQUIRE(found);

  REQUIRE(std::string(t.vector_basis) == kBuiltinEmbedding);
  REQUIRE(std::string(v.vector_basis) == kStoredVectors);
  REQUIRE(HybridSearchJson(*r, t)["vector_basis"] == "built-in embedding");

  HybridSearchOptions nothing;
  nothing.text = "of the";
  REQUIRE(HybridSearch(*r, nothing).status().IsInvalidArgument());
  HybridSearchOptions bad_vector;
  bad_vector.text = "lmdb";
  bad_vector.vector = {1, 2};
  REQUIRE(HybridSearch(*r, bad_vector).status().IsInvalidArgument());
  HybridSearchOptions bad_k;
  bad_k.text = "lmdb";
  bad_k.k = -1;
  REQUIRE(HybridSearch(*r, bad_k).status().IsInvalidArgument());
}

TEST_CASE("hybrid-search without --vector compares texts in the embedding's space",
          "[query][hybrid-search]") {
  // Stored vectors from some model, unrelated to the built-in embedding: a text
  // query must still find the node whose content it is, in both lists.
  GraphFixture g(8);
  g.Node("r:1", NodeType::kFact, "tokio runtime spawns tasks").Vector({1, -1, 0, 0, 2, 0, 0, 1});
  g.Node("r:2", NodeType::kFact, "lmdb keeps one writer").Vector({0, 1, 1, 0, 0, 0, 3, 0});
  g.Node("r:3", NodeType::kFact, "snapshots are memory mapped").Vector({-2, 0, 0, 1, 0, 1, 0, 0});
  g.Node("r:4", NodeType::kFact, "the cache evicts old pages").Vector({0, 0, 0, -1, 1, 1, 0, 1});
  auto r = g.Open();
  for (const char* key : {"r:1", "r:2", "r:3", "r:4"}) {
    INFO(key);
    const uint32_t i = g.Index(*r, key);
    HybridSearchOptions o;
    o.text = std::string(r->content(i));
    HybridSearchResult res = Run(*r, o);
    REQUIRE(std::string(res.vector_basis) == kBuiltinEmbedding);
    REQUIRE(res.hits[0].index == i);
    REQUIRE(res.hits[0].vector_rank == 1);
    REQUIRE(res.hits[0].similarity == Approx(1.0));
    REQUIRE(res.hits[0].bm25_rank == 1);
  }
}

TEST_CASE("hybrid-search on an empty graph returns no rows", "[query][hybrid-search]") {
  GraphFixture empty(4);
  auto r = empty.Open();
  HybridSearchOptions o;
  o.text = "lmdb store";
  HybridSearchResult res = Run(*r, o);
  REQUIRE(res.hits.empty());
  REQUIRE(res.bm25_listed == 0);
  REQUIRE(res.vector_listed == 0);
  o.vector = {1, 0, 0, 0};
  REQUIRE(Run(*r, o).hits.empty());
  REQUIRE(HybridSearchJson(*r, res)["results"].empty());
}

}  // namespace
}  // namespace amem::query
