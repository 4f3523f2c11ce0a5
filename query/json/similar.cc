// The JSON document of the similar answer (query/render.h).
#include "query/similar.h"

#include <nlohmann/json.hpp>

#include "query/internal/ranked_rows.h"
#include "snapshot/reader.h"

namespace amem::query {

Json SimilarJson(const snapshot::Reader& reader, const SimilarResult& result) {
  Json doc;
  doc["query"] = "similar";
  doc["query_source"] = result.query_source;
  doc["basis"] = result.basis;
  doc["dimension"] = result.dimension;
  doc["scanned"] = result.scanned;
  doc["embedded"] = result.embedded;
  doc["matched"] = result.matched;
  doc["results"] = RankedRowsJson(reader, result.hits, [](const SimilarHit& hit, Json& r) {
    r["similarity"] = hit.similarity;
  });
  return doc;
}

}  // namespace amem::query
