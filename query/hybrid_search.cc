#include "query/hybrid_search.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

#include "query/similar.h"
#include "query/text_search.h"
#include "query/internal/topk.h"
#include "snapshot/reader.h"

namespace amem::query {

Result<HybridSearchResult> HybridSearch(const snapshot::Reader& reader,
                                        const HybridSearchOptions& options) {
  if (!(options.k >= 0) || !std::isfinite(options.k) || !std::isfinite(options.bm25_weight) ||
      !std::isfinite(options.vector_weight)) {
    return Status::InvalidArgument("hybrid-search: k and the weights must be finite, k >= 0");
  }
  HybridSearchResult result;
  result.terms = QueryTerms(options.text);
  if (result.terms.empty() && options.vector.empty()) {
    return Status::InvalidArgument(
        "hybrid-search: the text has no searchable terms and no --vector was given");
  }
  const uint32_t fetch = options.limit > std::numeric_limits<uint32_t>::max() / 3
                             ? std::numeric_limits<uint32_t>::max()
                             : options.limit * 3;

  std::vector<TextHit> bm25;
  if (!result.terms.empty()) {
    TextSearchOptions t;
    t.query = options.text;
    t.limit = fetch;
    t.types = options.types;
    t.runs = options.runs;
    auto r = TextSearch(reader, t);
    if (!r.ok()) return r.status();
    bm25 = std::move(r->hits);
  }

  SimilarOptions s;
  s.vector = options.vector;
  s.text = options.text;
  s.limit = fetch;
  s.min_similarity = -std::numeric_limits<double>::infinity();
  s.types = options.types;
  s.runs = options.runs;
  std::vector<SimilarHit> cosine;
  result.vector_basis = options.vector.empty() ? kBuiltinEmbedding : kStoredVectors;
  auto sr = Similar(reader, s);
  if (sr.ok()) {
    cosine = std::move(sr->hits);
    result.vector_basis = sr->basis;
  } else if (!sr.status().IsInvalidArgument() || !options.vector.empty()) {
    return sr.status();  // a bad caller vector is an error; an all-zero embedding is not
  }
  result.bm25_listed = static_cast<uint32_t>(bm25.size());
  result.vector_listed = static_cast<uint32_t>(cosine.size());

  // Union of both lists; std::map keeps it in ascending index order.
  std::map<uint32_t, HybridHit> by_index;
  for (size_t r = 0; r < bm25.size(); ++r) {
    HybridHit& h = by_index[bm25[r].index];
    h.bm25_rank = static_cast<uint32_t>(r + 1);
    h.bm25_score = bm25[r].score;
  }
  for (size_t r = 0; r < cosine.size(); ++r) {
    HybridHit& h = by_index[cosine[r].index];
    h.vector_rank = static_cast<uint32_t>(r + 1);
    h.similarity = cosine[r].similarity;
  }
  std::vector<HybridHit> unique;
  unique.reserve(by_index.size());
  for (auto& [index, h] : by_index) {
    h.index = index;
    unique.push_back(h);
  }
  const double missing_bm25 = static_cast<double>(bm25.size()) + 1;
  const double missing_vector = static_cast<double>(cosine.size()) + 1;
  TopK top(options.limit);
  for (uint32_t i = 0; i < unique.size(); ++i) {
    HybridHit& h = unique[i];
    double rb = h.bm25_rank ? h.bm25_rank : missing_bm25;
    double rv = h.vector_rank ? h.vector_rank : missing_vector;
    h.score = options.bm25_weight / (options.k + rb) + options.vector_weight / (options.k + rv);
    top.Push(h.score, i);  // positions in `unique` ascend with the node index
  }
  for (const Scored& s : top.Take()) result.hits.push_back(unique[s.index]);
  return result;
}

}  // namespace amem::query
