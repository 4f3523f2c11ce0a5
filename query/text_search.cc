#include "query/text_search.h"

#include <algorithm>
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
  TopK top(options.limit);
  auto score_doc = [&](uint32_t d, uint32_t dl, auto&& tf_of) {
    const double norm = LengthNorm(dl, avgdl);
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
      score_doc(d, lead.doc_length(), [&](size_t q) { return cursors[q].list.tf(); });
    }
  } else {
    // Document-at-a-time merge: no per-document accumulator array to clear.
    for (;;) {
      uint32_t d = UINT32_MAX;
      const snapshot::PostingCursor* at = nullptr;
      for (const Cursor& c : cursors) {
        if (!c.list.done() && c.list.node() < d) {
          d = c.list.node();
          at = &c.list;
        }
      }
      if (at == nullptr) break;
      if (Admits(reader, options, d)) {
        score_doc(d, at->doc_length(), [&](size_t q) {
          const snapshot::PostingCursor& c = cursors[q].list;
          return !c.done() && c.node() == d ? c.tf() : 0u;
        });
      }
      for (Cursor& c : cursors) {
        if (!c.list.done() && c.list.node() == d) c.list.Next();
      }
    }
  }
  // The terms each hit holds: a fresh cursor per term seeks the hits in node order.
  std::vector<Scored> best = top.Take();
  std::vector<uint32_t> order(best.size());
  for (uint32_t k = 0; k < order.size(); ++k) order[k] = k;
  std::sort(order.begin(), order.end(),
            [&](uint32_t a, uint32_t b) { return best[a].index < best[b].index; });
  std::vector<std::vector<bool>> has(terms.size(), std::vector<bool>(best.size(), false));
  for (size_t q = 0; q < terms.size(); ++q) {
    if (!ids[q]) continue;
    snapshot::PostingCursor c = reader.postings_cursor(*ids[q], snapshot::Field::kContent);
    for (uint32_t k : order) {
      c.Seek(best[k].index);
      if (c.done()) break;
      has[q][k] = c.node() == best[k].index;
    }
  }
  for (uint32_t k = 0; k < best.size(); ++k) {
    TextHit hit{best[k].index, best[k].score, {}};
    for (size_t q = 0; q < terms.size(); ++q) {
      if (has[q][k]) hit.matched.push_back(terms[q]);
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
