// The JSON document of the search answer (query/render.h).
#include "query/search.h"

#include <nlohmann/json.hpp>

#include "snapshot/reader.h"

namespace amem::query {

Json SearchJson(const snapshot::Reader& reader, const SearchResult& result,
                const SearchOptions& options) {
  Json doc;
  doc["query"] = "search";
  doc["sort"] = options.sort == SearchOptions::Sort::kRecent ? "recent" : "confidence";
  doc["matched"] = result.matched;
  doc["scanned"] = result.scanned;
  doc["plan"] = result.plan;
  Json rows = Json::array();
  for (uint32_t i : result.nodes) {
    Json row = NodeJson(reader, i);
    row["confidence"] = reader.confidence(i);
    row["created_ts"] = reader.created_ts(i);
    row["run"] = reader.run(i);
    row["scope"] = reader.scope(i);
    rows.push_back(std::move(row));
  }
  doc["nodes"] = std::move(rows);
  return doc;
}

}  // namespace amem::query
