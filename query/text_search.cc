#include "query/text_search.h"

#include <algorithm>
#include <cmath>
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

// First k in [from, list.size()) with list.node(k) >= node.
uint32_t LowerBound(const snapshot::PostingList& list, uint32_t from, uint32_t node) {
  uint32_t lo = from, hi = list.size();
  while (lo < hi) {
    uint32_t mid = lo + (hi - lo) / 2;
    if (list.node(mid) < node) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  return lo;
}

struct Cursor {
  snapshot::PostingList list;  // content postings, ascending node
  uint32_t pos = 0;
  double idf = 0;
};

void IndexPath(const snapshot::Reader& reader, const TextSearchOptions& options,
               const std::vector<std::string>& terms, TextSearchResult* result) {
  const uint32_t n = reader.document_count();
  const double avgdl = reader.average_doc_length();
  std::vector<Cursor> cursors(terms.size());
  for (size_t q = 0; q < terms.size(); ++q) {
    if (auto t = reader.FindTerm(terms[q])) {
      cursors[q].list = reader.postings(*t, snapshot::Field::kContent);
      cursors[q].idf = Idf(n, cursors[q].list.size());
    }
  }
  TopK top(options.limit);
  auto score_doc = [&](uint32_t d, auto&& tf_of) {
    const double norm = LengthNorm(reader.doc_length(d), avgdl);
    double score = 0;
    for (size_t q = 0; q < cursors.size(); ++q) {
      if (uint32_t tf = tf_of(q)) score += TermScore(cursors[q].idf, tf, norm);
    }
    ++result->matched;
    top.Push(score, d);
  };

  if (options.match_all) {
    // Drive with the shortest list and seek in the others.
    size_t driver = 0;
    for (size_t q = 0; q < cursors.size(); ++q) {
      if (cursors[q].list.size() < cursors[driver].list.size()) driver = q;
    }
    const snapshot::PostingList& lead = cursors[driver].list;
    for (uint32_t k = 0; k < lead.size(); ++k) {
      const uint32_t d = lead.node(k);
      bool all = true, exhausted = false;
      for (Cursor& c : cursors) {
        c.pos = LowerBound(c.list, c.pos, d);
        exhausted |= c.pos == c.list.size();  // no later document has every term
        if (exhausted || c.list.node(c.pos) != d) all = false;
        if (exhausted) break;
      }
      if (exhausted) break;
      if (!all || !Admits(reader, options, d)) continue;
      score_doc(d, [&](size_t q) { return cursors[q].list.tf(cursors[q].pos); });
    }
  } else {
    // Document-at-a-time merge: no per-document accumulator array to clear.
    for (;;) {
      uint32_t d = UINT32_MAX;
      for (const Cursor& c : cursors) {
        if (c.pos < c.list.size()) d = std::min(d, c.list.node(c.pos));
      }
      if (d == UINT32_MAX) break;
      if (Admits(reader, options, d)) {
        score_doc(d, [&](size_t q) {
          const Cursor& c = cursors[q];
          return c.pos < c.list.size() && c.list.node(c.pos) == d ? c.list.tf(c.pos) : 0u;
        });
      }
      for (Cursor& c : cursors) {
        if (c.pos < c.list.size() && c.list.node(c.pos) == d) ++c.pos;
      }
    }
  }
  for (const Scored& s : top.Take()) {
    TextHit hit{s.index, s.score, {}};
    for (size_t q = 0; q < cursors.size(); ++q) {
      const snapshot::PostingList& list = cursors[q].list;
      uint32_t k = LowerBound(list, 0, s.index);
      if (k < list.size() && list.node(k) == s.index) hit.matched.push_back(terms[q]);
    }
    result->hits.push_back(std::move(hit));
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
