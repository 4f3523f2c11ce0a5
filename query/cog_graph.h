// Helpers shared by the cognitive queries 12-16 (revise, gaps, analogy, consolidate,
// drift): the dependents/support relation of DESIGN.md §2 over a snapshot's CSR
// adjacency, and term matching over the term index with a scanning fallback.
//
// Dependents of X: the D with `D caused_by X` (in-edges of X) and the C with
// `X supports C` (out-edges of X). Support of Y: the B with `Y caused_by B`
// (out-edges of Y) and the A with `A supports Y` (in-edges of Y). Self-loops are
// neither: a belief cannot support itself.
#ifndef AMEM_QUERY_COG_GRAPH_H_
#define AMEM_QUERY_COG_GRAPH_H_

#include <cstdint>
#include <string_view>
#include <vector>

#include "common/model.h"
#include "snapshot/reader.h"

namespace amem::query {

// Adjacency lists are sorted by relation first, and caused_by (0) and supports (1)
// are the two smallest ids, so both loops stop at the first larger relation.
static_assert(kCausedBy == 0 && kSupports == 1);

// Calls fn(dependent, edge) for every dependent edge of x, in (in-edges, out-edges)
// order. A node reached by two edges is reported twice.
template <typename Fn>
void ForEachDependent(const snapshot::Reader& r, uint32_t x, Fn&& fn) {
  for (uint32_t k = r.in_begin(x), end = r.in_end(x); k < end; ++k) {
    uint32_t j = r.in_edge(k);
    RelationId rel = r.edge_rel(j);
    if (rel > kCausedBy) break;
    uint32_t d = r.edge_source(j);
    if (d != x) fn(d, j);
  }
  for (uint32_t j = r.out_begin(x), end = r.out_end(x); j < end; ++j) {
    RelationId rel = r.edge_rel(j);
    if (rel < kSupports) continue;
    if (rel > kSupports) break;
    uint32_t c = r.edge_target(j);
    if (c != x) fn(c, j);
  }
}

// Calls fn(supporter, edge) for every support edge of y.
template <typename Fn>
void ForEachSupport(const snapshot::Reader& r, uint32_t y, Fn&& fn) {
  for (uint32_t j = r.out_begin(y), end = r.out_end(y); j < end; ++j) {
    if (r.edge_rel(j) > kCausedBy) break;
    uint32_t b = r.edge_target(j);
    if (b != y) fn(b, j);
  }
  for (uint32_t k = r.in_begin(y), end = r.in_end(y); k < end; ++k) {
    uint32_t j = r.in_edge(k);
    RelationId rel = r.edge_rel(j);
    if (rel < kSupports) continue;
    if (rel > kSupports) break;
    uint32_t a = r.edge_source(j);
    if (a != y) fn(a, j);
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
// QUERIES.md 8), ties to the smaller index; nullopt when nothing matches. Uses the
// term index when present, else scans contents (same scores).
std::optional<uint32_t> BestTextMatch(const snapshot::Reader& r, std::string_view text);

// Nodes whose content contains every token of `text`; when none does, those that
// contain at least one. Ascending dense numbers; empty when `text` has no tokens.
std::vector<uint32_t> NodesMatchingText(const snapshot::Reader& r, std::string_view text);

}  // namespace amem::query

#endif  // AMEM_QUERY_COG_GRAPH_H_
