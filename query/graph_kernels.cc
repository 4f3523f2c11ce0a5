#include "query/graph_kernels.h"

#include <algorithm>
#include <atomic>
#include <bit>
#include <cmath>
#include <thread>

#include "common/progress.h"
#include "snapshot/reader.h"

namespace amem::query {

namespace {

// Turns per-node counts (offsets[u+1] holds u's count) into starts, in place.
void PrefixSum(std::vector<uint32_t>* offsets) {
  uint32_t sum = 0;
  for (uint32_t& o : *offsets) {
    uint32_t c = o;
    o = sum;
    sum += c;
  }
}

// Counts then fills: for_each_edge(fn) must call fn(u, v) for every directed edge
// in the same order both times. Lists are bucketed by u, keeping call order.
template <typename ForEachEdge>
Csr BucketEdges(uint32_t node_count, ForEachEdge&& for_each_edge) {
  Csr csr;
  csr.node_count = node_count;
  csr.offsets.assign(static_cast<size_t>(node_count) + 1, 0);
  for_each_edge([&](uint32_t u, uint32_t) { ++csr.offsets[u]; });
  PrefixSum(&csr.offsets);
  csr.targets.resize(csr.offsets[node_count]);
  std::vector<uint32_t> cursor(csr.offsets.begin(), csr.offsets.end() - 1);
  for_each_edge([&](uint32_t u, uint32_t v) { csr.targets[cursor[u]++] = v; });
  return csr;
}

// Sorts each neighbour list and drops repeats, compacting the targets array.
void SortUnique(Csr* csr) {
  uint32_t write = 0;
  for (uint32_t u = 0; u < csr->node_count; ++u) {
    auto first = csr->targets.begin() + csr->offsets[u];
    auto last = csr->targets.begin() + csr->offsets[u + 1];
    std::sort(first, last);
    auto unique_end = std::unique(first, last);
    csr->offsets[u] = write;
    for (auto it = first; it != unique_end; ++it) csr->targets[write++] = *it;
  }
  csr->offsets[csr->node_count] = write;
  csr->targets.resize(write);
}

// Calls fn(source, target) for every edge whose relation is in `rels`, in edge order.
template <typename Fn>
void ForEachReaderEdge(const snapshot::Reader& reader, const RelationFilter& rels, Fn&& fn) {
  for (uint32_t u = 0; u < reader.node_count(); ++u) {
    for (uint32_t j = reader.out_begin(u), e = reader.out_end(u); j < e; ++j) {
      if (rels.Matches(reader.edge_rel(j))) fn(u, reader.edge_target(j));
    }
  }
}

}  // namespace

Csr Csr::FromEdges(uint32_t node_count,
                   const std::vector<std::pair<uint32_t, uint32_t>>& edges) {
  return BucketEdges(node_count, [&](auto&& fn) {
    for (const auto& [u, v] : edges) fn(u, v);
  });
}

PullGraph BuildPullGraph(const snapshot::Reader& reader, const RelationFilter& rels) {
  PullGraph g;
  g.out_degree.assign(reader.node_count(), 0);
  // Scanning sources in ascending order makes each in-list ascending by source.
  g.in = BucketEdges(reader.node_count(), [&](auto&& fn) {
    ForEachReaderEdge(reader, rels, [&](uint32_t u, uint32_t v) { fn(v, u); });
  });
  ForEachReaderEdge(reader, rels, [&](uint32_t u, uint32_t) { ++g.out_degree[u]; });
  return g;
}

PullGraph PullGraphFromEdges(uint32_t node_count,
                             const std::vector<std::pair<uint32_t, uint32_t>>& edges) {
  std::vector<std::pair<uint32_t, uint32_t>> sorted = edges;
  std::stable_sort(sorted.begin(), sorted.end());
  PullGraph g;
  g.out_degree.assign(node_count, 0);
  g.in = BucketEdges(node_count, [&](auto&& fn) {
    for (const auto& [u, v] : sorted) fn(v, u);
  });
  for (const auto& e : edges) ++g.out_degree[e.first];
  return g;
}

Csr BuildUndirectedGraph(const snapshot::Reader& reader, const RelationFilter& rels) {
  Csr csr = BucketEdges(reader.node_count(), [&](auto&& fn) {
    ForEachReaderEdge(reader, rels, [&](uint32_t u, uint32_t v) {
      if (u == v) return;
      fn(u, v);
      fn(v, u);
    });
  });
  SortUnique(&csr);
  return csr;
}

Csr UndirectedFromEdges(uint32_t node_count,
                        const std::vector<std::pair<uint32_t, uint32_t>>& edges) {
  Csr csr = BucketEdges(node_count, [&](auto&& fn) {
    for (const auto& [u, v] : edges) {
      if (u == v) continue;
      fn(u, v);
      fn(v, u);
    }
  });
  SortUnique(&csr);
  return csr;
}

PageRankResult PageRank(const PullGraph& graph, const PageRankOptions& options) {
  PageRankResult result;
  const uint32_t n = graph.in.node_count;
  if (n == 0) {
    result.converged = true;
    return result;
  }
  const double alpha = options.damping;
  const double inv_n = 1.0 / n;
  std::vector<double> rank(n, inv_n), next(n), contrib(n);
  std::vector<double> inv_out(n, 0.0);
  std::vector<uint32_t> dangling;
  for (uint32_t u = 0; u < n; ++u) {
    if (graph.out_degree[u] == 0) {
      dangling.push_back(u);
    } else {
      inv_out[u] = 1.0 / graph.out_degree[u];
    }
  }
  const uint32_t* offsets = graph.in.offsets.data();
  const uint32_t* sources = graph.in.targets.data();
  for (int it = 1; it <= options.max_iterations; ++it) {
    double dangling_mass = 0;
    for (uint32_t u : dangling) dangling_mass += rank[u];
    for (uint32_t u = 0; u < n; ++u) contrib[u] = rank[u] * inv_out[u];
    const double base = (1.0 - alpha) * inv_n + alpha * dangling_mass * inv_n;
    double change = 0;
    for (uint32_t v = 0; v < n; ++v) {
      double sum = 0;
      for (uint32_t k = offsets[v], e = offsets[v + 1]; k < e; ++k) sum += contrib[sources[k]];
      double r = base + alpha * sum;
      change += std::fabs(r - rank[v]);
      next[v] = r;
    }
    rank.swap(next);
    result.iterations = it;
    if (change < options.tolerance) {
      result.converged = true;
      break;
    }
  }
  result.scores = std::move(rank);
  return result;
}

namespace {

// One worker's buffers for Brandes, reused across its sources.
struct BrandesScratch {
  std::vector<int32_t> dist;
  std::vector<double> sigma, delta;
  std::vector<uint32_t> order;  // BFS order; walked backwards for the dependencies
  std::vector<int64_t> acc;     // fixed-point sums of delta over this worker's sources

  explicit BrandesScratch(uint32_t n) : dist(n, -1), sigma(n, 0), delta(n, 0), acc(n, 0) {
    order.reserve(n);
  }
};

void AccumulateSource(const Csr& g, uint32_t s, double scale, BrandesScratch* w) {
  const uint32_t* off = g.offsets.data();
  const uint32_t* adj = g.targets.data();
  int32_t* dist = w->dist.data();
  double* sigma = w->sigma.data();
  double* delta = w->delta.data();
  std::vector<uint32_t>& order = w->order;
  order.clear();
  order.push_back(s);
  dist[s] = 0;
  sigma[s] = 1;
  for (size_t head = 0; head < order.size(); ++head) {
    uint32_t v = order[head];
    int32_t dv = dist[v] + 1;
    double sv = sigma[v];
    for (uint32_t k = off[v], e = off[v + 1]; k < e; ++k) {
      uint32_t x = adj[k];
      if (dist[x] < 0) {
        dist[x] = dv;
        order.push_back(x);
      }
      if (dist[x] == dv) sigma[x] += sv;
    }
  }
  // Pushing each node's dependency to its predecessors (neighbours one level
  // closer) in reverse BFS order needs no predecessor lists.
  for (size_t i = order.size(); i-- > 1;) {
    uint32_t x = order[i];
    double coeff = (1.0 + delta[x]) / sigma[x];
    int32_t dp = dist[x] - 1;
    for (uint32_t k = off[x], e = off[x + 1]; k < e; ++k) {
      uint32_t v = adj[k];
      if (dist[v] == dp) delta[v] += sigma[v] * coeff;
    }
    w->acc[x] += std::llround(delta[x] * scale);
  }
  for (uint32_t x : order) {
    dist[x] = -1;
    sigma[x] = 0;
    delta[x] = 0;
  }
}

}  // namespace

Result<std::vector<double>> BetweennessSums(const Csr& g, const std::vector<uint32_t>& sources,
                                            int threads) {
  const uint32_t n = g.node_count;
  std::vector<double> out(n, 0.0);
  if (n == 0 || sources.empty()) return out;
  // Each delta_s(v) <= n - 2, so the total stays below n * |sources|. Scale by the
  // largest power of two that keeps that bound under 2^62: exact integer sums,
  // full double precision per term.
  int bound_bits = std::bit_width(static_cast<uint64_t>(n)) +
                   std::bit_width(static_cast<uint64_t>(sources.size()));
  if (bound_bits > 52) {
    return Status::InvalidArgument("betweenness: too many sources for this graph size");
  }
  const double scale = std::ldexp(1.0, 62 - bound_bits);
  int workers = std::max(1, std::min<int>(threads, static_cast<int>(sources.size())));
  std::vector<BrandesScratch> scratch;
  scratch.reserve(workers);
  for (int t = 0; t < workers; ++t) scratch.emplace_back(n);
  std::atomic<size_t> next{0};
  Progress progress("betweenness");
  progress.Stage("Brandes", sources.size(), "sources");
  auto work = [&](BrandesScratch* w) {
    for (size_t i; (i = next.fetch_add(1, std::memory_order_relaxed)) < sources.size();) {
      AccumulateSource(g, sources[i], scale, w);
      progress.Advance();
    }
  };
  std::vector<std::thread> pool;
  for (int t = 1; t < workers; ++t) pool.emplace_back(work, &scratch[t]);
  work(&scratch[0]);
  for (std::thread& th : pool) th.join();
  for (uint32_t v = 0; v < n; ++v) {
    int64_t total = 0;
    for (const BrandesScratch& w : scratch) total += w.acc[v];
    out[v] = static_cast<double>(total) / scale;
  }
  return out;
}

std::vector<uint32_t> SampleSources(uint32_t node_count, uint32_t count, uint64_t seed) {
  std::vector<uint32_t> all(node_count);
  for (uint32_t i = 0; i < node_count; ++i) all[i] = i;
  if (count >= node_count) return all;
  // splitmix64: tiny, fixed, identical everywhere (std:: distributions are not).
  uint64_t state = seed;
  auto next = [&state]() {
    uint64_t z = (state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  };
  for (uint32_t i = 0; i < count; ++i) {
    uint32_t j = i + static_cast<uint32_t>(next() % (node_count - i));
    std::swap(all[i], all[j]);
  }
  all.resize(count);
  std::sort(all.begin(), all.end());
  return all;
}

}  // namespace amem::query
