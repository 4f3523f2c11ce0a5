// The JSON document of the resolve answer (query/render.h).
#include "query/resolve.h"

#include <nlohmann/json.hpp>

#include "snapshot/reader.h"

namespace amem::query {

Json ResolveJson(const snapshot::Reader& reader, const ResolveResult& result) {
  Json doc;
  doc["query"] = "resolve";
  doc["node"] = NodeJson(reader, result.chain.front());
  doc["current"] = NodeJson(reader, result.chain.back());
  doc["is_current"] = result.chain.size() == 1;
  doc["cycle"] = result.cycle;
  doc["truncated"] = result.truncated;
  doc["competing_versions"] = result.competing;
  Json rows = Json::array();
  for (size_t i = 0; i < result.chain.size(); ++i) {
    Json row = NodeJson(reader, result.chain[i]);
    row["created_ts"] = reader.created_ts(result.chain[i]);
    if (i > 0) row["via"] = EdgeJson(reader, result.edges[i - 1]);
    rows.push_back(std::move(row));
  }
  doc["chain"] = std::move(rows);
  return doc;
}

}  // namespace amem::query
