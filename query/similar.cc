#include "query/similar.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "common/hash.h"
#include "common/model.h"
#include "common/tokenizer.h"
#include "query/internal/topk.h"
#include "snapshot/reader.h"

#if defined(__SSE2__)
#include <immintrin.h>
#endif

namespace amem::query {

namespace {

constexpr int kLanes = 8;

// Lane l accumulates elements i with i % 8 == l: dot(q, v) and |v|^2 in float, in
// the same order on every path, then the lanes are reduced in double, lane 0 first.
struct DotNorm {
  double dot = 0;
  double norm2 = 0;
};

DotNorm ReduceLanes(const float* dot, const float* norm) {
  DotNorm r;
  for (int l = 0; l < kLanes; ++l) {
    r.dot += dot[l];
    r.norm2 += norm[l];
  }
  return r;
}

DotNorm DotAndNorm(const float* q, const float* v, uint32_t n) {
  alignas(32) float dot[kLanes] = {0}, norm[kLanes] = {0};
  uint32_t i = 0;
#if defined(__SSE2__)
  __m128 d0 = _mm_setzero_ps(), d1 = _mm_setzero_ps();
  __m128 n0 = _mm_setzero_ps(), n1 = _mm_setzero_ps();
  for (; i + kLanes <= n; i += kLanes) {
    __m128 v0 = _mm_loadu_ps(v + i), v1 = _mm_loadu_ps(v + i + 4);
    d0 = _mm_add_ps(d0, _mm_mul_ps(_mm_loadu_ps(q + i), v0));
    d1 = _mm_add_ps(d1, _mm_mul_ps(_mm_loadu_ps(q + i + 4), v1));
    n0 = _mm_add_ps(n0, _mm_mul_ps(v0, v0));
    n1 = _mm_add_ps(n1, _mm_mul_ps(v1, v1));
  }
  _mm_store_ps(dot, d0);
  _mm_store_ps(dot + 4, d1);
  _mm_store_ps(norm, n0);
  _mm_store_ps(norm + 4, n1);
#else
  for (; i + kLanes <= n; i += kLanes) {
    for (int l = 0; l < kLanes; ++l) {
      dot[l] += q[i + l] * v[i + l];
      norm[l] += v[i + l] * v[i + l];
    }
  }
#endif
  for (int l = 0; i < n; ++i, ++l) {
    dot[l] += q[i] * v[i];
    norm[l] += v[i] * v[i];
  }
  return ReduceLanes(dot, norm);
}

double Norm(const float* v, uint32_t n) { return std::sqrt(DotAndNorm(v, v, n).norm2); }

// The built-in embedding (common/tokenizer.h HashEmbed) before its L2
// normalisation: each token adds +1 or -1 at Hash64(token) % dim. Cosine does not
// care about the normalisation, so scoring a text against a query needs only the
// buckets the text touches: O(its tokens), not O(dim), and exact integer counts.
class SparseEmbedder {
 public:
  explicit SparseEmbedder(uint32_t dim) : counts_(dim, 0), seen_(dim, 0) {}

  // Writes the raw counts of `text` to out[0, dim) (zeroed first).
  void Counts(std::string_view text, double* out) {
    Accumulate(text);
    std::fill(out, out + counts_.size(), 0.0);
    for (uint32_t b : touched_) out[b] = counts_[b];
    Reset();
  }

  // dot(q, counts of text) and |counts|^2, summed in the order buckets are first
  // touched (deterministic).
  DotNorm Score(std::string_view text, const double* q) {
    Accumulate(text);
    DotNorm r;
    for (uint32_t b : touched_) {
      const double c = counts_[b];
      r.dot += q[b] * c;
      r.norm2 += c * c;
    }
    Reset();
    return r;
  }

 private:
  void Accumulate(std::string_view text) {
    const uint32_t dim = static_cast<uint32_t>(counts_.size());
    ForEachToken(text, [&](std::string_view t) {
      const uint64_t h = Hash64(t);
      const uint32_t b = static_cast<uint32_t>(h % dim);
      if (!seen_[b]) {
        seen_[b] = 1;
        touched_.push_back(b);
      }
      counts_[b] += (h >> 63) ? -1 : 1;
    });
  }
  void Reset() {
    for (uint32_t b : touched_) {
      counts_[b] = 0;
      seen_[b] = 0;
    }
    touched_.clear();
  }

  std::vector<int32_t> counts_;
  std::vector<uint8_t> seen_;
  std::vector<uint32_t> touched_;
};

}  // namespace

uint32_t QueryDimension(const snapshot::Reader& reader) {
  return reader.dimension() ? reader.dimension() : kDefaultDimension;
}

double Cosine(const float* a, const float* b, uint32_t n) {
  double na = Norm(a, n);
  DotNorm r = DotAndNorm(a, b, n);
  if (na == 0 || r.norm2 == 0) return 0;
  return r.dot / (na * std::sqrt(r.norm2));
}

Result<SimilarResult> Similar(const snapshot::Reader& reader, const SimilarOptions& options) {
  SimilarResult result;
  const uint32_t dim = QueryDimension(reader);
  result.dimension = dim;
  SparseEmbedder embedder(dim);
  // The query: `query` in the stored vectors' space; `weights` is what a node's
  // built-in embedding is dotted with (the same floats there; in the built-in
  // embedding's space, the query text's raw counts).
  std::vector<float> query;
  std::vector<double> weights(dim);
  std::string_view query_text;
  if (!options.vector.empty()) {
    if (options.vector.size() != dim) {
      return Status::InvalidArgument("similar: the query vector has " +
                                     std::to_string(options.vector.size()) +
                                     " values; the snapshot's dimension is " +
                                     std::to_string(dim));
    }
    for (float f : options.vector) {
      if (!std::isfinite(f)) return Status::InvalidArgument("similar: query vector value is not finite");
    }
    query = options.vector;
    result.query_source = "vector";
    result.basis = kStoredVectors;
  } else if (!options.text.empty()) {
    query_text = options.text;
    result.query_source = "text";
    result.basis = kBuiltinEmbedding;
  } else if (options.node) {
    if (*options.node >= reader.node_count()) {
      return Status::NotFound("similar: node #" + std::to_string(*options.node) +
                              " is not in the snapshot");
    }
    if (const float* v = reader.vector(*options.node)) {
      query.assign(v, v + dim);
      result.query_source = "node vector";
      result.basis = kStoredVectors;
    } else {
      AMEM_RETURN_IF_ERROR(reader.EnsureContent());
      query_text = reader.content(*options.node);
      result.query_source = "node text";
      result.basis = kBuiltinEmbedding;
    }
  } else {
    return Status::InvalidArgument("similar: give a node, --vector or --text");
  }
  // In the built-in embedding's space every node is embedded, stored vector or not.
  const bool embed_all = std::string_view(result.basis) == kBuiltinEmbedding;
  double query_norm = 0, query_norm2 = 0;
  if (embed_all) {
    embedder.Counts(query_text, weights.data());
    for (double w : weights) query_norm2 += w * w;  // integers: exact
    query_norm = std::sqrt(query_norm2);
  } else {
    query_norm = Norm(query.data(), dim);
    std::copy(query.begin(), query.end(), weights.begin());
  }
  if (query_norm == 0) {
    return Status::InvalidArgument(
        "similar: the query vector is all zeros (text with no searchable terms, or a "
        "node without vector or content)");
  }

  bool content_ready = false;
  TopK top(options.limit);
  const uint32_t n = reader.node_count();
  const bool filtered = !options.types.all() || !options.runs.all();
  std::span<const uint32_t> stored;
  // Unfiltered, every node's stored vector (or, in the built-in space, its stored
  // embedding) is read: the reader checks them a batch at a time. Filtered, only
  // the nodes that match are read (and checked).
  constexpr uint32_t kBatch = 256;
  const float* batch[kBatch];
  std::optional<std::span<const uint32_t>> embedded[kBatch];
  const bool batched = !embed_all && !filtered, batched_text = embed_all && !filtered;
  const auto stored_embedding = [&](uint32_t i) {
    if (!batched_text) return reader.embedding(i, &stored);
    if (embedded[i % kBatch]) stored = *embedded[i % kBatch];
    return embedded[i % kBatch].has_value();
  };
  for (uint32_t i = 0; i < n; ++i) {
    if (i % kBatch == 0 && (batched || batched_text)) {
      const uint32_t count = std::min(kBatch, n - i);
      if (batched) reader.vectors(i, count, batch);
      if (batched_text) reader.embeddings(i, count, embedded);
    }
    if (options.node && i == *options.node) continue;
    if (filtered &&
        (!options.types.Matches(reader.type(i)) || !options.runs.Matches(reader.session(i)))) {
      continue;
    }
    const float* v = batched ? batch[i % kBatch] : embed_all ? nullptr : reader.vector(i);
    DotNorm r;
    if (v != nullptr) {
      r = DotAndNorm(query.data(), v, dim);
    } else if (stored_embedding(i)) {
      // The snapshot's copy of the same counts, in the same order: the same sums.
      for (uint32_t e : stored) {
        const uint32_t b = snapshot::EmbeddingBlock::Bucket(e);
        if (b >= dim) return Status::Corruption("embeddings: bucket out of range");
        const double c = snapshot::EmbeddingBlock::Count(e);
        r.dot += weights[b] * c;
        r.norm2 += c * c;
      }
      ++result.embedded;
    } else {
      if (!content_ready) {
        AMEM_RETURN_IF_ERROR(reader.EnsureContent());
        content_ready = true;
      }
      r = embedder.Score(reader.content(i), weights.data());
      ++result.embedded;
    }
    ++result.scanned;
    if (r.norm2 == 0) continue;
    // Built-in space: integer dot and norms, so a text equal to the query scores
    // exactly 1 (sqrt of a perfect square is exact).
    double sim = embed_all ? r.dot / std::sqrt(query_norm2 * r.norm2)
                           : r.dot / (query_norm * std::sqrt(r.norm2));
    if (!(sim >= options.min_similarity)) continue;
    ++result.matched;
    top.Push(sim, i);
  }
  for (const Scored& s : top.Take()) result.hits.push_back({s.index, s.score});
  return result;
}

}  // namespace amem::query
