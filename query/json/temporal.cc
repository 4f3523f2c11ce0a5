// The JSON document of the temporal answer (query/render.h).
#include "query/temporal.h"

#include <nlohmann/json.hpp>

#include "snapshot/reader.h"

namespace amem::query {

Json TemporalJson(const snapshot::Reader& reader, const TemporalResult& r) {
  Json doc;
  doc["query"] = "temporal";
  doc["a_nodes"] = r.a_count;
  doc["b_nodes"] = r.b_count;
  Json counts;
  counts["added"] = r.added_count;
  counts["corrected"] = r.corrected_count;
  counts["updated"] = r.updated_count;
  counts["unchanged"] = r.unchanged_count;
  doc["counts"] = std::move(counts);
  const auto rows = [&](const std::vector<uint32_t>& nodes) {
    Json out = Json::array();
    for (uint32_t i : nodes) {
      Json row = NodeJson(reader, i);
      row["created_ts"] = reader.created_ts(i);
      row["updated_ts"] = reader.updated_ts(i);
      out.push_back(std::move(row));
    }
    return out;
  };
  doc["added"] = rows(r.added);
  Json corr = Json::array();
  for (const Correction& c : r.corrected) {
    Json row;
    row["newer"] = NodeJson(reader, c.newer);
    row["older"] = NodeJson(reader, c.older);
    corr.push_back(std::move(row));
  }
  doc["corrected"] = std::move(corr);
  doc["updated"] = rows(r.updated);
  doc["unchanged"] = rows(r.unchanged);
  return doc;
}

}  // namespace amem::query
