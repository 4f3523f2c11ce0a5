// Query 10, `centrality`: which memories are central (docs/QUERIES.md #10, paper §4.3).
//
//   pagerank     alpha = 0.85 over unweighted directed edges (parallel edges and
//                self-loops count as edges), dangling mass spread uniformly, start
//                1/N, stop when the L1 change < 1e-6 or after 100 iterations. Runs
//                on `threads` workers; the scores are identical for any count.
//   degree       (in + out) / (N - 1), counting edges; 0 when N < 2.
//   betweenness  Brandes on the undirected simple graph (an edge in either
//                direction joins two nodes; parallel edges merged, self-loops
//                dropped, as networkx's Graph). Exact when N <= 1,000; above, 200
//                sources drawn with a fixed seed and the sums scaled by N / 200.
//                Normalised by (N - 1)(N - 2) (0 when N < 3). Runs on `threads`
//                workers; results are identical for any thread count.
//
// Choices where docs/QUERIES.md is silent (paper §4.3: "filtering by event type"):
// `rels` restricts the graph itself (only those edges exist for the metric);
// `types` only filters the rows returned — scores are computed on the whole graph,
// so a fact's PageRank does not change because you asked for facts only. N is the
// snapshot's node count (stub nodes included: they are endpoints of real edges).
#ifndef AMEM_QUERY_CENTRALITY_H_
#define AMEM_QUERY_CENTRALITY_H_

#include <cstdint>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "query/query.h"
#include "query/render.h"

namespace amem::snapshot {
class Reader;
}

namespace amem::query {

enum class CentralityMetric : uint8_t { kPageRank, kDegree, kBetweenness };
// "pagerank", "degree" or "betweenness"; InvalidArgument naming the choices otherwise.
Result<CentralityMetric> ParseCentralityMetric(std::string_view name);
const char* CentralityMetricName(CentralityMetric metric);

struct CentralityOptions {
  CentralityMetric metric = CentralityMetric::kPageRank;
  TypeFilter types;     // rows returned
  RelationFilter rels;  // edges the metric sees
  uint32_t limit = 20;
  // PageRank and betweenness workers; 0: one per hardware thread (for PageRank
  // also at most one per 128K nodes, query/internal/parallel.h).
  int threads = 0;
  // Knobs the contract fixes; tests and benches may change them.
  double damping = 0.85;
  double tolerance = 1e-6;
  int max_iterations = 100;
  uint32_t exact_limit = 1000;   // betweenness exact up to this many nodes
  uint32_t sample_sources = 200;
  uint64_t seed = 0x616d656d;    // "amem"
};

struct CentralityRow {
  uint32_t index = 0;
  double score = 0;
};

struct CentralityResult {
  CentralityMetric metric = CentralityMetric::kPageRank;
  std::vector<CentralityRow> rows;  // score descending, then index ascending
  uint32_t node_count = 0;          // N
  uint64_t edge_count = 0;          // edges the metric saw (after `rels`)
  uint32_t matched = 0;             // nodes passing `types`, before the limit
  // PageRank only.
  int iterations = 0;
  bool converged = true;
  // Betweenness only: sources used (N when exact) and whether they were sampled.
  uint32_t sources = 0;
  bool sampled = false;
};

// InvalidArgument when the PageRank damping is not in (0, 1).
Result<CentralityResult> Centrality(const snapshot::Reader& reader,
                                    const CentralityOptions& options);

// {"query":"centrality","metric":...,"node_count":...,"results":[{node...,"score"}],...}
Json CentralityJson(const snapshot::Reader& reader, const CentralityResult& result);

}  // namespace amem::query

#endif  // AMEM_QUERY_CENTRALITY_H_
