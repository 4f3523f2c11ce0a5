// The JSON document of the impact answer (query/render.h).
#include "query/impact.h"

#include <nlohmann/json.hpp>

#include "snapshot/reader.h"

namespace amem::query {

Json ImpactJson(const snapshot::Reader& reader, const ImpactResult& result) {
  Json doc;
  doc["query"] = "impact";
  doc["root"] = NodeJson(reader, result.root);
  doc["reached"] = result.reached;
  doc["affected_decisions"] = result.decisions;
  doc["affected_inferences"] = result.inferences;
  doc["truncated"] = result.truncated;
  Json rows = Json::array();
  for (const ImpactedNode& n : result.nodes) {
    Json row = NodeJson(reader, n.node);
    row["depth"] = n.depth;
    row["confidence"] = reader.confidence(n.node);
    row["via"] = EdgeJson(reader, n.edge);
    rows.push_back(std::move(row));
  }
  doc["dependents"] = std::move(rows);
  return doc;
}

}  // namespace amem::query
