// The JSON document of the analogy answer (query/render.h).
#include "query/analogy.h"

#include <nlohmann/json.hpp>

#include "snapshot/reader.h"

namespace amem::query {

Json AnalogyJson(const AnalogyResult& result) {
  Json doc;
  doc["query"] = "analogy";
  doc["anchor"] = NodeRowJson(result.anchor);
  doc["candidates"] = result.candidates;
  Json rows = Json::array();
  for (const AnalogyRow& row : result.rows) {
    Json j = NodeRowJson(row.node);
    j["score"] = row.score;
    j["structural"] = row.structural;
    j["content"] = row.content;
    j["content_basis"] = row.content_from_vectors ? "vector" : "tokens";
    rows.push_back(std::move(j));
  }
  doc["analogies"] = std::move(rows);
  return doc;
}

}  // namespace amem::query
