// Neighbour iteration shared by the graph walks (traverse, context, path).
#ifndef AMEM_QUERY_INTERNAL_NEIGHBORS_H_
#define AMEM_QUERY_INTERNAL_NEIGHBORS_H_

#include <cstdint>

#include "query/query.h"
#include "snapshot/reader.h"

namespace amem::query {

// Calls fn(uint32_t other, uint32_t edge, bool forward) for every edge of `node` that
// `direction` follows and `relations` admits: forward edges (node -> other, `forward`
// true) for kOut and kBoth, backward ones (other -> node) for kIn and kBoth. `edge`
// is the edge number. The order is (relation, other node, forward before backward):
// docs/QUERIES.md's "(relation, dense index) order", which the CSR lists already follow,
// so kBoth merges the two sorted lists.
template <typename Fn>
void ForEachNeighbor(const snapshot::Reader& reader, uint32_t node, Direction direction,
                     const RelationFilter& relations, Fn&& fn) {
  uint32_t o = 0, oe = 0, k = 0, ke = 0;
  if (direction != Direction::kIn) {
    o = reader.out_begin(node);
    oe = reader.out_end(node);
  }
  if (direction != Direction::kOut) {
    k = reader.in_begin(node);
    ke = reader.in_end(node);
  }
  while (o < oe || k < ke) {
    bool take_out;
    uint32_t in_edge = k < ke ? reader.in_edge(k) : 0;
    if (o >= oe) {
      take_out = false;
    } else if (k >= ke) {
      take_out = true;
    } else {
      RelationId ro = reader.edge_rel(o), ri = reader.edge_rel(in_edge);
      take_out = ro != ri ? ro < ri : reader.edge_target(o) <= reader.edge_source(in_edge);
    }
    if (take_out) {
      if (relations.Matches(reader.edge_rel(o))) fn(reader.edge_target(o), o, true);
      ++o;
    } else {
      if (relations.Matches(reader.edge_rel(in_edge))) {
        fn(reader.edge_source(in_edge), in_edge, false);
      }
      ++k;
    }
  }
}

}  // namespace amem::query

#endif  // AMEM_QUERY_INTERNAL_NEIGHBORS_H_
