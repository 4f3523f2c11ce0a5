// Query 12, `revise`: what if this belief is wrong (docs/QUERIES.md 12, paper §4.5).
//
// A read-only counterfactual. The retracted set R (one node, or the nodes a
// hypothesis contradicts) falls; the cascade then walks dependents (cog_graph.h).
// A dependent falls only when none of its support edges comes from a node outside
// the fallen set; a fallen node propagates further. Every dependent of a fallen
// node is "affected". Unlike the paper's Algorithm 1, which decides each node on
// its first visit, support is counted down edge by edge, so the answer does not
// depend on visiting order (a node whose two supports both fall is found to fall
// whichever falls first). O(reached nodes + their edges).
//
// Confidence loss (paper: "confidence reductions"): a fallen node loses all of its
// confidence; an affected node that keeps some support loses confidence × (support
// edges lost / support edges). total_impact is the sum of the losses of the
// affected nodes (the retracted ones not included).
#ifndef AMEM_QUERY_REVISE_H_
#define AMEM_QUERY_REVISE_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "query/query.h"
#include "query/render.h"

namespace amem::snapshot {
class Reader;
}

namespace amem::query {

struct ReviseOptions {
  size_t limit = 50;  // rows of `affected` (and of each unsupported list)
};

struct ReviseRow {
  NodeRow node;
  uint32_t depth = 0;          // hops from the retracted set when first reached
  bool falls = false;          // no support outside the fallen set remains
  uint32_t support_total = 0;  // support edges
  uint32_t support_lost = 0;   // of them, from fallen nodes
  float confidence = 0;
  float confidence_loss = 0;
};

struct ReviseResult {
  std::vector<NodeRow> retracted;  // ascending index
  // Ordered by confidence_loss descending, then index ascending; at most limit rows.
  std::vector<ReviseRow> affected;
  std::vector<ReviseRow> unsupported_inferences;  // fallen inferences, same order
  std::vector<ReviseRow> unsupported_decisions;   // fallen decisions, same order
  // Totals before the limit.
  size_t affected_count = 0;
  size_t fallen_count = 0;
  size_t unsupported_inference_count = 0;
  size_t unsupported_decision_count = 0;
  double total_impact = 0;
};

// Retracts `nodes` (dense numbers; duplicates ignored). InvalidArgument when one is
// out of range.
Result<ReviseResult> Revise(const snapshot::Reader& reader, std::vector<uint32_t> nodes,
                            const ReviseOptions& options = {});

// The nodes whose content the hypothesis contradicts (negation.h: equal content
// words, opposite polarity), ascending. InvalidArgument when the hypothesis has no
// content word. Uses the term index (postings of its rarest word) when present.
Result<std::vector<uint32_t>> ContradictedBy(const snapshot::Reader& reader,
                                             std::string_view hypothesis);

// {"query": "revise", "retracted": [...], "total_impact", counts, "affected": [...],
//  "unsupported_inferences": [...], "unsupported_decisions": [...]}.
Json ReviseJson(const ReviseResult& result, std::string_view hypothesis = {});

// What revise retracts: the node `node` names, else the nodes `hypothesis`
// contradicts. REQUIRES: exactly one of them is non-empty.
Result<std::vector<uint32_t>> RetractedNodes(const snapshot::Reader& reader,
                                             const std::string& node,
                                             const std::string& hypothesis);

}  // namespace amem::query

#endif  // AMEM_QUERY_REVISE_H_
