// The JSON document of the centrality answer (query/render.h).
#include "query/centrality.h"

#include <nlohmann/json.hpp>

#include "query/internal/ranked_rows.h"
#include "snapshot/reader.h"

namespace amem::query {

Json CentralityJson(const snapshot::Reader& reader, const CentralityResult& result) {
  Json doc;
  doc["query"] = "centrality";
  doc["metric"] = CentralityMetricName(result.metric);
  doc["node_count"] = result.node_count;
  doc["edge_count"] = result.edge_count;
  if (result.metric == CentralityMetric::kPageRank) {
    doc["iterations"] = result.iterations;
    doc["converged"] = result.converged;
  }
  if (result.metric == CentralityMetric::kBetweenness) {
    doc["sources"] = result.sources;
    doc["sampled"] = result.sampled;
  }
  doc["matched"] = result.matched;
  doc["results"] = RankedRowsJson(reader, result.rows, [](const CentralityRow& row, Json& r) {
    r["score"] = row.score;
  });
  return doc;
}

}  // namespace amem::query
