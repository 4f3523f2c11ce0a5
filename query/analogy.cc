#include "query/analogy.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <thread>

#include "query/cog_graph.h"
#include "query/negation.h"
#include "query/topk.h"
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

// Dot product and squared norm of b with eight float lanes, which compilers turn
// into SIMD without -ffast-math (the reduction order is fixed, so results are too).
void DotAndNorm(const float* a, const float* b, uint32_t n, double* dot, double* nb) {
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

Result<AnalogyResult> Analogy(const snapshot::Reader& r, uint32_t anchor,
                              const AnalogyOptions& options) {
  const uint32_t n = r.node_count();
  if (anchor >= n) {
    return Status::InvalidArgument("analogy: node " + std::to_string(anchor) + " out of range");
  }
  AMEM_RETURN_IF_ERROR(r.EnsureContent());
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
    DotAndNorm(va, va, dim, &ignored, &va_norm2);
  }

  TermSignature anchor_sig;
  anchor_sig.Assign(r.content(anchor));
  // Nodes sharing a content word with the anchor; without a term index every node
  // is a possible one and is checked by tokenizing.
  std::vector<uint32_t> sharing;
  const bool all_may_share = !r.has_term_index();
  if (!all_may_share) {
    for (const std::string& token : DistinctTokens(r.content(anchor))) {
      if (IsNegationWord(token)) continue;
      std::optional<uint32_t> t = r.FindTerm(token);
      if (!t) continue;
      snapshot::PostingList pl = r.postings(*t, snapshot::Field::kContent);
      for (uint32_t k = 0; k < pl.size(); ++k) sharing.push_back(pl.node(k));
    }
    std::sort(sharing.begin(), sharing.end());
    sharing.erase(std::unique(sharing.begin(), sharing.end()), sharing.end());
  }

  // Each worker scores a contiguous range of candidates into its own top-k; the
  // ranges' lists are merged by Better, a total order, so the answer does not
  // depend on the number of workers.
  using Best = BestOf<Match, bool (*)(const Match&, const Match&)>;
  struct Part {
    explicit Part(size_t k) : best(k, Better) {}
    Best best;
    uint32_t candidates = 0;
  };
  auto scan = [&](uint32_t begin, uint32_t end, Part* part) {
    TermSignature sig;
    float fc[kFingerprintDims];
    size_t ex = std::lower_bound(excluded.begin(), excluded.end(), begin) - excluded.begin();
    size_t sh = std::lower_bound(sharing.begin(), sharing.end(), begin) - sharing.begin();
    for (uint32_t c = begin; c < end; ++c) {
      while (ex < excluded.size() && excluded[ex] < c) ++ex;
      if (ex < excluded.size() && excluded[ex] == c) continue;
      if (!options.types.Matches(r.type(c)) || r.is_stub(c)) continue;
      ++part->candidates;

      Fingerprint(r, c, fc);
      Match s{0, c, Cosine(fa, fc, kFingerprintDims), 0, false};
      const float* vc = va ? r.vector(c) : nullptr;
      if (vc) {
        double dot, nc;
        DotAndNorm(va, vc, dim, &dot, &nc);
        s.content = va_norm2 > 0 && nc > 0 ? dot / std::sqrt(va_norm2 * nc) : 0.0;
        s.from_vectors = true;
      } else {
        while (sh < sharing.size() && sharing[sh] < c) ++sh;
        if (all_may_share || (sh < sharing.size() && sharing[sh] == c)) {
          sig.Assign(r.content(c));
          s.content = Jaccard(anchor_sig.terms, sig.terms);
        }
      }
      s.score = kStructuralWeight * s.structural + kContentWeight * s.content;
      part->best.Push(s);
    }
  };
  // A worker per 16K candidates at most: below that a thread costs more than it saves.
  const uint32_t workers = static_cast<uint32_t>(
      std::clamp<uint64_t>(n / 16384, 1, static_cast<uint64_t>(std::max(1, options.threads))));
  std::vector<Part> parts(workers, Part(options.limit));
  {
    std::vector<std::thread> pool;
    for (uint32_t w = 1; w < workers; ++w) {
      pool.emplace_back(scan, static_cast<uint32_t>(uint64_t{n} * w / workers),
                        static_cast<uint32_t>(uint64_t{n} * (w + 1) / workers), &parts[w]);
    }
    scan(0, static_cast<uint32_t>(uint64_t{n} / workers), &parts[0]);
    for (std::thread& t : pool) t.join();
  }
  AnalogyResult out;
  Best merged(options.limit, Better);
  for (Part& p : parts) {
    out.candidates += p.candidates;
    for (const Match& m : p.best.Take()) merged.Push(m);
  }
  const std::vector<Match> best = merged.Take();
  out.anchor = MakeNodeRow(r, anchor);
  for (const Match& s : best) {
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

Json AnalogyJson(const AnalogyResult& result) {
  Json doc;
  doc["query"] = "analogy";
  doc["anchor"] = NodeRowJson(result.anchor);
  doc["candidates"] = result.candidates;
  Json rows = Json::array();
  for (const AnalogyRow& row : result.rows) {
    Json j = NodeRowJson(row.node);
    j["score"] = row.score;
    j["structural"] = row.structural;
    j["content"] = row.content;
    j["content_basis"] = row.content_from_vectors ? "vector" : "tokens";
    rows.push_back(std::move(j));
  }
  doc["analogies"] = std::move(rows);
  return doc;
}

}  // namespace amem::query
