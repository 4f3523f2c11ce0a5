// Query 15, `consolidate`: what should be cleaned up (docs/QUERIES.md 15, paper §4.8).
//
// Four findings, each computed without looking at all pairs:
//   duplicates      similar pairs: same type (counting a promotion below as already
//                   done), same polarity (negation.h), Jaccard overlap of their
//                   distinct content words >= dedup_threshold. Candidates come from
//                   jaccard_join.h inside each (type, polarity) group: prefix
//                   filtering over words ordered rarest first, keyed by pairs of
//                   prefix words (a pair above the threshold shares its first two
//                   common words, both within each side's few rarest words; exact,
//                   no pair is missed), so keys stay rare as the corpus grows; then
//                   exact verification. Nodes with identical word sets are
//                   collapsed first, so exact copies cost no candidate pairs. The
//                   similar pairs (linked or not) are joined into clusters
//                   (connected components); each cluster's winner is the
//                   higher-confidence node (then the newer created_ts, then the
//                   smaller index), and the plan holds one edge `winner supersedes
//                   member` per other member, except members already linked with
//                   the winner by supersedes or contradicts (either direction). Four
//                   copies of one text give three edges from one winner, not six.
//   contradictions  belief nodes (fact, decision, inference, constraint, correction)
//                   whose content words are equal and whose polarity differs
//                   (negation.h; whole words, so "know"/"node" never count). Found
//                   by grouping on the word set; inside a group, each node is paired
//                   with one representative of the other polarity (the winner by
//                   the duplicate rule), so a group of k nodes gives at most k - 1
//                   pairs. The planned edge is `newer contradicts older`
//                   (created_ts, then index).
//   promotions      inferences with confidence > 0.9 and >= 3 distinct supporters:
//                   planned type change inference -> fact.
//   orphans         nodes with no edge at all (reported only).
// Contradiction pairs already linked by supersedes or contradicts (either
// direction) are skipped. Clusters, winners and representatives depend only on
// texts, types after promotion, confidences, timestamps and indices, none of which
// Apply changes (promotion keeps confidence and created_ts), and every planned edge
// is skipped once it exists: after Apply, a second run plans nothing.
// Stub nodes and nodes without content words take no part.
//
// `limit` bounds the rows shown per finding; the counts and the plan are complete,
// and Apply writes the whole plan.
#ifndef AMEM_QUERY_CONSOLIDATE_H_
#define AMEM_QUERY_CONSOLIDATE_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "common/status.h"
#include "query/query.h"
#include "query/render.h"
#include "store/store.h"

namespace amem::snapshot {
class Reader;
}

namespace amem::query {

struct ConsolidateOptions {
  double dedup_threshold = 0.9;  // in (0, 1]
  size_t limit = 50;
};

struct DuplicatePair {
  uint32_t keep = 0, drop = 0;  // keep (the cluster's winner) supersedes drop
  // Jaccard of keep and drop; below the threshold when drop joined the cluster
  // through another member.
  double similarity = 0;
};
struct ContradictionPair {
  uint32_t src = 0, dst = 0;  // src contradicts dst
};

// Everything found, as dense indices (complete: the plan Apply writes).
struct ConsolidatePlan {
  std::vector<DuplicatePair> duplicates;         // keep, similarity desc, drop
  uint64_t similar_pairs = 0;  // similar pairs found before clustering, linked or not
  std::vector<ContradictionPair> contradictions; // by (min, max) index
  std::vector<uint32_t> promotions;              // ascending
  std::vector<uint32_t> orphans;                 // ascending
};

// InvalidArgument when dedup_threshold is not in (0, 1].
Result<ConsolidatePlan> PlanConsolidation(const snapshot::Reader& reader,
                                          const ConsolidateOptions& options = {});

// What Apply wrote (or skipped: a node to promote that the store no longer holds
// as an inference).
struct ApplyReport {
  uint64_t revision = 0;  // the committed revision (the old one when nothing changed)
  size_t supersedes_written = 0;
  size_t contradicts_written = 0;
  size_t promoted = 0;
  std::vector<std::string> skipped;  // keys
};

// Writes the plan to `store` in one transaction (store.h Batch): the supersedes and
// contradicts edges, and each promotion as a re-put of the store's current record
// with type fact. `reader` must be the snapshot the plan was made on; its keys name
// the nodes. `options` attributes the writes (ts, run, task). InvalidArgument when
// the snapshot has no node keys (a spec-only file); otherwise Store::Apply's errors
// (nothing is written on any of them).
Result<ApplyReport> ApplyConsolidation(Store& store, const snapshot::Reader& reader,
                                       const ConsolidatePlan& plan,
                                       const WriteOptions& options = {});

// {"query": "consolidate", "dry_run", counts (duplicate_count: supersedes edges
//  planned; duplicate_cluster_count: distinct winners among them), "duplicates": [...],
//  "contradictions": [...], "promotions": [...], "orphans": [...], "applied"?}.
// `applied` is null for a dry run.
Json ConsolidateJson(const snapshot::Reader& reader, const ConsolidatePlan& plan,
                     const ConsolidateOptions& options, const ApplyReport* applied);

}  // namespace amem::query

#endif  // AMEM_QUERY_CONSOLIDATE_H_
