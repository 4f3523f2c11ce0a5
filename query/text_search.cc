#include "query/text_search.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <optional>
#include <unordered_set>

#include "common/tokenizer.h"
#include "query/internal/topk.h"
#include "snapshot/reader.h"

namespace amem::query {

namespace {

// Both paths score through these three functions: the same operations in the same
// order give the same doubles.
double Idf(uint32_t n, uint32_t df) {
  return std::log((static_cast<double>(n - df) + 0.5) / (df + 0.5) + 1.0);
}

double LengthNorm(uint32_t dl, double avgdl) {
  if (!(avgdl > 0)) return kBm25K1 * (1.0 - kBm25B);
  return kBm25K1 * (1.0 - kBm25B + kBm25B * (dl / avgdl));
}

double TermScore(double idf, uint32_t tf, double norm) {
  return idf * (tf * (kBm25K1 + 1.0)) / (tf + norm);
}

bool Admits(const snapshot::Reader& reader, const TextSearchOptions& options, uint32_t d) {
  // Without a filter nothing is read: on a base + delta view each read is a lookup.
  return (options.types.all() || options.types.Matches(reader.type(d))) &&
         (options.runs.all() || options.runs.Matches(reader.session(d)));
}

struct Cursor {
  snapshot::PostingCursor list;  // content postings, ascending node
  double idf = 0;
};

// Any-term (OR) mode, exact top-k with pruning. Every document holding a term is
// counted (`matched`), but few are scored. The node numbers are taken in windows of
// `w`: each term's cursor is walked through the window in query order, leaving per
// slot the term's tf and presence bit and adding the term's bound to the slot's
// sum; then the slots with a posting are visited in ascending node order and those
// whose sum beats the worst of the top-k so far are scored (their lengths read in
// one batch). A slot's sum bounds its exact score: each term's bound is TermScore
// at the norm of a document of length 0, and since IEEE rounding is monotone,
// LengthNorm(dl) >= LengthNorm(0) in doubles, so TermScore(idf, tf, norm(dl)) <=
// TermScore(idf, tf, norm(0)) (a positive numerator over a denominator not
// smaller), and the sum, taken over the same terms in the same order from the same
// 0, is not smaller either. Documents come in ascending node order, so once the
// top-k is full a document enters only with a score above the worst kept one
// (which only rises): a document whose bound is not above it is skipped without
// reading its length or dividing. Scores, order and `matched` are those of scoring
// every document (tested against that).
void AnyTermPath(const snapshot::Reader& reader, const TextSearchOptions& options,
                 const std::vector<std::string>& terms, std::vector<Cursor>& cursors,
                 double avgdl, TextSearchResult* result) {
  // The terms with postings, query order: the others add nothing to any score.
  std::vector<size_t> has_postings;
  for (size_t q = 0; q < cursors.size(); ++q) {
    if (!cursors[q].list.done()) has_postings.push_back(q);
  }
  const size_t p_count = has_postings.size();
  // The tf rows take p_count * w slots: at most 64K (256 KB), w from 64 to 4096.
  uint32_t w = 4096;
  while (w > 64 && size_t{w} * p_count > (size_t{1} << 16)) w /= 2;
  const uint32_t words = w / 64;
  std::vector<double> bound(w, 0.0);
  std::vector<uint32_t> tfs(p_count * w);  // row p: term has_postings[p]; read under its bit
  std::vector<uint64_t> present(p_count * words, 0);  // row p: the slots term p holds
  const double norm0 = LengthNorm(0, avgdl);
  constexpr uint32_t kTabled = 8;  // the bound of tf 1..7 from a table
  std::vector<double> table(p_count * kTabled, 0.0);
  for (size_t p = 0; p < p_count; ++p) {
    for (uint32_t tf = 1; tf < kTabled; ++tf) {
      table[p * kTabled + tf] = TermScore(cursors[has_postings[p]].idf, tf, norm0);
    }
  }
  auto holds = [&](size_t p, uint32_t s) {
    return (present[p * words + (s >> 6)] >> (s & 63)) & 1;
  };
  const bool filtered = !options.types.all() || !options.runs.all();
  const bool keep = options.limit > 0;
  TopK top(options.limit);
  // Each document pushed into `top` (ascending) and which terms it holds.
  std::vector<uint32_t> pushed;
  std::vector<bool> pushed_has;  // p_count per push
  std::vector<uint32_t> candidates, lengths;  // a window's slots to score, their dl
  // Where each slot's document is: its length is read from that file's array, not
  // through a view's merged numbering.
  std::vector<const snapshot::Reader*> files(w);
  std::vector<uint32_t> locals(w);

  std::vector<size_t> live;  // rows whose cursor is not done, query order
  for (size_t p = 0; p < p_count; ++p) live.push_back(p);
  while (!live.empty()) {
    uint32_t base = UINT32_MAX;
    for (size_t p : live) base = std::min(base, cursors[has_postings[p]].list.node());
    for (size_t p : live) {
      const Cursor& term = cursors[has_postings[p]];
      snapshot::PostingCursor& c = cursors[has_postings[p]].list;
      const double* tp = &table[p * kTabled];
      uint32_t* tfp = &tfs[p * w];
      uint64_t* bits = &present[p * words];
      const uint32_t end = base > UINT32_MAX - w ? UINT32_MAX : base + w;
      c.ForEachBelow(end, [&](uint32_t node, uint32_t tf, const snapshot::Reader* file,
                              uint32_t local) {
        const uint32_t s = node - base;
        tfp[s] = tf;
        files[s] = file;
        locals[s] = local;
        bound[s] += tf < kTabled ? tp[tf] : TermScore(term.idf, tf, norm0);
        bits[s >> 6] |= uint64_t{1} << (s & 63);
      });
    }
    std::erase_if(live, [&](size_t p) { return cursors[has_postings[p]].list.done(); });
    // The worst kept score only rises while the window is scored: a slot not above
    // it now will not be above it then.
    const bool prune = keep && top.full();
    const double worst = prune ? top.worst().score : 0;
    candidates.clear();
    for (uint32_t i = 0; i < words; ++i) {
      uint64_t m = 0;
      for (size_t p = 0; p < p_count; ++p) m |= present[p * words + i];
      if (!filtered) result->matched += static_cast<uint32_t>(std::popcount(m));
      for (; m != 0; m &= m - 1) {
        const uint32_t s = i * 64 + static_cast<uint32_t>(std::countr_zero(m));
        const double ub = bound[s];
        bound[s] = 0;
        if (filtered) {
          if (!Admits(reader, options, base + s)) continue;
          ++result->matched;
        }
        if (keep && (!prune || ub > worst)) candidates.push_back(s);
      }
    }
    // The lengths first: independent reads, which the processor overlaps.
    lengths.resize(candidates.size());
    for (size_t k = 0; k < candidates.size(); ++k) {
      lengths[k] = files[candidates[k]]->doc_length(locals[candidates[k]]);
    }
    for (size_t k = 0; k < candidates.size(); ++k) {
      const uint32_t s = candidates[k], d = base + s;
      const double norm = LengthNorm(lengths[k], avgdl);
      double score = 0;
      for (size_t p = 0; p < p_count; ++p) {
        if (holds(p, s) && tfs[p * w + s] != 0) {
          score += TermScore(cursors[has_postings[p]].idf, tfs[p * w + s], norm);
        }
      }
      if (!top.full() || score > top.worst().score) {
        top.Push(score, d);
        pushed.push_back(d);
        for (size_t p = 0; p < p_count; ++p) pushed_has.push_back(holds(p, s));
      }
    }
    std::fill(present.begin(), present.end(), 0);
  }
  for (const Scored& best : top.Take()) {
    const size_t k = std::lower_bound(pushed.begin(), pushed.end(), best.index) - pushed.begin();
    TextHit hit{best.index, best.score, {}};
    for (size_t p = 0; p < p_count; ++p) {
      if (pushed_has[k * p_count + p]) hit.matched.push_back(terms[has_postings[p]]);
    }
    result->hits.push_back(std::move(hit));
  }
}

// The postings are read through cursors (snapshot::PostingCursor): on a base +
// delta view a common term's list is renumbered as it is walked, never copied,
// and each posting brings its document's length from the file that holds it.
void IndexPath(const snapshot::Reader& reader, const TextSearchOptions& options,
               const std::vector<std::string>& terms, TextSearchResult* result) {
  const uint32_t n = reader.document_count();
  const double avgdl = reader.average_doc_length();
  std::vector<std::optional<uint32_t>> ids(terms.size());
  std::vector<Cursor> cursors(terms.size());
  for (size_t q = 0; q < terms.size(); ++q) {
    ids[q] = reader.FindTerm(terms[q]);
    if (ids[q]) {
      cursors[q].list = reader.postings_cursor(*ids[q], snapshot::Field::kContent);
      cursors[q].idf = Idf(n, cursors[q].list.size());
    }
  }
  if (!options.match_all) return AnyTermPath(reader, options, terms, cursors, avgdl, result);

  // Every term: drive with the shortest list and seek in the others.
  TopK top(options.limit);
  size_t driver = 0;
  for (size_t q = 0; q < cursors.size(); ++q) {
    if (cursors[q].list.size() < cursors[driver].list.size()) driver = q;
  }
  for (snapshot::PostingCursor& lead = cursors[driver].list; !lead.done(); lead.Next()) {
    const uint32_t d = lead.node();
    bool all = true, exhausted = false;
    for (Cursor& c : cursors) {
      c.list.Seek(d);
      exhausted |= c.list.done();  // no later document has every term
      if (exhausted || c.list.node() != d) all = false;
      if (exhausted) break;
    }
    if (exhausted) break;
    if (!all || !Admits(reader, options, d)) continue;
    const double norm = LengthNorm(lead.doc_length(), avgdl);
    double score = 0;
    for (const Cursor& c : cursors) score += TermScore(c.idf, c.list.tf(), norm);
    ++result->matched;
    top.Push(score, d);
  }
  // Each hit holds every term.
  for (const Scored& best : top.Take()) {
    result->hits.push_back(TextHit{best.index, best.score, terms});
  }
}

Status ScanPath(const snapshot::Reader& reader, const TextSearchOptions& options,
                const std::vector<std::string>& terms, TextSearchResult* result) {
  AMEM_RETURN_IF_ERROR(reader.DecodeAllContent());  // every text is tokenized
  const uint32_t n = reader.node_count();
  const size_t q_count = terms.size();
  // Sorted (term, query position) for lookups while tokenizing.
  std::vector<std::pair<std::string_view, uint32_t>> lookup;
  for (uint32_t q = 0; q < q_count; ++q) lookup.emplace_back(terms[q], q);
  std::sort(lookup.begin(), lookup.end());

  std::vector<uint32_t> df(q_count, 0), tf(q_count, 0);
  // Documents containing at least one term: their number, length and tf row.
  std::vector<uint32_t> docs, doc_len, doc_tf;
  uint64_t total_len = 0;
  for (uint32_t d = 0; d < n; ++d) {
    uint32_t dl = 0;
    bool any = false;
    ForEachToken(reader.content(d), [&](std::string_view tok) {
      ++dl;
      auto it = std::lower_bound(lookup.begin(), lookup.end(), tok,
                                 [](const auto& e, std::string_view t) { return e.first < t; });
      if (it != lookup.end() && it->first == tok) {
        if (tf[it->second] < snapshot::kMaxTermFrequency) ++tf[it->second];
        any = true;
      }
    });
    total_len += dl;
    if (!any) continue;
    docs.push_back(d);
    doc_len.push_back(dl);
    for (size_t q = 0; q < q_count; ++q) {
      df[q] += tf[q] > 0;
      doc_tf.push_back(tf[q]);
      tf[q] = 0;
    }
  }
  const double avgdl = n ? static_cast<double>(total_len) / n : 0.0;
  std::vector<double> idf(q_count);
  for (size_t q = 0; q < q_count; ++q) idf[q] = Idf(n, df[q]);

  TopK top(options.limit);
  for (size_t k = 0; k < docs.size(); ++k) {
    const uint32_t* row = &doc_tf[k * q_count];
    if (options.match_all && std::find(row, row + q_count, 0u) != row + q_count) continue;
    if (!Admits(reader, options, docs[k])) continue;
    const double norm = LengthNorm(doc_len[k], avgdl);
    double score = 0;
    for (size_t q = 0; q < q_count; ++q) {
      if (row[q]) score += TermScore(idf[q], row[q], norm);
    }
    ++result->matched;
    top.Push(score, static_cast<uint32_t>(k));  // position in docs: same order as d
  }
  for (const Scored& s : top.Take()) {
    const uint32_t* row = &doc_tf[s.index * q_count];
    TextHit hit{docs[s.index], s.score, {}};
    for (size_t q = 0; q < q_count; ++q) {
      if (row[q]) hit.matched.push_back(terms[q]);
    }
    result->hits.push_back(std::move(hit));
  }
  return Status::OK();
}

}  // namespace

std::vector<std::string> QueryTerms(std::string_view text) {
  // A hash set, not a search of the terms so far: 100K distinct words took 42 s.
  std::vector<std::string> terms;
  std::unordered_set<std::string> seen;
  ForEachToken(text, [&](std::string_view tok) {
    if (seen.emplace(tok).second) terms.emplace_back(tok);
  });
  return terms;
}

Result<TextSearchResult> TextSearch(const snapshot::Reader& reader,
                                    const TextSearchOptions& options) {
  TextSearchResult result;
  result.terms = QueryTerms(options.query);
  if (result.terms.empty()) {
    return Status::InvalidArgument(
        "text-search: the query has no searchable terms (stop words and one-letter "
        "words are ignored)");
  }
  const bool indexed = reader.has_term_index() && reader.has_doc_lengths();
  if (options.path == TextSearchOptions::Path::kIndex && !indexed) {
    return Status::NotSupported("text-search: the snapshot has no term index");
  }
  result.used_index = indexed && options.path != TextSearchOptions::Path::kScan;
  if (result.used_index) {
    IndexPath(reader, options, result.terms, &result);
  } else {
    AMEM_RETURN_IF_ERROR(ScanPath(reader, options, result.terms, &result));
  }
  return result;
}

}  // namespace amem::query
