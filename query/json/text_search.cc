// The JSON document of the text-search answer (query/render.h).
#include "query/text_search.h"

#include <nlohmann/json.hpp>

#include "query/internal/ranked_rows.h"
#include "snapshot/reader.h"

namespace amem::query {

Json TextSearchJson(const snapshot::Reader& reader, const TextSearchResult& result) {
  Json doc;
  doc["query"] = "text-search";
  doc["terms"] = result.terms;
  doc["path"] = result.used_index ? "index" : "scan";
  doc["matched"] = result.matched;
  doc["results"] = RankedRowsJson(reader, result.hits, [](const TextHit& hit, Json& r) {
    r["score"] = hit.score;
    r["matched_terms"] = hit.matched;
  });
  return doc;
}

}  // namespace amem::query
