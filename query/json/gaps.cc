// The JSON document of the gaps answer (query/render.h).
#include "query/gaps.h"

#include <nlohmann/json.hpp>

#include "snapshot/reader.h"

namespace amem::query {

Json GapsJson(const GapsResult& result) {
  Json doc;
  doc["query"] = "gaps";
  doc["now"] = result.now;
  doc["total"] = result.total;
  Json counts;
  for (int k = 0; k < kGapKindCount; ++k) {
    counts[GapKindName(static_cast<GapKind>(k))] = result.counts[k];
  }
  doc["counts"] = std::move(counts);
  Json rows = Json::array();
  for (const GapRow& g : result.gaps) {
    Json j = NodeRowJson(g.node);
    j["kind"] = GapKindName(g.kind);
    j["severity"] = g.severity;
    j["description"] = g.description;
    j["downstream"] = g.downstream;
    rows.push_back(std::move(j));
  }
  doc["gaps"] = std::move(rows);
  return doc;
}

}  // namespace amem::query
