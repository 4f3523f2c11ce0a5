// Whole-graph kernels behind `centrality` (docs/QUERIES.md #10): compact views of the
// graph built once per query from a snapshot::Reader (a CSR for betweenness, the
// pull layout for PageRank), PageRank and Brandes betweenness.
//
// The kernels work on plain arrays so tests can check them against reference
// implementations on hand-built graphs without writing a snapshot.
#ifndef AMEM_QUERY_INTERNAL_GRAPH_KERNELS_H_
#define AMEM_QUERY_INTERNAL_GRAPH_KERNELS_H_

#include <array>
#include <cstdint>
#include <utility>
#include <vector>

#include "common/status.h"
#include "query/query.h"

namespace amem::snapshot {
class Reader;
}

namespace amem::query {

// Compressed sparse rows: the neighbours of u are targets[offsets[u] .. offsets[u+1]).
struct Csr {
  uint32_t node_count = 0;
  std::vector<uint32_t> offsets;  // node_count + 1 entries
  std::vector<uint32_t> targets;

  uint32_t begin(uint32_t u) const { return offsets[u]; }
  uint32_t end(uint32_t u) const { return offsets[u + 1]; }
  uint32_t degree(uint32_t u) const { return offsets[u + 1] - offsets[u]; }
  // Builds from an edge list (source, target); lists keep the input order.
  static Csr FromEdges(uint32_t node_count,
                       const std::vector<std::pair<uint32_t, uint32_t>>& edges);
};

// The directed graph as PageRank pulls it, laid out as its sweeps read it: per
// block of kPullBlock nodes, the nodes grouped by in-degree so that lists of up to
// kPullShortList sources are summed by loops of a fixed length (no branch on the
// degree, no padding), the longer ones after them.
inline constexpr uint32_t kPullBlock = 4096;
inline constexpr uint32_t kPullShortList = 8;
struct PullGraph {
  struct Block {
    // The block's nodes (offsets from its first node), by in-degree: those of
    // degree d <= kPullShortList end at group_end[d], the longer ones follow in
    // node order. Stable: nodes of one degree stay in node order.
    std::vector<uint16_t> order;
    std::array<uint32_t, kPullShortList + 1> group_end{};
    std::vector<uint32_t> sources;   // the lists of `order`'s nodes, one after another
    std::vector<uint32_t> long_end;  // where each longer list ends in `sources`
    std::vector<uint32_t> dangling;  // the block's nodes without out-edges
    bool operator==(const Block&) const = default;
  };
  uint32_t node_count = 0;
  std::vector<Block> blocks;  // ceil(node_count / kPullBlock)
  std::vector<uint32_t> out_degree;
  bool operator==(const PullGraph&) const = default;
};
// From a snapshot: each node's sources in the order of its in-list, by (relation,
// source). `threads` workers (>= 1) build it.
PullGraph BuildPullGraph(const snapshot::Reader& reader, const RelationFilter& rels,
                         int threads = 1);
// From an edge list (source, target): each node's sources in the order given.
PullGraph PullGraphFromEdges(uint32_t node_count,
                             const std::vector<std::pair<uint32_t, uint32_t>>& edges);

// The undirected simple graph betweenness runs on: u and v are neighbours when an
// edge joins them in either direction (parallel edges merged, self-loops dropped).
// Neighbour lists are sorted ascending.
Csr BuildUndirectedGraph(const snapshot::Reader& reader, const RelationFilter& rels);
Csr UndirectedFromEdges(uint32_t node_count,
                        const std::vector<std::pair<uint32_t, uint32_t>>& edges);

struct PageRankOptions {
  double damping = 0.85;
  double tolerance = 1e-6;  // stop when the L1 change of one iteration is below
  int max_iterations = 100;
  int threads = 1;  // workers (>= 1); the scores are the same for any count
};
struct PageRankResult {
  std::vector<double> scores;  // sums to 1 (for a non-empty graph)
  int iterations = 0;
  bool converged = false;
};
// The paper's formula: PR(v) = (1-a)/N + a * (sum over u->v of PR(u)/L(u) + D/N)
// where D is the rank held by nodes without out-edges (spread uniformly).
// Starts from 1/N. The shares PR(u)/L(u) are rounded to float (ranks, sums and the
// L1 change are doubles): the scores stay within about 1e-7 in L1 of an all-double
// run. Deterministic: each node's sum is a fixed function of its list (added in
// list order, or for lists longer than kPullShortList as four interleaved partial
// sums; float shares added in double are almost always exact, so the order rarely
// shows) and the per-block parts of the L1 change and dangling rank are added in
// block order, so the scores are identical bit for bit for any thread count, and
// nodes whose lists carry the same shares tie exactly. The scores are the ranks
// of the last iteration run.
PageRankResult PageRank(const PullGraph& graph, const PageRankOptions& options);

// Brandes' dependency accumulation from each of `sources` over the undirected graph,
// summed: result[v] = sum over s in sources of delta_s(v). Both orders of a pair are
// counted (divide by (N-1)(N-2) for the usual normalised undirected score).
// `threads` workers (>= 1) take sources one at a time; each source's dependencies
// are added as fixed-point integers, so the sum is exact and identical for any
// thread count and any schedule. InvalidArgument if N * |sources| is too large for
// the fixed-point range (never for the sizes the query uses).
Result<std::vector<double>> BetweennessSums(const Csr& undirected,
                                            const std::vector<uint32_t>& sources,
                                            int threads);

// `count` distinct nodes of [0, node_count) drawn with a fixed-seed generator
// (the same on every machine), ascending. All nodes when count >= node_count.
std::vector<uint32_t> SampleSources(uint32_t node_count, uint32_t count, uint64_t seed);

}  // namespace amem::query

#endif  // AMEM_QUERY_INTERNAL_GRAPH_KERNELS_H_
