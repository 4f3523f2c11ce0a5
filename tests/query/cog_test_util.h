// Random graphs for the property tests of queries 12-16: small, seeded, with the
// relations those queries care about and short texts from a tiny vocabulary (so
// duplicates and contradictions occur).
#ifndef AMEM_TESTS_QUERY_COG_TEST_UTIL_H_
#define AMEM_TESTS_QUERY_COG_TEST_UTIL_H_

#include <cstdint>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "tests/query/fixture.h"

namespace amem::cogtest {

// Seconds in a day, for timestamps.
constexpr int64_t kDay = 86400;

struct RandomGraph {
  testing::GraphFixture fixture;
};

// splitmix64: deterministic everywhere.
inline uint64_t Mix(uint64_t* state) {
  uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

inline RandomGraph MakeRandomGraph(uint64_t seed, uint32_t nodes, uint32_t edges) {
  static const char* kWords[] = {"cache", "index", "lmdb", "snapshot", "query",
                                 "fast",  "slow",  "not",  "enabled",  "stale"};
  static const NodeType kTypes[] = {NodeType::kFact, NodeType::kDecision,
                                    NodeType::kInference, NodeType::kCorrection,
                                    NodeType::kEpisode};
  static const char* kRels[] = {"caused_by", "supports", "supports", "supersedes",
                                "related_to", "caused_by", "contradicts"};
  RandomGraph g;
  uint64_t s = seed * 0x1234567ULL + 1;
  for (uint32_t i = 0; i < nodes; ++i) {
    std::string text;
    uint64_t words = 2 + Mix(&s) % 4;
    for (uint64_t w = 0; w < words; ++w) {
      text += kWords[Mix(&s) % 10];
      text += ' ';
    }
    g.fixture.Node("n" + std::to_string(i), kTypes[Mix(&s) % 5], text)
        .Confidence(static_cast<float>(Mix(&s) % 101) / 100.0f)
        .Ts(1000 + static_cast<int64_t>(Mix(&s) % 100) * 86400)
        .Run("run-" + std::to_string(Mix(&s) % 4));
  }
  std::set<std::tuple<uint32_t, std::string, uint32_t>> seen;
  for (uint32_t e = 0; e < edges; ++e) {
    uint32_t a = static_cast<uint32_t>(Mix(&s) % nodes);
    uint32_t b = static_cast<uint32_t>(Mix(&s) % nodes);
    int rel = static_cast<int>(Mix(&s) % 7);
    if (a == b || !seen.insert({a, kRels[rel], b}).second) continue;
    g.fixture.Edge("n" + std::to_string(a), kRels[rel], "n" + std::to_string(b));
  }
  return g;
}

// A denser graph for the tests that pin gaps and analogy against their plain
// per-node definitions: every node type, confidences in steps of 0.05, updates
// spread over 90 days, vectors (dimension 8) on about two nodes in three, and
// edges of every kind the queries treat apart: self-loops, the same pair under
// several relations, a custom relation, endpoints never written (stubs), and
// supersedes edges that form chains, forks and cycles.
inline testing::GraphFixture MakeTangledGraph(uint64_t seed, uint32_t nodes, uint32_t edges) {
  static const char* kWords[] = {"cache", "index", "lmdb", "snapshot", "query", "fast",
                                 "slow",  "not",   "enabled", "stale", "graph", "node"};
  static const char* kRels[] = {"caused_by", "supports", "supersedes", "related_to",
                                "contradicts", "part_of", "derived_from", "uses"};
  testing::GraphFixture g(8);
  uint64_t s = seed * 0x9e3779b9ULL + 7;
  for (uint32_t i = 0; i < nodes; ++i) {
    std::string text;
    for (uint64_t w = 0, words = Mix(&s) % 6; w < words; ++w) {
      text += kWords[Mix(&s) % 12];
      text += ' ';
    }
    auto ref = g.Node("n" + std::to_string(i), static_cast<NodeType>(Mix(&s) % kNodeTypeCount),
                      text);
    ref.Confidence(static_cast<float>(Mix(&s) % 21) / 20.0f)
        .Ts(1000, 1000 + static_cast<int64_t>(Mix(&s) % 90) * 86400)
        .Run("run-" + std::to_string(i / 16));
    if (Mix(&s) % 3 != 0) {
      std::vector<float> v(8);
      for (float& x : v) x = static_cast<float>(Mix(&s) % 9) - 4.0f;
      ref.Vector(std::move(v));
    }
  }
  auto key = [&](uint64_t x) {
    return x % 16 == 0 ? "ghost" + std::to_string(x % 5) : "n" + std::to_string(x % nodes);
  };
  std::set<std::tuple<std::string, std::string, std::string>> seen;
  for (uint32_t e = 0; e < edges; ++e) {
    std::string a = key(Mix(&s)), rel = kRels[Mix(&s) % 8];
    std::string b = Mix(&s) % 12 == 0 ? a : key(Mix(&s));
    if (!seen.insert({a, rel, b}).second) continue;
    g.Edge(a, rel, b);
  }
  return g;
}

}  // namespace amem::cogtest

#endif  // AMEM_TESTS_QUERY_COG_TEST_UTIL_H_
