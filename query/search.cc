// search (docs/QUERIES.md #2). The time window is [after, before) on created_ts. A
// --scope filter matches the node's scope exactly ("" matches unscoped nodes).
#include "query/search.h"

#include <algorithm>

#include "query/internal/topk.h"
#include "snapshot/reader.h"

namespace amem::query {

Result<SearchOptions::Sort> ParseSearchSort(std::string_view text) {
  if (text == "recent") return SearchOptions::Sort::kRecent;
  if (text == "confidence") return SearchOptions::Sort::kConfidence;
  return Status::InvalidArgument("sort must be recent or confidence");
}

namespace {

struct Candidate {
  double score;
  uint32_t node;
};
// Heap top = the worst kept candidate.
bool Better(const Candidate& a, const Candidate& b) {
  return a.score != b.score ? a.score > b.score : a.node < b.node;
}

}  // namespace

SearchResult Search(const snapshot::Reader& reader, const SearchOptions& options) {
  SearchResult result;
  RunFilter runs = ParseRuns(reader, options.runs);
  const uint32_t n = reader.node_count();

  // Candidate sources: choose the one with the fewest nodes.
  uint64_t time_begin = 0, time_end = reader.time_entry_count();
  if (options.after) time_begin = reader.TimeLowerBound(*options.after);
  if (options.before) time_end = reader.TimeLowerBound(*options.before);
  if (time_end < time_begin) time_end = time_begin;
  const bool use_time_index = options.after || options.before;
  uint64_t time_size = use_time_index ? time_end - time_begin : n;

  std::vector<snapshot::SessionRange> ranges;
  uint64_t run_size = n;
  if (!runs.all()) {
    run_size = 0;
    for (const std::string& run : SplitList(options.runs)) {
      auto s = reader.FindSession(run);
      if (!s) continue;
      snapshot::SessionRange r = reader.session_range(*s);
      if (std::any_of(ranges.begin(), ranges.end(),
                      [&](const auto& x) { return x.session == r.session; })) {
        continue;
      }
      ranges.push_back(r);
      run_size += r.end - r.begin;
    }
    std::sort(ranges.begin(), ranges.end(),
              [](const auto& a, const auto& b) { return a.begin < b.begin; });
  }
  uint64_t type_size = n;
  if (!options.types.all()) {
    type_size = 0;
    for (int t = 0; t < kNodeTypeCount; ++t) {
      if (options.types.Matches(static_cast<NodeType>(t))) {
        type_size += reader.type_count(static_cast<uint8_t>(t));
      }
    }
  }

  BestOf<Candidate, bool (*)(const Candidate&, const Candidate&)> best(options.limit, Better);
  const auto offer = [&](uint32_t i) {
    ++result.scanned;
    if (!options.types.Matches(reader.type(i)) || !runs.Matches(reader.session(i))) return;
    float c = reader.confidence(i);
    if (c < options.min_confidence || c > options.max_confidence) return;
    int64_t ts = reader.created_ts(i);
    if ((options.after && ts < *options.after) || (options.before && ts >= *options.before)) {
      return;
    }
    if (options.scope && reader.scope(i) != *options.scope) return;
    ++result.matched;
    if (options.limit == 0) return;
    Candidate cand{options.sort == SearchOptions::Sort::kRecent ? static_cast<double>(ts) : c, i};
    best.Push(cand);
  };

  if (use_time_index && time_size <= run_size && time_size <= type_size) {
    result.plan = "time index";
    for (uint64_t k = time_begin; k < time_end; ++k) offer(reader.time_entry(k).node);
  } else if (!runs.all() && run_size <= type_size) {
    result.plan = "session index";
    for (const auto& r : ranges) {
      for (uint32_t i = r.begin; i < r.end; ++i) offer(i);
    }
  } else if (!options.types.all()) {
    result.plan = "type index";
    for (int t = 0; t < kNodeTypeCount; ++t) {
      if (!options.types.Matches(static_cast<NodeType>(t))) continue;
      for (uint32_t i : reader.NodesOfType(static_cast<uint8_t>(t))) offer(i);
    }
  } else {
    result.plan = "scan";
    for (uint32_t i = 0; i < n; ++i) offer(i);
  }

  const std::vector<Candidate> kept = best.Take();
  result.nodes.reserve(kept.size());
  for (const Candidate& c : kept) result.nodes.push_back(c.node);
  return result;
}

}  // namespace amem::query
