// Query 2, search: which memories match these attributes (docs/QUERIES.md #2).
#ifndef AMEM_QUERY_SEARCH_H_
#define AMEM_QUERY_SEARCH_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "query/query.h"
#include "query/render.h"

namespace amem::query {

struct SearchOptions {
  enum class Sort : uint8_t { kRecent, kConfidence };
  TypeFilter types;               // default: all
  std::vector<std::string> runs;  // run names; empty: all
  std::optional<std::string> scope;
  float min_confidence = 0.0f;  // inclusive
  float max_confidence = 1.0f;  // inclusive
  std::optional<int64_t> after;   // created_ts >= after
  std::optional<int64_t> before;  // created_ts < before
  Sort sort = Sort::kRecent;
  size_t limit = 20;
};
// "recent" or "confidence"; InvalidArgument otherwise.
Result<SearchOptions::Sort> ParseSearchSort(std::string_view text);

struct SearchResult {
  std::vector<uint32_t> nodes;  // best first
  uint64_t matched = 0;         // every node passing the filters
  uint64_t scanned = 0;         // candidates examined
  const char* plan = "";        // which index supplied the candidates
};

// Candidates come from the most selective of the time, session and type indexes
// (else all nodes), are filtered, and the top `limit` are kept in a heap: O(c log k).
// Recent: created_ts descending; confidence: confidence descending; ties by dense
// index ascending.
SearchResult Search(const snapshot::Reader& reader, const SearchOptions& options);
Json SearchJson(const snapshot::Reader& reader, const SearchResult& result,
                const SearchOptions& options);

}  // namespace amem::query

#endif  // AMEM_QUERY_SEARCH_H_
