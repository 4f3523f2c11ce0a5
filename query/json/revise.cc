// The JSON document of the revise answer (query/render.h).
#include "query/revise.h"

#include <nlohmann/json.hpp>

#include "snapshot/reader.h"

namespace amem::query {

namespace {
Json RowJson(const ReviseRow& row) {
  Json j = NodeRowJson(row.node);
  j["depth"] = row.depth;
  j["falls"] = row.falls;
  j["support"] = row.support_total;
  j["support_lost"] = row.support_lost;
  j["confidence"] = row.confidence;
  j["confidence_loss"] = row.confidence_loss;
  return j;
}

Json Rows(const std::vector<ReviseRow>& rows) {
  Json a = Json::array();
  for (const ReviseRow& row : rows) a.push_back(RowJson(row));
  return a;
}
}  // namespace

Json ReviseJson(const ReviseResult& result, std::string_view hypothesis) {
  Json doc;
  doc["query"] = "revise";
  if (!hypothesis.empty()) doc["hypothesis"] = std::string(hypothesis);
  Json retracted = Json::array();
  for (const NodeRow& row : result.retracted) retracted.push_back(NodeRowJson(row));
  doc["retracted"] = std::move(retracted);
  doc["total_impact"] = result.total_impact;
  doc["affected_count"] = result.affected_count;
  doc["fallen_count"] = result.fallen_count;
  doc["unsupported_inference_count"] = result.unsupported_inference_count;
  doc["unsupported_decision_count"] = result.unsupported_decision_count;
  doc["affected"] = Rows(result.affected);
  doc["unsupported_inferences"] = Rows(result.unsupported_inferences);
  doc["unsupported_decisions"] = Rows(result.unsupported_decisions);
  return doc;
}

}  // namespace amem::query
