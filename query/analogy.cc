#include "query/analogy.h"

#include <algorithm>
#include <cmath>
#include <mutex>
#include <string>
#include <vector>

#include "query/internal/cog_graph.h"
#include "query/internal/negation.h"
#include "query/internal/parallel.h"
#include "query/resolve.h"
#include "query/internal/topk.h"
#include "snapshot/reader.h"

namespace amem::query {

namespace {

int RelationDim(RelationId rel) {
  return 2 + (rel < kBuiltinRelationCount ? rel : kBuiltinRelationCount);
}

double Cosine(const float* a, const float* b, int n) {
  double dot = 0, na = 0, nb = 0;
  for (int k = 0; k < n; ++k) {
    dot += static_cast<double>(a[k]) * b[k];
    na += static_cast<double>(a[k]) * a[k];
    nb += static_cast<double>(b[k]) * b[k];
  }
  return na > 0 && nb > 0 ? dot / std::sqrt(na * nb) : 0.0;
}

// Above any content score (cosines computed in float lanes may pass 1 by a few
// parts in a million).
constexpr double kContentCeiling = 1.001;

struct Match {
  double score;
  uint32_t index;
  double structural, content;
  bool from_vectors;
};

// Better first: score descending, then index ascending.
bool Better(const Match& a, const Match& b) {
  if (a.score != b.score) return a.score > b.score;
  return a.index < b.index;
}

}  // namespace

void LaneDotAndNorm(const float* a, const float* b, uint32_t n, double* dot, double* nb) {
  float d[8] = {}, q[8] = {};
  uint32_t k = 0;
  for (; k + 8 <= n; k += 8) {
    for (int l = 0; l < 8; ++l) {
      d[l] += a[k + l] * b[k + l];
      q[l] += b[k + l] * b[k + l];
    }
  }
  double ds = 0, qs = 0;
  for (int l = 0; l < 8; ++l) {
    ds += d[l];
    qs += q[l];
  }
  for (; k < n; ++k) {
    ds += static_cast<double>(a[k]) * b[k];
    qs += static_cast<double>(b[k]) * b[k];
  }
  *dot = ds;
  *nb = qs;
}

void Fingerprint(const snapshot::Reader& r, uint32_t i, float* out) {
  std::fill(out, out + kFingerprintDims, 0.0f);
  out[0] = static_cast<float>(r.in_degree(i));
  out[1] = static_cast<float>(r.out_degree(i));
  for (uint32_t j = r.out_begin(i), end = r.out_end(i); j < end; ++j) {
    out[RelationDim(r.edge_rel(j))] += 1.0f;
  }
  for (uint32_t k = r.in_begin(i), end = r.in_end(i); k < end; ++k) {
    out[RelationDim(r.edge_rel(r.in_edge(k)))] += 1.0f;
  }
}

namespace {

// The fingerprint dimension of every in-edge, by in-list position. A node's
// in-edges are edge numbers spread over the whole edge block: reading each one's
// relation from its record while scanning the nodes is a random read per in-edge,
// most of the scan's time at 1M nodes. Here the relations are copied out of the
// records in order first (a byte per edge, a fifth of the records' size), then
// looked up by in-list position in a loop that keeps many reads in flight.
std::vector<uint8_t> InEdgeDims(const snapshot::Reader& r, int workers) {
  const uint32_t m = r.edge_count();
  std::vector<uint8_t> by_edge(m), by_in(m);
  SplitAcross(workers, m, [&](int, uint32_t begin, uint32_t end) {
    for (uint32_t j = begin; j < end; ++j) {
      by_edge[j] = static_cast<uint8_t>(RelationDim(r.edge_rel(j)));
    }
  });
  SplitAcross(workers, m, [&](int, uint32_t begin, uint32_t end) {
    for (uint32_t k = begin; k < end; ++k) by_in[k] = by_edge[r.in_edge(k)];
  });
  return by_in;
}

// The fingerprint of node i, as Fingerprint(r, i, out), with its in-edges'
// dimensions from InEdgeDims.
void FingerprintOf(const snapshot::Reader& r, const uint8_t* in_dims, uint32_t i, float* out) {
  uint32_t count[kFingerprintDims] = {};
  const uint32_t ob = r.out_begin(i), oe = r.out_end(i);
  const uint32_t ib = r.in_begin(i), ie = r.in_end(i);
  for (uint32_t j = ob; j < oe; ++j) ++count[RelationDim(r.edge_rel(j))];
  for (uint32_t k = ib; k < ie; ++k) ++count[in_dims[k]];
  count[0] = ie - ib;
  count[1] = oe - ob;
  for (int d = 0; d < kFingerprintDims; ++d) out[d] = static_cast<float>(count[d]);
}

using Best = BestOf<Match, bool (*)(const Match&, const Match&)>;

}  // namespace

Result<AnalogyResult> Analogy(const snapshot::Reader& r, uint32_t anchor,
                              const AnalogyOptions& options) {
  const uint32_t n = r.node_count();
  if (anchor >= n) {
    return Status::InvalidArgument("analogy: node " + std::to_string(anchor) + " out of range");
  }
  AMEM_RETURN_IF_ERROR(r.EnsureContent());
  const int workers =
      static_cast<int>(std::min<uint32_t>(WorkerCountFor(n, options.threads), n));

  // Excluded: the anchor and its 1-hop neighbours, as a sorted list.
  std::vector<uint32_t> excluded{anchor};
  for (uint32_t j = r.out_begin(anchor); j < r.out_end(anchor); ++j) {
    excluded.push_back(r.edge_target(j));
  }
  for (uint32_t k = r.in_begin(anchor); k < r.in_end(anchor); ++k) {
    excluded.push_back(r.in_source(k));
  }
  std::sort(excluded.begin(), excluded.end());
  excluded.erase(std::unique(excluded.begin(), excluded.end()), excluded.end());

  float fa[kFingerprintDims];
  Fingerprint(r, anchor, fa);

  const uint32_t dim = r.dimension();
  const float* va = r.vector(anchor);
  double va_norm2 = 0;
  if (va) {
    double ignored;
    LaneDotAndNorm(va, va, dim, &ignored, &va_norm2);
  }

  TermSignature anchor_sig;
  anchor_sig.Assign(r.content(anchor));
  // With a term index, shared[c] counts the anchor's content words in node c
  // (capped at 255): 0 means no overlap (Jaccard 0 without tokenizing c), and
  // shared[c] / |anchor words| bounds c's Jaccard (|A ∩ C| / |A ∪ C| with
  // |A ∪ C| >= |A|). Without one every node may share a word and is tokenized.
  // Counted when the first candidate without a vector comes up: with vectors on
  // every node it is unused.
  std::vector<uint8_t> shared;
  uint32_t unindexed = 0;  // anchor words the index lacks: any node may hold them
  std::once_flag shared_once;
  const bool index_words = r.has_term_index();
  auto count_shared = [&] {
    if (!index_words) return;
    shared.assign(n, 0);
    for (const std::string& token : DistinctTokens(r.content(anchor))) {
      if (IsNegationWord(token)) continue;
      std::optional<uint32_t> t = r.FindTerm(token);
      if (!t) {
        ++unindexed;
        continue;
      }
      snapshot::PostingList pl = r.postings(*t, snapshot::Field::kContent);
      for (uint32_t k = 0; k < pl.size(); ++k) {
        uint8_t& count = shared[pl.node(k)];
        count += count < 255;
      }
    }
  };
  const double anchor_words = static_cast<double>(anchor_sig.terms.size());
  const std::vector<uint8_t> in_dims = InEdgeDims(r, workers);

  // Each worker scores a range of candidates into its own selection; the scores do
  // not depend on the split, so neither does the merged top.
  std::vector<Best> best(workers, Best(options.limit, Better));
  std::vector<size_t> candidates(workers, 0);
  SplitAcross(workers, n, [&](int w, uint32_t c0, uint32_t c1) {
    TermSignature sig;
    float fc[kFingerprintDims];
    auto ex = std::lower_bound(excluded.begin(), excluded.end(), c0);
    for (uint32_t c = c0; c < c1; ++c) {
      while (ex != excluded.end() && *ex < c) ++ex;
      if (ex != excluded.end() && *ex == c) continue;
      if (!options.types.Matches(r.type(c)) || r.is_stub(c)) continue;
      ++candidates[w];

      FingerprintOf(r, in_dims.data(), c, fc);
      Match s{0, c, Cosine(fa, fc, kFingerprintDims), 0, false};
      // The content score is at most 1 (kContentCeiling allows for the rounding of
      // a float cosine): a candidate that could not beat the worst one kept even so
      // is not read further. The vector cosines are most of the scan otherwise.
      if (options.limit > 0 && best[w].full() &&
          kStructuralWeight * s.structural + kContentWeight * kContentCeiling <
              best[w].worst().score) {
        continue;
      }
      const float* vc = va ? r.vector(c) : nullptr;
      if (vc) {
        double dot, nc;
        LaneDotAndNorm(va, vc, dim, &dot, &nc);
        s.content = va_norm2 > 0 && nc > 0 ? dot / std::sqrt(va_norm2 * nc) : 0.0;
        s.from_vectors = true;
      } else {
        std::call_once(shared_once, count_shared);
        double ceiling = 1.0;
        if (index_words) {
          if (shared[c] == 0) {
            ceiling = 0;  // no indexed word in common: content 0, as without the bound
          } else if (shared[c] < 255) {
            ceiling = std::min(1.0, (shared[c] + unindexed) / anchor_words);
          }
        }
        if (options.limit > 0 && best[w].full() &&
            kStructuralWeight * s.structural + kContentWeight * ceiling <
                best[w].worst().score) {
          continue;
        }
        if (ceiling > 0) {
          sig.Assign(r.content(c));
          s.content = Jaccard(anchor_sig.terms, sig.terms);
        }
      }
      s.score = kStructuralWeight * s.structural + kContentWeight * s.content;
      best[w].Push(s);
    }
  });

  AnalogyResult out;
  Best merged(options.limit, Better);
  for (int w = 0; w < workers; ++w) {
    out.candidates += candidates[w];
    for (const Match& s : best[w].Take()) merged.Push(s);
  }
  const std::vector<Match> top = merged.Take();
  out.anchor = MakeNodeRow(r, anchor);
  for (const Match& s : top) {
    out.rows.push_back({MakeNodeRow(r, s.index), s.score, s.structural, s.content,
                        s.from_vectors});
  }
  return out;
}

Result<AnalogyResult> AnalogyForText(const snapshot::Reader& r, std::string_view text,
                                     const AnalogyOptions& options) {
  AMEM_RETURN_IF_ERROR(r.EnsureContent());
  std::optional<uint32_t> anchor = BestTextMatch(r, text);
  if (!anchor) return Status::NotFound("analogy: no node matches the text");
  return Analogy(r, *anchor, options);
}

Result<AnalogyResult> AnalogyFor(const snapshot::Reader& reader, const std::string& node,
                                 const std::string& text, const AnalogyOptions& options) {
  if (node.empty()) return AnalogyForText(reader, text, options);
  Result<uint32_t> n = ResolveNode(reader, node);
  if (!n.ok()) return n.status();
  return Analogy(reader, *n, options);
}

}  // namespace amem::query
