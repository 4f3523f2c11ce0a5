// Query 5, `similar`: which memories are semantically close (docs/QUERIES.md #5).
//
// Exact cosine top-k: one pass over the contiguous vector block, each vector's dot
// product with the query and its own norm computed together in 8 float lanes (SSE
// on x86-64, the same lanes in plain C elsewhere, so every machine gets the same
// floats).
//
// The query decides the space every node is compared in (the result's `basis`):
// - "stored vectors": the query is a caller's vector, or the stored vector of the
//   query node. Each node is scored with its stored vector; a node without one
//   falls back to the built-in embedding of its content (common/tokenizer.h
//   HashEmbed) and is counted in `embedded`.
// - "built-in embedding": the query is the built-in embedding of `text`, or of the
//   content of a query node that has no stored vector. Every node is scored with
//   the built-in embedding of its content and stored vectors are ignored: a hashed
//   embedding and a model's vector live in unrelated spaces, so comparing them
//   would rank noise (a node would not even find its own text).
// A caller's vector wins over `text`, which wins over the node.
//
// Choices where docs/QUERIES.md is silent: a node query never returns the node itself;
// a node or query whose vector is all zeros has no direction, so such nodes are
// skipped and such a query is InvalidArgument; rows need similarity >=
// min_similarity. The cluster map is not used for pruning (the reader exposes no
// cluster assignments), so results are always exact.
#ifndef AMEM_QUERY_SIMILAR_H_
#define AMEM_QUERY_SIMILAR_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/status.h"
#include "query/query.h"
#include "query/render.h"

namespace amem::snapshot {
class Reader;
}

namespace amem::query {

struct SimilarOptions {
  std::optional<uint32_t> node;  // dense index (resolve arguments with ResolveNode)
  std::vector<float> vector;     // caller's query vector: dimension() finite floats
  std::string text;
  uint32_t limit = 10;
  double min_similarity = 0;
  TypeFilter types;
  RunFilter runs;
};

struct SimilarHit {
  uint32_t index = 0;
  double similarity = 0;
};

struct SimilarResult {
  std::vector<SimilarHit> hits;  // similarity descending, then index ascending
  uint32_t dimension = 0;
  const char* query_source = "";  // "vector", "text", "node vector", "node text"
  const char* basis = "";         // kStoredVectors or kBuiltinEmbedding (see above)
  uint32_t scanned = 0;           // nodes compared
  uint32_t embedded = 0;          // of which scored with the built-in embedding
  uint32_t matched = 0;           // at or above min_similarity, before the limit
};

// SimilarResult::basis values.
inline constexpr const char* kStoredVectors = "stored vectors";
inline constexpr const char* kBuiltinEmbedding = "built-in embedding";

// Errors: InvalidArgument when none of vector, text and node is given, when the
// vector's length is not the snapshot's dimension or a value is not finite, or
// when the query embeds to the zero vector; NotFound for a node out of range;
// Corruption for a damaged embeddings block.
Result<SimilarResult> Similar(const snapshot::Reader& reader, const SimilarOptions& options);

// The dimension queries use: the file's, or kDefaultDimension when it has none.
uint32_t QueryDimension(const snapshot::Reader& reader);

// Cosine of a and b over n floats, computed as Similar does (8 float lanes, then a
// double reduction); 0 when either is all zeros. Exposed for tests and benches.
double Cosine(const float* a, const float* b, uint32_t n);

Json SimilarJson(const snapshot::Reader& reader, const SimilarResult& result);

}  // namespace amem::query

#endif  // AMEM_QUERY_SIMILAR_H_
