#include "query/centrality.h"

#include "query/internal/graph_kernels.h"
#include "query/internal/parallel.h"
#include "query/internal/topk.h"
#include "snapshot/reader.h"

namespace amem::query {

Result<CentralityMetric> ParseCentralityMetric(std::string_view name) {
  if (name == "pagerank") return CentralityMetric::kPageRank;
  if (name == "degree") return CentralityMetric::kDegree;
  if (name == "betweenness") return CentralityMetric::kBetweenness;
  return Status::InvalidArgument("unknown centrality metric '" + std::string(name) +
                                 "' (expected pagerank, degree or betweenness)");
}

const char* CentralityMetricName(CentralityMetric metric) {
  switch (metric) {
    case CentralityMetric::kPageRank: return "pagerank";
    case CentralityMetric::kDegree: return "degree";
    case CentralityMetric::kBetweenness: return "betweenness";
  }
  return "?";
}

namespace {

uint64_t CountEdges(const snapshot::Reader& reader, const RelationFilter& rels) {
  if (rels.all()) return reader.edge_count();
  uint64_t n = 0;
  for (uint32_t j = 0; j < reader.edge_count(); ++j) n += rels.Matches(reader.edge_rel(j));
  return n;
}

std::vector<double> DegreeScores(const snapshot::Reader& reader, const RelationFilter& rels) {
  const uint32_t n = reader.node_count();
  std::vector<double> scores(n, 0.0);
  if (n < 2) return scores;
  std::vector<uint32_t> degree(n, 0);
  if (rels.all()) {
    for (uint32_t i = 0; i < n; ++i) degree[i] = reader.out_degree(i) + reader.in_degree(i);
  } else {
    for (uint32_t u = 0; u < n; ++u) {
      for (uint32_t j = reader.out_begin(u), e = reader.out_end(u); j < e; ++j) {
        if (!rels.Matches(reader.edge_rel(j))) continue;
        ++degree[u];
        ++degree[reader.edge_target(j)];
      }
    }
  }
  const double denom = static_cast<double>(n - 1);
  for (uint32_t i = 0; i < n; ++i) scores[i] = degree[i] / denom;
  return scores;
}

}  // namespace

Result<CentralityResult> Centrality(const snapshot::Reader& reader,
                                    const CentralityOptions& options) {
  if (!(options.damping > 0 && options.damping < 1)) {
    return Status::InvalidArgument("centrality: damping must be in (0, 1)");
  }
  // The whole-graph kernels build flat tables that trust the adjacency's shape
  // (each in-list a slice of its node's range, degrees summing to the block): a
  // reader that checks lazily checks everything first, once (docs/FORMAT.md §9).
  AMEM_RETURN_IF_ERROR(reader.CheckRecords());
  CentralityResult result;
  result.metric = options.metric;
  const uint32_t n = reader.node_count();
  result.node_count = n;
  result.edge_count = CountEdges(reader, options.rels);

  std::vector<double> scores;
  switch (options.metric) {
    case CentralityMetric::kPageRank: {
      PageRankOptions pr;
      pr.damping = options.damping;
      pr.tolerance = options.tolerance;
      pr.max_iterations = options.max_iterations;
      pr.threads = WorkerCountFor(n, options.threads);
      PageRankResult r = PageRank(BuildPullGraph(reader, options.rels, pr.threads), pr);
      result.iterations = r.iterations;
      result.converged = r.converged;
      scores = std::move(r.scores);
      break;
    }
    case CentralityMetric::kDegree:
      scores = DegreeScores(reader, options.rels);
      break;
    case CentralityMetric::kBetweenness: {
      uint32_t count = n <= options.exact_limit ? n : std::min(n, options.sample_sources);
      std::vector<uint32_t> sources = SampleSources(n, count, options.seed);
      result.sources = static_cast<uint32_t>(sources.size());
      result.sampled = result.sources < n;
      auto sums = BetweennessSums(BuildUndirectedGraph(reader, options.rels), sources,
                                  WorkerCount(options.threads));
      if (!sums.ok()) return sums.status();
      scores = std::move(sums).value();
      double scale = 0;
      if (n > 2 && !sources.empty()) {
        scale = (static_cast<double>(n) / sources.size()) /
                (static_cast<double>(n - 1) * static_cast<double>(n - 2));
      }
      for (double& s : scores) s *= scale;
      break;
    }
  }

  TopK top(options.limit);
  for (uint32_t i = 0; i < n; ++i) {
    if (!options.types.Matches(reader.type(i))) continue;
    ++result.matched;
    top.Push(scores[i], i);
  }
  for (const Scored& s : top.Take()) result.rows.push_back({s.index, s.score});
  return result;
}

}  // namespace amem::query
