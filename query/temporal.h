// Query 3, temporal: what changed between two periods (docs/QUERIES.md #3).
#ifndef AMEM_QUERY_TEMPORAL_H_
#define AMEM_QUERY_TEMPORAL_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "query/query.h"
#include "query/render.h"

namespace amem::query {

// A period: a created_ts window [from, to) (either end open), or a set of runs.
struct Period {
  std::optional<int64_t> from, to;
  std::vector<std::string> runs;  // non-empty: the period is these runs
  bool by_runs() const { return !runs.empty(); }
};
// "FROM..TO" (either side may be empty: "..500", "100..") or "run:NAME[,NAME...]".
// InvalidArgument for text that is neither FROM..TO nor run:NAME[,NAME...].
Result<Period> ParsePeriod(std::string_view text);

struct TemporalOptions {
  Period a, b;
  size_t limit = 50;  // rows per list; the counts cover everything
};

struct Correction {
  uint32_t newer = 0;  // in B
  uint32_t older = 0;  // in A
  uint32_t edge = 0;   // newer supersedes older
};

struct TemporalResult {
  std::vector<uint32_t> added, updated, unchanged;  // by (created_ts, index)
  std::vector<Correction> corrected;                // by (newer, older)
  uint64_t a_count = 0, b_count = 0;
  uint64_t added_count = 0, corrected_count = 0, updated_count = 0, unchanged_count = 0;
  int64_t b_from = 0, b_to = 0;  // the window B's updated_ts is compared with, [from, to)
};

// added: nodes of B not in A. corrected: (b, a) with b in B, a in A, b supersedes a.
// updated: nodes of A, not corrected, whose updated_ts lies in B's window (for a
// period of runs: from the earliest created_ts of its nodes to one past the latest
// updated_ts) and differs from their created_ts. unchanged: the other nodes of A.
TemporalResult Temporal(const snapshot::Reader& reader, const TemporalOptions& options);
Json TemporalJson(const snapshot::Reader& reader, const TemporalResult& result);

}  // namespace amem::query

#endif  // AMEM_QUERY_TEMPORAL_H_
