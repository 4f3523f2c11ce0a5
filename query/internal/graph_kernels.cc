#include "query/internal/graph_kernels.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <barrier>
#include <bit>
#include <cmath>
#include <limits>
#include <memory>
#include <thread>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "common/progress.h"
#include "query/internal/parallel.h"
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
  const bool all = rels.all();
  for (uint32_t u = 0; u < reader.node_count(); ++u) {
    for (uint32_t j = reader.out_begin(u), e = reader.out_end(u); j < e; ++j) {
      if (all || rels.Matches(reader.edge_rel(j))) fn(u, reader.edge_target(j));
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

namespace {

// Lays out *g (empty) for n nodes; out-degrees and blocks still to fill.
void SizePullGraph(uint32_t n, PullGraph* g) {
  g->node_count = n;
  g->blocks.resize((static_cast<size_t>(n) + kPullBlock - 1) / kPullBlock);
  g->out_degree.resize(n);
}

// Fills in block b from its nodes' lists: `lists` holds them one after another in
// node order; degree[i] is the length of the i-th node's list. A counting sort by
// degree (lists longer than kPullShortList share one group), stable.
void FillBlock(PullGraph* g, uint32_t b, const uint32_t* lists, const uint32_t* degree) {
  static_assert(kPullBlock <= 65536, "order holds node offsets as uint16_t");
  constexpr uint32_t kLong = kPullShortList + 1;
  PullGraph::Block& block = g->blocks[b];
  const uint32_t v0 = b * kPullBlock, count = std::min(g->node_count - v0, kPullBlock);
  std::array<uint32_t, kLong + 1> nodes{}, node_at, source_at;
  uint32_t total = 0;
  for (uint32_t i = 0; i < count; ++i) {
    ++nodes[std::min(degree[i], kLong)];
    total += degree[i];
  }
  for (uint32_t d = 0, at = 0, source = 0; d <= kLong; ++d) {
    node_at[d] = at;
    source_at[d] = source;
    at += nodes[d];
    source += d * nodes[d];  // for the long group, the sum of its lengths follows
    if (d < kLong) block.group_end[d] = at;
  }
  block.order.resize(count);
  block.sources.resize(total);
  block.long_end.reserve(nodes[kLong]);
  for (uint32_t i = 0; i < count; ++i) {
    const uint32_t d = degree[i], group = std::min(d, kLong);
    block.order[node_at[group]++] = static_cast<uint16_t>(i);
    std::copy(lists, lists + d, block.sources.begin() + source_at[group]);
    source_at[group] += d;
    if (group == kLong) block.long_end.push_back(source_at[group]);
    if (g->out_degree[v0 + i] == 0) [[unlikely]] block.dangling.push_back(v0 + i);
    lists += d;
  }
}

}  // namespace

PullGraph BuildPullGraph(const snapshot::Reader& reader, const RelationFilter& rels,
                         int threads) {
  const uint32_t n = reader.node_count(), m = reader.edge_count();
  const int workers = static_cast<int>(std::clamp<uint32_t>(threads, 1, std::max(n, 1u)));
  constexpr uint32_t kLeftOut = std::numeric_limits<uint32_t>::max();
  PullGraph g;
  SizePullGraph(n, &g);
  // The source of every edge, by edge number (kLeftOut when `rels` leaves it
  // out), written in order; then each in-list of the snapshot, edge numbers in
  // (relation, source) order, becomes a list of sources. The reads of `source`
  // are random but independent, so many are in flight; reading the sources out of
  // the edge records themselves in that order would be several times slower.
  std::unique_ptr<uint32_t[]> source(new uint32_t[m]);
  const bool all = rels.all();
  SplitAcross(workers, n, [&](int, uint32_t begin, uint32_t end) {
    for (uint32_t u = begin; u < end; ++u) {
      uint32_t degree = 0;
      for (uint32_t j = reader.out_begin(u), e = reader.out_end(u); j < e; ++j) {
        const bool kept = all || rels.Matches(reader.edge_rel(j));
        source[j] = kept ? u : kLeftOut;
        degree += kept;
      }
      g.out_degree[u] = degree;
    }
  });
  SplitAcross(workers, static_cast<uint32_t>(g.blocks.size()),
              [&](int, uint32_t first, uint32_t last) {
    // A block's sources are read in one flat loop (no branch on a node's degree
    // holds up the random reads of `source`), then cut into rows and chunks.
    std::vector<uint32_t> lists, degree(kPullBlock);
    for (uint32_t b = first; b < last; ++b) {
      const uint32_t v0 = b * kPullBlock, v1 = std::min(n, v0 + kPullBlock);
      const uint32_t k0 = reader.in_begin(v0), k1 = reader.in_end(v1 - 1);
      lists.resize(k1 - k0);
      // Prefetching kAhead entries ahead keeps more of those reads in flight than
      // the out-of-order window does alone: 40% off the build at 1M (16 entries
      // ahead gained little, 64 most of it, 256 a little more, 512 no more).
      constexpr uint32_t kAhead = 256;
      for (uint32_t k = k0; k < k1; ++k) {
        if (k + kAhead < k1) __builtin_prefetch(&source[reader.in_edge(k + kAhead)]);
        lists[k - k0] = source[reader.in_edge(k)];
      }
      for (uint32_t v = v0; v < v1; ++v) degree[v - v0] = reader.in_end(v) - reader.in_begin(v);
      if (!all) {  // drop the edges `rels` leaves out, counting what each node keeps
        uint32_t kept = 0;
        for (uint32_t v = v0, k = 0; v < v1; ++v) {
          uint32_t d = 0;
          for (uint32_t e = k + degree[v - v0]; k < e; ++k) {
            if (lists[k] != kLeftOut) lists[kept + d++] = lists[k];
          }
          degree[v - v0] = d;
          kept += d;
        }
      }
      FillBlock(&g, b, lists.data(), degree.data());
    }
  });
  return g;
}

PullGraph PullGraphFromEdges(uint32_t node_count,
                             const std::vector<std::pair<uint32_t, uint32_t>>& edges) {
  std::vector<uint32_t> out_degree(node_count, 0);
  for (const auto& e : edges) ++out_degree[e.first];
  const Csr in = BucketEdges(node_count, [&](auto&& fn) {
    for (const auto& [u, v] : edges) fn(v, u);
  });
  PullGraph g;
  SizePullGraph(node_count, &g);
  g.out_degree = std::move(out_degree);
  std::vector<uint32_t> lists, degree(kPullBlock);
  for (uint32_t b = 0; b < g.blocks.size(); ++b) {
    const uint32_t v0 = b * kPullBlock, v1 = std::min(node_count, v0 + kPullBlock);
    lists.assign(in.targets.begin() + in.begin(v0), in.targets.begin() + in.end(v1 - 1));
    for (uint32_t v = v0; v < v1; ++v) degree[v - v0] = in.degree(v);
    FillBlock(&g, b, lists.data(), degree.data());
  }
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

namespace {

// PageRank sweeps the nodes in the graph's blocks. A block's part of each
// iteration's L1 change and dangling rank is kept apart and the parts are added in
// block order, so the sums, and with them every score, do not depend on how many
// threads ran or which thread took which block.

// The sums of the block's nodes of in-degree D, in `order` from *i on, whose lists
// start at *source; advances both.
template <uint32_t D>
void SumGroup(const PullGraph::Block& block, const float* share, double* sums, uint32_t* i,
              const uint32_t** source) {
  const uint16_t* order = block.order.data();
  const uint32_t* s = *source;
  const uint32_t end = block.group_end[D];
  for (uint32_t k = *i; k < end; ++k, s += D) {
    double x = 0;
    if constexpr (D > 0) {
      x = share[s[0]];
      for (uint32_t j = 1; j < D; ++j) x += share[s[j]];
    }
    sums[order[k]] = x;
  }
  *i = end;
  *source = s;
}

template <uint32_t... D>
void SumShortGroups(const PullGraph::Block& block, const float* share, double* sums,
                    uint32_t* i, const uint32_t** source,
                    std::integer_sequence<uint32_t, D...>) {
  (SumGroup<D>(block, share, sums, i, source), ...);
}

// sums[v - v0] = the sum of share[u] over v's in-edges u -> v, for v of block b,
// the same function of the list for every node (one by one in list order up to
// kPullShortList entries), so two nodes whose lists hold the same shares in the
// same order get the same sum exactly.
void PullSums(const PullGraph& g, uint32_t b, const float* share, double* sums) {
  const PullGraph::Block& block = g.blocks[b];
  uint32_t i = 0;
  const uint32_t* source = block.sources.data();
  SumShortGroups(block, share, sums, &i, &source,
                 std::make_integer_sequence<uint32_t, kPullShortList + 1>());
  // A long list (in-edges of a hub) is summed as four interleaved partial sums,
  // so that its adds are not one chain, each waiting on the last.
  const uint32_t* s = block.sources.data();
  for (uint32_t end : block.long_end) {
    const uint32_t* last = s + end;
    double x0 = share[source[0]], x1 = share[source[1]], x2 = share[source[2]],
           x3 = share[source[3]];
    for (source += 4; source + 4 <= last; source += 4) {
      x0 += share[source[0]];
      x1 += share[source[1]];
      x2 += share[source[2]];
      x3 += share[source[3]];
    }
    for (; source < last; ++source) x0 += share[*source];
    sums[block.order[i++]] = (x0 + x1) + (x2 + x3);
  }
}

}  // namespace

PageRankResult PageRank(const PullGraph& graph, const PageRankOptions& options) {
  PageRankResult result;
  const uint32_t n = graph.node_count;
  if (n == 0) {
    result.converged = true;
    return result;
  }
  const double alpha = options.damping;
  const double inv_n = 1.0 / n;
  if (options.max_iterations <= 0) {
    result.scores.assign(n, inv_n);
    return result;
  }
  const uint32_t blocks = static_cast<uint32_t>(graph.blocks.size());
  // A share rank(u) / L(u) travels as a float: half the bytes for the random reads
  // that dominate an iteration. Sums, ranks and the L1 change are doubles. A node's
  // previous rank is read back from its share (times L(u); a dangling node, which
  // no edge reads from, keeps its rank there): relative error 2^-24 per node, so
  // the L1 change is off by at most 6e-8 in all.
  std::unique_ptr<float[]> share_buffers(new float[2 * static_cast<size_t>(n)]);
  float* shares = share_buffers.get();
  float* next_shares = shares + n;
  result.scores.resize(n);
  // The sweeps read each node's out-degree L as a byte: an index into tables of L
  // (1 for a dangling node: its rank is kept whole) and 1/L; kWideDegree sends a
  // degree of that or more to graph.out_degree. A quarter of the bytes of the
  // 32-bit degrees for every sweep to stream.
  constexpr uint32_t kWideDegree = 255;
  // Entry kWideDegree is a placeholder, so a wide code may be looked up before
  // it is recognised.
  std::array<double, kWideDegree + 1> degree_of, inverse_of;
  degree_of[0] = inverse_of[0] = 1;
  degree_of[kWideDegree] = inverse_of[kWideDegree] = 0;
  for (uint32_t d = 1; d < kWideDegree; ++d) {
    degree_of[d] = d;
    inverse_of[d] = 1.0 / d;
  }
  std::unique_ptr<uint8_t[]> degree_code(new uint8_t[n]);
  const uint32_t* out_degree = graph.out_degree.data();
  const uint8_t* code = degree_code.get();

  std::vector<double> block_change(blocks), block_dangling(blocks);
  // kStart writes the first shares; each kIterate is one iteration; kFinish
  // repeats the last one from the same shares to keep its ranks, unless that
  // iteration kept them as it went (keep_ranks: set when it was likely the last).
  enum class Phase { kStart, kIterate, kFinish } phase = Phase::kStart;
  bool stop = false, keep_ranks = false;
  double last_change = 0;
  double base = 0;
  std::atomic<uint32_t> next_block{0};

  // Block b of the current phase; `sums` is the worker's scratch (kPullBlock).
  auto process = [&](uint32_t b, double* sums) {
    const uint32_t v0 = b * kPullBlock, v1 = std::min(n, v0 + kPullBlock);
    const std::vector<uint32_t>& dangling_nodes = graph.blocks[b].dangling;
    // Locals, so the loops below keep them in registers.
    const float* in = shares;
    float* out = next_shares;
    const double add = base;
    double change = 0, dangling = 0;
    if (phase == Phase::kStart) {
      for (uint32_t v = v0; v < v1; ++v) {
        const uint32_t d = out_degree[v];
        degree_code[v] = static_cast<uint8_t>(std::min(d, kWideDegree));
        out[v] = static_cast<float>(d ? inv_n * (1.0 / d) : inv_n);
      }
      dangling = inv_n * static_cast<double>(dangling_nodes.size());
    } else {
      PullSums(graph, b, in, sums);
      if (phase == Phase::kFinish) {
        for (uint32_t v = v0; v < v1; ++v) result.scores[v] = add + alpha * sums[v - v0];
        return;
      }
      // Two running sums of the change (even and odd nodes), so that the loop is
      // not bound by the latency of one chain of adds.
      double change_odd = 0;
      double* keep = keep_ranks ? result.scores.data() : nullptr;
      auto step = [&, in, out, add, keep](uint32_t v, double& into) {
        const double r = add + alpha * sums[v - v0];
        const uint32_t c = code[v];
        double d = degree_of[c], inverse = inverse_of[c];
        if (c == kWideDegree) [[unlikely]] {
          d = out_degree[v];
          inverse = 1.0 / out_degree[v];
        }
        into += std::fabs(r - static_cast<double>(in[v]) * d);
        out[v] = static_cast<float>(r * inverse);
        if (keep) keep[v] = r;
      };
      uint32_t v = v0;
#if defined(__SSE2__)
      // The same two nodes at a time in the two lanes of SSE2 registers: the same
      // operations on each, so the same bits, in half the instructions.
      const __m128d add2 = _mm_set1_pd(add), alpha2 = _mm_set1_pd(alpha);
      const __m128d magnitude = _mm_castsi128_pd(_mm_set1_epi64x(0x7fffffffffffffff));
      __m128d change2 = _mm_setzero_pd();  // lane 0: even nodes, lane 1: odd
      for (; v + 2 <= v1; v += 2) {
        const uint32_t c0 = code[v], c1 = code[v + 1];
        if (c0 == kWideDegree || c1 == kWideDegree) [[unlikely]] {
          double even = 0, odd = 0;
          step(v, even);
          step(v + 1, odd);
          change2 = _mm_add_pd(change2, _mm_set_pd(odd, even));
          continue;
        }
        const __m128d r = _mm_add_pd(add2, _mm_mul_pd(alpha2, _mm_loadu_pd(sums + (v - v0))));
        const __m128d old = _mm_cvtps_pd(
            _mm_castsi128_ps(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(in + v))));
        const __m128d d = _mm_set_pd(degree_of[c1], degree_of[c0]);
        change2 = _mm_add_pd(change2, _mm_and_pd(_mm_sub_pd(r, _mm_mul_pd(old, d)), magnitude));
        const __m128d inverse = _mm_set_pd(inverse_of[c1], inverse_of[c0]);
        _mm_storel_epi64(reinterpret_cast<__m128i*>(out + v),
                         _mm_castps_si128(_mm_cvtpd_ps(_mm_mul_pd(r, inverse))));
        if (keep) _mm_storeu_pd(keep + v, r);
      }
      change = _mm_cvtsd_f64(change2);
      change_odd = _mm_cvtsd_f64(_mm_unpackhi_pd(change2, change2));
#endif
      for (; v + 2 <= v1; v += 2) {
        step(v, change);
        step(v + 1, change_odd);
      }
      if (v < v1) step(v, change);
      change += change_odd;
      for (uint32_t u : dangling_nodes) dangling += add + alpha * sums[u - v0];
    }
    block_change[b] = change;
    block_dangling[b] = dangling;
  };
  // Runs once per phase, between all workers finishing it and any starting the next.
  auto end_phase = [&]() noexcept {
    next_block.store(0, std::memory_order_relaxed);
    if (phase == Phase::kFinish) {
      stop = true;
      return;
    }
    double change = 0, dangling = 0;
    for (uint32_t b = 0; b < blocks; ++b) {
      change += block_change[b];
      dangling += block_dangling[b];
    }
    if (phase == Phase::kIterate) {
      ++result.iterations;
      result.converged = change < options.tolerance;
      if (result.converged || result.iterations == options.max_iterations) {
        if (keep_ranks) {
          stop = true;
        } else {
          phase = Phase::kFinish;
        }
        return;
      }
      // The next iteration keeps its ranks (an extra write of them, instead of a
      // sweep after it) if it must be the last, or if the change, shrinking by the
      // ratio it just did, would come within a quarter more than the tolerance.
      keep_ranks = result.iterations + 1 == options.max_iterations ||
                   change * change < 1.25 * options.tolerance * last_change;
      last_change = change;
    }
    phase = Phase::kIterate;
    std::swap(shares, next_shares);
    base = (1.0 - alpha) * inv_n + alpha * dangling * inv_n;
  };

  const int workers = std::max(1, std::min<int>(options.threads, static_cast<int>(blocks)));
  std::barrier sync(workers, end_phase);
  auto work = [&]() {
    std::vector<double> sums(kPullBlock);
    while (!stop) {
      for (uint32_t b; (b = next_block.fetch_add(1, std::memory_order_relaxed)) < blocks;) {
        process(b, sums.data());
      }
      sync.arrive_and_wait();
    }
  };
  std::vector<std::thread> pool;
  for (int t = 1; t < workers; ++t) pool.emplace_back(work);
  work();
  for (std::thread& th : pool) th.join();
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
