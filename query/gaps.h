// Query 13, `gaps`: where is my reasoning weak (docs/QUERIES.md 13, paper §4.6).
//
// One pass over the edges in file order gathers the caused_by and supports edges
// by target (a radix sort) and marks who supersedes whom; one pass over the nodes
// then finds five kinds of gap from them and each node's own out-edges;
// supersedes chains are measured by one memoised DFS. The sixth kind, orphaned,
// comes from the stubs' edges (query/orphans.h). O(V + E), with no random reads of
// the snapshot's edge records. `kinds` chooses the kinds looked for and counted.
//
//   kind                       where                              severity
//   unjustified_decision       decision with no support           0.6 + 0.4 c
//   single_source_inference    inference, exactly 1 supporter     0.4 + 0.4 c
//   low_confidence_foundation  c < threshold, a dependent with    0.3 + 0.6 (c_dep - c)
//                              higher confidence c_dep (the max)
//   unstable_knowledge         head (current version) of a        min(1, 0.2 (L - 1))
//                              supersedes chain of L > 2 versions
//   stale_evidence             not updated for > stale_days and   0.3 + 0.5 min(1,
//                              a dependent is an active decision    (age - stale) / stale)
//   orphaned                   a memory linked to a file: or       0.5 + 0.4 c
//                              symbol: key with no live node
//                              (query/orphans.h)
//
// c is the node's confidence. "Supporters" are distinct nodes. A supersedes chain
// of L versions (L - 1 supersedes edges) means the belief was corrected L - 1
// times; "longer than 2" is read as L > 2, i.e. corrected at least twice, reported
// once at the chain's head (a node that supersedes and that nobody supersedes); L
// is the longest chain below it (cycle-safe). An active decision is one that
// nobody supersedes. Age is now - updated_ts, where now is the snapshot's newest
// timestamp unless given. Stub nodes (edge endpoints never written) are skipped.
//
// Rows are sorted by severity descending, then index, then kind; `downstream` (the
// number of distinct dependents within 3 hops) is computed only for returned rows.
#ifndef AMEM_QUERY_GAPS_H_
#define AMEM_QUERY_GAPS_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/status.h"
#include "query/query.h"
#include "query/render.h"

namespace amem::snapshot {
class Reader;
}

namespace amem::query {

enum class GapKind : uint8_t {
  kUnjustifiedDecision = 0,
  kSingleSourceInference = 1,
  kLowConfidenceFoundation = 2,
  kUnstableKnowledge = 3,
  kStaleEvidence = 4,
  kOrphaned = 5,
};
inline constexpr int kGapKindCount = 6;
const char* GapKindName(GapKind kind);

// A set of kinds; default-constructed it admits every kind.
class GapKindFilter {
 public:
  bool Matches(GapKind k) const { return (mask_ >> static_cast<unsigned>(k)) & 1u; }
  void Only(GapKind k) {
    if (all_) mask_ = 0;
    all_ = false;
    mask_ |= 1u << static_cast<unsigned>(k);
  }

 private:
  bool all_ = true;
  uint32_t mask_ = (1u << kGapKindCount) - 1;
};
// Kind names, comma-separated elements allowed; empty: every kind. An unknown
// name is InvalidArgument naming it and the kinds.
Result<GapKindFilter> ParseGapKinds(const std::vector<std::string>& names);

struct GapsOptions {
  double threshold = 0.5;           // low-confidence foundation
  int64_t stale_days = 30;          // stale evidence
  std::optional<int64_t> now;       // default: the snapshot's newest timestamp
  GapKindFilter kinds;              // the kinds looked for (and counted)
  size_t limit = 20;
};

struct GapRow {
  NodeRow node;
  GapKind kind = GapKind::kUnjustifiedDecision;
  double severity = 0;
  std::string description;
  uint32_t downstream = 0;  // distinct dependents within 3 hops
};

struct GapsResult {
  int64_t now = 0;
  size_t total = 0;                     // gaps found before the limit
  size_t counts[kGapKindCount] = {};    // per kind, before the limit
  std::vector<GapRow> gaps;             // sorted, at most limit
};

// InvalidArgument for a threshold outside [0, 1] or negative stale_days.
Result<GapsResult> FindGaps(const snapshot::Reader& reader, const GapsOptions& options = {});

Json GapsJson(const GapsResult& result);

}  // namespace amem::query

#endif  // AMEM_QUERY_GAPS_H_
