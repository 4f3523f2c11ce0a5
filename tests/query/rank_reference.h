// Straightforward reference implementations for the ranking tests (graph_kernels,
// centrality): a tiny deterministic generator and betweenness by its definition.
#ifndef AMEM_TESTS_QUERY_RANK_REFERENCE_H_
#define AMEM_TESTS_QUERY_RANK_REFERENCE_H_

#include <cstdint>
#include <deque>
#include <utility>
#include <vector>

namespace amem::testing {

using EdgeList = std::vector<std::pair<uint32_t, uint32_t>>;

// Deterministic little generator for test graphs.
struct Lcg {
  uint64_t s;
  uint32_t Next(uint32_t bound) {
    s = s * 6364136223846793005ull + 1442695040888963407ull;
    return static_cast<uint32_t>((s >> 33) % bound);
  }
};

// Betweenness by definition on the undirected simple graph of `edges`: for every
// ordered pair (s, t), every v on a shortest s-t path gets
// sigma_sv * sigma_vt / sigma_st. Not normalised; O(n^3).
inline std::vector<double> BruteForceBetweenness(uint32_t n, const EdgeList& edges) {
  std::vector<std::vector<bool>> adj(n, std::vector<bool>(n, false));
  for (auto [u, v] : edges) {
    if (u != v) adj[u][v] = adj[v][u] = true;
  }
  std::vector<std::vector<int>> dist(n, std::vector<int>(n, -1));
  std::vector<std::vector<double>> sigma(n, std::vector<double>(n, 0));
  for (uint32_t s = 0; s < n; ++s) {
    std::deque<uint32_t> q{s};
    dist[s][s] = 0;
    sigma[s][s] = 1;
    while (!q.empty()) {
      uint32_t v = q.front();
      q.pop_front();
      for (uint32_t w = 0; w < n; ++w) {
        if (!adj[v][w]) continue;
        if (dist[s][w] < 0) {
          dist[s][w] = dist[s][v] + 1;
          q.push_back(w);
        }
        if (dist[s][w] == dist[s][v] + 1) sigma[s][w] += sigma[s][v];
      }
    }
  }
  std::vector<double> bc(n, 0);
  for (uint32_t s = 0; s < n; ++s) {
    for (uint32_t t = 0; t < n; ++t) {
      if (s == t || dist[s][t] < 0) continue;
      for (uint32_t v = 0; v < n; ++v) {
        if (v == s || v == t || dist[s][v] < 0 || dist[v][t] < 0) continue;
        if (dist[s][v] + dist[v][t] == dist[s][t]) {
          bc[v] += sigma[s][v] * sigma[v][t] / sigma[s][t];
        }
      }
    }
  }
  return bc;
}

}  // namespace amem::testing

#endif  // AMEM_TESTS_QUERY_RANK_REFERENCE_H_
