// Query 8, `text-search`: keyword recall with BM25 (docs/QUERIES.md #8, paper §4.1).
//
//   score(d) = sum over distinct query terms t in d of
//              idf(t) * tf * (k1 + 1) / (tf + k1 * (1 - b + b * dl / avgdl))
//   idf(t)   = ln((N - df + 0.5) / (df + 0.5) + 1),  k1 = 1.2, b = 0.75
//
// Documents are node contents tokenized by common/tokenizer.h (the TermIndex's
// content field); N is the node count, dl a content's token count, avgdl their
// mean over all N nodes. Meta text is not scored.
//
// Two paths with identical scores and order (tested): the fast path walks the
// TermIndex postings (DocLengths for dl); a file without those blocks is scanned —
// every content tokenized once. Each document's sum runs over the query's terms in
// query order in both paths, so the doubles agree bit for bit. In any-term mode the
// fast path counts every matching document but scores only those whose upper bound
// (the same sum at dl = 0, sound in doubles) beats the worst of the top-k so far:
// the answer is that of scoring every document (tested against it).
//
// Choices where docs/QUERIES.md is silent: repeated query terms count once; filters
// (`types`, `runs`) pick which documents are returned, while N, df and avgdl stay
// corpus-wide (the scores do not change when a filter is added); `match_all`
// (CLI --all) keeps only documents containing every query term, as FTS5's AND; a
// query left with no terms after tokenizing (only stop words or 1-letter words) is
// InvalidArgument.
#ifndef AMEM_QUERY_TEXT_SEARCH_H_
#define AMEM_QUERY_TEXT_SEARCH_H_

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

inline constexpr double kBm25K1 = 1.2;
inline constexpr double kBm25B = 0.75;

struct TextSearchOptions {
  std::string query;
  uint32_t limit = 10;
  TypeFilter types;
  RunFilter runs;
  bool match_all = false;
  enum class Path : uint8_t {
    kAuto,   // the index when the file has it, else scan
    kIndex,  // NotSupported without TermIndex and DocLengths
    kScan,   // always scan (tests, benchmarks)
  };
  Path path = Path::kAuto;
};

struct TextHit {
  uint32_t index = 0;
  double score = 0;
  std::vector<std::string> matched;  // query terms the document contains, query order
};

struct TextSearchResult {
  std::vector<std::string> terms;  // distinct query terms, query order
  std::vector<TextHit> hits;       // score descending, then index ascending
  uint32_t matched = 0;            // documents that qualified, before the limit
  bool used_index = false;
};

// InvalidArgument when the query has no searchable term (stop words and one-letter
// words are ignored); NotSupported when options.path asks for the term index and
// the snapshot has none.
Result<TextSearchResult> TextSearch(const snapshot::Reader& reader,
                                    const TextSearchOptions& options);

// The distinct terms of `text` in first-appearance order (the query's terms).
std::vector<std::string> QueryTerms(std::string_view text);

Json TextSearchJson(const snapshot::Reader& reader, const TextSearchResult& result);

}  // namespace amem::query

#endif  // AMEM_QUERY_TEXT_SEARCH_H_
