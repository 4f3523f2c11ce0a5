// Query 9, `hybrid-search`: keyword + semantic recall (docs/QUERIES.md #9, paper §4.2).
//
// Reciprocal Rank Fusion of two lists, each fetched to 3 x limit with the same
// filters: the BM25 list (query/text_search.h) and the cosine list
// (query/similar.h). The cosine list's space follows the query, as in `similar`:
// with a caller's vector, nodes are scored with their stored vectors (a node
// without one with the built-in embedding of its content); without one, the query
// is the built-in embedding of the text and every node is scored with the built-in
// embedding of its content, stored vectors ignored (`vector_basis` says which).
// For every node in either list
//   score = w_bm25 / (k + rank_bm25) + w_vector / (k + rank_vector)
// with 1-based ranks; a node missing from a list gets that list's length + 1.
// Rows: combined score descending, then index ascending.
//
// Choices where docs/QUERIES.md is silent: a text with no searchable terms gives an
// empty BM25 list (not an error) when a vector is given; the cosine list is the
// plain top 3 x limit by similarity (no minimum), zero vectors skipped.
#ifndef AMEM_QUERY_HYBRID_SEARCH_H_
#define AMEM_QUERY_HYBRID_SEARCH_H_

#include <cstdint>
#include <string>
#include <vector>

#include "common/status.h"
#include "query/query.h"
#include "query/render.h"

namespace amem::snapshot {
class Reader;
}

namespace amem::query {

struct HybridSearchOptions {
  std::string text;
  std::vector<float> vector;  // optional; dimension() floats
  uint32_t limit = 10;
  double bm25_weight = 0.5;
  double vector_weight = 0.5;
  double k = 60;
  TypeFilter types;
  RunFilter runs;
};

struct HybridHit {
  uint32_t index = 0;
  double score = 0;          // RRF
  uint32_t bm25_rank = 0;    // 1-based; 0: not in the BM25 list
  uint32_t vector_rank = 0;  // 1-based; 0: not in the cosine list
  double bm25_score = 0;     // raw BM25 (0 when not listed)
  double similarity = 0;     // raw cosine (0 when not listed)
};

struct HybridSearchResult {
  std::vector<std::string> terms;
  std::vector<HybridHit> hits;
  uint32_t bm25_listed = 0;
  uint32_t vector_listed = 0;
  const char* vector_basis = "";  // the cosine list's space: SimilarResult::basis
};

// InvalidArgument when k or a weight is not finite (or k < 0), or when the text has
// no searchable term and no vector is given; Similar's errors for the vector.
Result<HybridSearchResult> HybridSearch(const snapshot::Reader& reader,
                                        const HybridSearchOptions& options);

Json HybridSearchJson(const snapshot::Reader& reader, const HybridSearchResult& result);

}  // namespace amem::query

#endif  // AMEM_QUERY_HYBRID_SEARCH_H_
