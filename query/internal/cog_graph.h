// Helpers shared by the cognitive queries 12-16 (revise, gaps, analogy, consolidate,
// drift): the dependents/support relation of docs/DESIGN.md §2 over a snapshot's CSR
// adjacency, and term matching over the term index with a scanning fallback.
//
// Dependents of X: the D with `D caused_by X` (in-edges of X) and the C with
// `X supports C` (out-edges of X). Support of Y: the B with `Y caused_by B`
// (out-edges of Y) and the A with `A supports Y` (in-edges of Y). A self-loop is no
// support (a belief cannot support itself); callers of ForEachDependent skip it.
#ifndef AMEM_QUERY_INTERNAL_COG_GRAPH_H_
#define AMEM_QUERY_INTERNAL_COG_GRAPH_H_

#include <cstdint>
#include <string_view>
#include <vector>

#include "common/model.h"
#include "query/impact.h"
#include "snapshot/reader.h"

namespace amem::query {

// Dependents come from query/impact.h (ForEachDependent, shared with `impact`);
// supports are their mirror image.
// Calls fn(supporter, edge) for every support edge of y.
template <typename Fn>
void ForEachSupport(const snapshot::Reader& r, uint32_t y, Fn&& fn) {
  auto [ob, oe] = r.OutEdgesWithRel(y, kCausedBy);
  for (uint32_t j = ob; j < oe; ++j) {
    if (uint32_t b = r.edge_target(j); b != y) fn(b, j);
  }
  auto [kb, ke] = r.InEdgesWithRel(y, kSupports);
  for (uint32_t k = kb; k < ke; ++k) {
    uint32_t j = r.in_edge(k);
    if (uint32_t a = r.edge_source(j); a != y) fn(a, j);
  }
}

// Number of support edges of y (a supporter linked twice counts twice).
uint32_t SupportEdgeCount(const snapshot::Reader& r, uint32_t y);
// Number of distinct supporters of y, counted up to `cap` (returns min(count, cap)).
uint32_t DistinctSupporters(const snapshot::Reader& r, uint32_t y, uint32_t cap);
// True when some edge of relation `rel` links a and b, in either direction.
bool Linked(const snapshot::Reader& r, uint32_t a, uint32_t b, RelationId rel);
// True when some node supersedes i (an incoming supersedes edge from another node).
bool IsSuperseded(const snapshot::Reader& r, uint32_t i);

// The distinct tokens of `text` in first-occurrence order (common/tokenizer.h).
std::vector<std::string> DistinctTokens(std::string_view text);

// The node whose content best matches `text` by BM25 (k1 1.2, b 0.75, the idf of
// docs/QUERIES.md 8), ties to the smaller index; nullopt when nothing matches. Uses the
// term index when present, else scans contents (same scores).
std::optional<uint32_t> BestTextMatch(const snapshot::Reader& r, std::string_view text);

// Nodes whose content contains every token of `text`; when none does, those that
// contain at least one. Ascending dense numbers; empty when `text` has no tokens.
std::vector<uint32_t> NodesMatchingText(const snapshot::Reader& r, std::string_view text);

}  // namespace amem::query

#endif  // AMEM_QUERY_INTERNAL_COG_GRAPH_H_
