// Random graphs for the property tests of queries 12-16: small, seeded, with the
// relations those queries care about and short texts from a tiny vocabulary (so
// duplicates and contradictions occur).
#ifndef AMEM_TESTS_QUERY_COG_TEST_UTIL_H_
#define AMEM_TESTS_QUERY_COG_TEST_UTIL_H_

#include <cstdint>
#include <set>
#include <string>
#include <tuple>

#include "tests/query/fixture.h"

namespace amem::cogtest {

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

}  // namespace amem::cogtest

#endif  // AMEM_TESTS_QUERY_COG_TEST_UTIL_H_
