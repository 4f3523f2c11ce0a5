// The JSON document of the hybrid-search answer (query/render.h).
#include "query/hybrid_search.h"

#include <nlohmann/json.hpp>

#include "query/internal/ranked_rows.h"
#include "snapshot/reader.h"

namespace amem::query {

Json HybridSearchJson(const snapshot::Reader& reader, const HybridSearchResult& result) {
  Json doc;
  doc["query"] = "hybrid-search";
  doc["terms"] = result.terms;
  doc["bm25_listed"] = result.bm25_listed;
  doc["vector_listed"] = result.vector_listed;
  doc["vector_basis"] = result.vector_basis;
  doc["results"] = RankedRowsJson(reader, result.hits, [](const HybridHit& hit, Json& r) {
    r["score"] = hit.score;
    r["bm25_rank"] = hit.bm25_rank ? Json(hit.bm25_rank) : Json(nullptr);
    r["vector_rank"] = hit.vector_rank ? Json(hit.vector_rank) : Json(nullptr);
    r["bm25_score"] = hit.bm25_rank ? Json(hit.bm25_score) : Json(nullptr);
    r["similarity"] = hit.vector_rank ? Json(hit.similarity) : Json(nullptr);
  });
  return doc;
}

}  // namespace amem::query
