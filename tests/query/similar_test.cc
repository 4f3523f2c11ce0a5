// similar (exact cosine top-k): hand-built vectors, the built-in embedding for
// nodes and queries without vectors, filters, errors, and a property test against
// a double-precision reference.
#include "query/similar.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <limits>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/tokenizer.h"
#include "tests/query/fixture.h"

namespace amem::query {
namespace {

using testing::GraphFixture;

SimilarResult Run(const snapshot::Reader& r, const SimilarOptions& o) {
  auto res = Similar(r, o);
  INFO(res.status().ToString());
  REQUIRE(res.ok());
  return std::move(res).value();
}

// dimension 4: a = x axis, b = 45 degrees, c = y axis, d = -x, e = a's twin,
// f has no vector (its content is embedded instead).
GraphFixture Compass() {
  GraphFixture g(4);
  g.Node("v:a", NodeType::kFact).Vector({1, 0, 0, 0});
  g.Node("v:b", NodeType::kDecision).Vector({1, 1, 0, 0});
  g.Node("v:c", NodeType::kFact).Vector({0, 2, 0, 0});
  g.Node("v:d", NodeType::kFact).Vector({-3, 0, 0, 0});
  g.Node("v:e", NodeType::kFact).Vector({2, 0, 0, 0});
  g.Node("v:f", NodeType::kFact, "graph memory for agents");
  return g;
}

TEST_CASE("similar ranks by cosine, ties by index, excluding the query node",
          "[query][similar]") {
  GraphFixture g = Compass();
  auto r = g.Open();
  uint32_t a = g.Index(*r, "v:a"), b = g.Index(*r, "v:b"), e = g.Index(*r, "v:e");
  SimilarOptions o;
  o.vector = {1, 0, 0, 0};
  SimilarResult res = Run(*r, o);
  REQUIRE(std::string(res.query_source) == "vector");
  REQUIRE(res.scanned == 6);
  REQUIRE(res.embedded == 1);
  // a and e are exact matches (ties by index), then b at cos 45 degrees; c and
  // f are orthogonal or unrelated (>= 0 kept), d is negative (dropped).
  REQUIRE(res.hits.size() >= 3);
  REQUIRE(res.hits[0].index == std::min(a, e));
  REQUIRE(res.hits[1].index == std::max(a, e));
  REQUIRE(res.hits[0].similarity == Approx(1.0));
  REQUIRE(res.hits[1].similarity == Approx(1.0));
  REQUIRE(res.hits[2].index == b);
  REQUIRE(res.hits[2].similarity == Approx(std::sqrt(0.5)));
  for (const SimilarHit& h : res.hits) REQUIRE(h.index != g.Index(*r, "v:d"));

  SimilarOptions by_node;
  by_node.node = a;
  SimilarResult nr = Run(*r, by_node);
  REQUIRE(std::string(nr.query_source) == "node vector");
  REQUIRE(nr.hits[0].index == e);
  for (const SimilarHit& h : nr.hits) REQUIRE(h.index != a);

  o.min_similarity = 0.9;
  REQUIRE(Run(*r, o).hits.size() == 2);
  o.min_similarity = -1;
  REQUIRE(Run(*r, o).hits.size() == 6);
  o.limit = 1;
  REQUIRE(Run(*r, o).hits.size() == 1);
  o.limit = 10;
  o.types.Add(NodeType::kDecision);
  SimilarResult dec = Run(*r, o);
  REQUIRE(dec.hits.size() == 1);
  REQUIRE(dec.hits[0].index == b);
}

TEST_CASE("similar embeds text queries and vector-less nodes", "[query][similar]") {
  GraphFixture g = Compass();
  auto r = g.Open();
  uint32_t f = g.Index(*r, "v:f");
  SimilarOptions o;
  o.text = "Agents: graph memory!";  // same tokens as f's content, other order
  o.min_similarity = 0.5;
  SimilarResult res = Run(*r, o);
  REQUIRE(std::string(res.query_source) == "text");
  REQUIRE(!res.hits.empty());
  REQUIRE(res.hits[0].index == f);
  REQUIRE(res.hits[0].similarity == Approx(1.0));

  SimilarOptions by_node;
  by_node.node = f;
  REQUIRE(std::string(Run(*r, by_node).query_source) == "node text");

  // The caller's vector wins over text.
  o.vector = {0, 1, 0, 0};
  SimilarResult v = Run(*r, o);
  REQUIRE(std::string(v.query_source) == "vector");
  REQUIRE(v.hits[0].index == g.Index(*r, "v:c"));
}

// A generated store where every node has a random stored vector (a model's space
// that has nothing to do with the built-in embedding) and distinct content.
GraphFixture RandomVectors(uint32_t n, uint32_t dim, bool every_other_without = false) {
  uint64_t s = 7;
  auto next = [&s]() {
    s = s * 6364136223846793005ull + 1442695040888963407ull;
    return static_cast<uint32_t>(s >> 33);
  };
  static const char* kWords[] = {"lmdb",   "snapshot", "graph", "agent",  "memory",
                                 "vector", "cache",    "index", "writer", "reader",
                                 "edge",   "node",     "query", "budget", "token"};
  GraphFixture g(dim);
  for (uint32_t i = 0; i < n; ++i) {
    char key[16];
    std::snprintf(key, sizeof(key), "n:%04u", i);
    std::string content = "item" + std::to_string(i);  // distinct
    for (int w = 0; w < 4; ++w) content += std::string(" ") + kWords[next() % 15];
    auto node = g.Node(key, NodeType::kFact, content);
    if (every_other_without && i % 2 == 1) continue;
    std::vector<float> v(dim);
    for (float& x : v) x = static_cast<float>(next() % 2001) / 1000.0f - 1.0f;
    node.Vector(v);
  }
  return g;
}

TEST_CASE("similar --text finds a node by its exact text despite stored vectors",
          "[query][similar]") {
  const uint32_t n = 200, dim = 64;
  GraphFixture g = RandomVectors(n, dim);
  auto r = g.Open();
  REQUIRE(r->EnsureContent().ok());
  for (uint32_t i = 0; i < n; i += 7) {
    INFO("node " << i);
    SimilarOptions o;
    o.text = std::string(r->content(i));
    o.limit = 3;
    SimilarResult res = Run(*r, o);
    REQUIRE(std::string(res.query_source) == "text");
    REQUIRE(std::string(res.basis) == kBuiltinEmbedding);
    REQUIRE(res.scanned == n);
    REQUIRE(res.embedded == n);  // every node in the embedding's space
    REQUIRE(res.hits[0].index == i);
    REQUIRE(res.hits[0].similarity == Approx(1.0));
  }
  Json doc = SimilarJson(*r, Run(*r, [&] {
                           SimilarOptions o;
                           o.text = std::string(r->content(0));
                           return o;
                         }()));
  REQUIRE(doc["basis"] == "built-in embedding");
  REQUIRE(doc["query_source"] == "text");
}

TEST_CASE("similar: the query decides the space; caller vectors still win",
          "[query][similar]") {
  const uint32_t n = 60, dim = 16;
  GraphFixture g = RandomVectors(n, dim, /*every_other_without=*/true);
  auto r = g.Open();
  REQUIRE(r->EnsureContent().ok());
  // A caller's vector is compared with stored vectors; vector-less nodes (the odd
  // ones) fall back to the built-in embedding of their content.
  const float* v0 = r->vector(0);
  REQUIRE(v0 != nullptr);
  SimilarOptions o;
  o.vector.assign(v0, v0 + dim);
  o.text = std::string(r->content(2));  // ignored: the vector wins
  o.limit = 5;
  SimilarResult res = Run(*r, o);
  REQUIRE(std::string(res.query_source) == "vector");
  REQUIRE(std::string(res.basis) == kStoredVectors);
  REQUIRE(res.scanned == n);
  REQUIRE(res.embedded == n / 2);
  REQUIRE(res.hits[0].index == 0);
  REQUIRE(res.hits[0].similarity == Approx(1.0));
  REQUIRE(SimilarJson(*r, res)["basis"] == "stored vectors");

  // A node query: with a stored vector, the stored space (as the caller's vector);
  // without one, its content's embedding against every node's content embedding,
  // stored vectors ignored.
  const std::vector<float> q1 = HashEmbed(r->content(1), dim);
  struct Case {
    uint32_t node;
    std::string source, basis;
    uint32_t embedded;
    const float* query;
  };
  for (const Case& c : {Case{0, "node vector", kStoredVectors, n / 2, v0},
                        Case{1, "node text", kBuiltinEmbedding, n - 1, q1.data()}}) {
    INFO(c.source);
    SimilarOptions by_node;
    by_node.node = c.node;
    by_node.min_similarity = -1;
    by_node.limit = n;
    SimilarResult nr = Run(*r, by_node);
    REQUIRE(nr.query_source == c.source);
    REQUIRE(nr.basis == c.basis);
    REQUIRE(nr.embedded == c.embedded);
    for (const SimilarHit& h : nr.hits) {
      const float* v = c.basis == kStoredVectors ? r->vector(h.index) : nullptr;
      std::vector<float> e = HashEmbed(r->content(h.index), dim);
      // HashEmbed's floats against the query's exact counts: float precision.
      REQUIRE(h.similarity == Approx(Cosine(c.query, v ? v : e.data(), dim)).margin(1e-6));
    }
  }
}

TEST_CASE("similar rejects bad queries", "[query][similar]") {
  GraphFixture g = Compass();
  auto r = g.Open();
  SimilarOptions none;
  REQUIRE(Similar(*r, none).status().IsInvalidArgument());
  SimilarOptions wrong_dim;
  wrong_dim.vector = {1, 0, 0};
  REQUIRE(Similar(*r, wrong_dim).status().IsInvalidArgument());
  SimilarOptions nan;
  nan.vector = {1, std::numeric_limits<float>::quiet_NaN(), 0, 0};
  REQUIRE(Similar(*r, nan).status().IsInvalidArgument());
  SimilarOptions zero;
  zero.vector = {0, 0, 0, 0};
  REQUIRE(Similar(*r, zero).status().IsInvalidArgument());
  SimilarOptions stop_words;
  stop_words.text = "the of a";
  REQUIRE(Similar(*r, stop_words).status().IsInvalidArgument());
  SimilarOptions missing;
  missing.node = 999;
  REQUIRE(Similar(*r, missing).status().IsNotFound());

  GraphFixture empty(4);
  auto e = empty.Open();
  SimilarOptions q;
  q.vector = {1, 0, 0, 0};
  REQUIRE(Run(*e, q).hits.empty());
}

TEST_CASE("similar matches a double-precision reference on random vectors",
          "[query][similar][property]") {
  uint64_t s = 99;
  auto next = [&s]() {
    s = s * 6364136223846793005ull + 1442695040888963407ull;
    return static_cast<float>(static_cast<int32_t>(s >> 40) % 1000) / 250.0f;
  };
  const uint32_t dim = 37;  // not a multiple of the 8 lanes: the tail is exercised
  for (int round = 0; round < 4; ++round) {
    GraphFixture g(dim);
    const uint32_t n = 50 + round * 40;
    std::vector<std::vector<float>> vecs;
    for (uint32_t i = 0; i < n; ++i) {
      std::vector<float> v(dim);
      for (float& x : v) x = next();
      char key[16];
      std::snprintf(key, sizeof(key), "n:%04u", i);  // dense order = i
      g.Node(key).Vector(v);
      vecs.push_back(v);
    }
    auto r = g.Open();
    std::vector<float> q(dim);
    for (float& x : q) x = next();
    SimilarOptions o;
    o.vector = q;
    o.limit = 15;
    o.min_similarity = -1;
    SimilarResult res = Run(*r, o);
    std::vector<std::pair<double, uint32_t>> ref;
    for (uint32_t i = 0; i < n; ++i) {
      double dot = 0, nq = 0, nv = 0;
      for (uint32_t k = 0; k < dim; ++k) {
        dot += static_cast<double>(q[k]) * vecs[i][k];
        nq += static_cast<double>(q[k]) * q[k];
        nv += static_cast<double>(vecs[i][k]) * vecs[i][k];
      }
      if (nv > 0) ref.emplace_back(-dot / std::sqrt(nq * nv), i);
    }
    std::sort(ref.begin(), ref.end());
    REQUIRE(res.hits.size() == 15);
    for (size_t k = 0; k < res.hits.size(); ++k) {
      REQUIRE(res.hits[k].similarity == Approx(-ref[k].first).margin(1e-5));
      if (k) REQUIRE(res.hits[k - 1].similarity >= res.hits[k].similarity);
      REQUIRE(res.hits[k].similarity ==
              Approx(Cosine(q.data(), vecs[res.hits[k].index].data(), dim)).margin(1e-12));
    }
  }
}

}  // namespace
}  // namespace amem::query
