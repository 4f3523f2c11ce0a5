// Query 14, `analogy`: have I seen this pattern before (docs/QUERIES.md 14, paper §4.7).
//
// sim(anchor, c) = 0.6 · structural + 0.4 · content, where
//   structural = cosine of the fingerprints (in-degree, out-degree, incident edges of
//     each built-in relation 0..15, incident edges of all custom relations together):
//     18 + 1 dimensions instead of the paper's 9, because amem has 16 built-in
//     relations; 0 when either fingerprint is all zero (an isolated node);
//   content = cosine of the two stored vectors when both nodes have one, else the
//     Jaccard overlap of their distinct content words (negation.h TermSignature).
// Fingerprints are read off the CSR adjacency (O(degree) per node, so O(V + E) for
// the scan), with the in-edges' relations copied out by in-list position first;
// candidates are every node but the anchor, its 1-hop neighbours (either
// direction, any relation) and stubs. The scan runs on `threads` workers over
// ranges of nodes; the answer does not depend on their number.
// Token overlap is computed only for nodes sharing a word with the anchor (found
// through the term index's postings; by scanning without one): the others have 0.
// A candidate whose score could not reach the worst row kept, even with the
// highest content score it may have (1 for vectors; the share of the anchor's
// words it holds, from the postings, for tokens), is not read further: the
// answer is the same, without reading most vectors or texts.
// Ranked by sim descending, then index ascending.
#ifndef AMEM_QUERY_ANALOGY_H_
#define AMEM_QUERY_ANALOGY_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "query/query.h"
#include "query/render.h"

namespace amem::snapshot {
class Reader;
}

namespace amem::query {

inline constexpr int kFingerprintDims = 2 + kBuiltinRelationCount + 1;
inline constexpr double kStructuralWeight = 0.6;
inline constexpr double kContentWeight = 0.4;

struct AnalogyOptions {
  size_t limit = 5;
  TypeFilter types;  // candidates' types
  // Workers scanning the candidates; 0: one per hardware thread and at most one
  // per 128K nodes (query/internal/parallel.h). The answer is the same for any count.
  int threads = 0;
};

struct AnalogyRow {
  NodeRow node;
  double score = 0;
  double structural = 0;
  double content = 0;
  bool content_from_vectors = false;  // else token overlap
};

struct AnalogyResult {
  NodeRow anchor;
  size_t candidates = 0;  // nodes scored
  std::vector<AnalogyRow> rows;
};

// The fingerprint of node i (see above), in `out[kFingerprintDims]`.
void Fingerprint(const snapshot::Reader& reader, uint32_t i, float* out);

// dot(a, b) and |b|^2 over n floats as the content score sums them: eight float
// lanes (SIMD without -ffast-math; the reduction order is fixed, so the results
// are too), then the lanes and the tail in double. Exposed for tests.
void LaneDotAndNorm(const float* a, const float* b, uint32_t n, double* dot, double* nb);

// The memories most like `anchor`. InvalidArgument when anchor is out of range.
Result<AnalogyResult> Analogy(const snapshot::Reader& reader, uint32_t anchor,
                              const AnalogyOptions& options = {});
// The anchor is the best BM25 match for `text`; NotFound when no node matches.
Result<AnalogyResult> AnalogyForText(const snapshot::Reader& reader, std::string_view text,
                                     const AnalogyOptions& options = {});

Json AnalogyJson(const AnalogyResult& result);

// Analogy anchored on the node `node` names, else on the best match of `text`.
// REQUIRES: exactly one of them is non-empty. NotFound when the node does not
// exist or no node matches the text; InvalidArgument for an empty node argument.
Result<AnalogyResult> AnalogyFor(const snapshot::Reader& reader, const std::string& node,
                                 const std::string& text, const AnalogyOptions& options);

}  // namespace amem::query

#endif  // AMEM_QUERY_ANALOGY_H_
