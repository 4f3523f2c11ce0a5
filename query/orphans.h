// Orphaned memories: memories whose code is gone (docs/CODE.md §4). A memory
// (a decision, constraint, fact... anything but a file, symbol or module) keeps its
// edges to a code node that a re-index deleted; the snapshot then holds that node
// as a stub (never written, or deleted with its edges still live). `amem index`
// lists them after it writes, `amem gaps --category orphaned` later.
#ifndef AMEM_QUERY_ORPHANS_H_
#define AMEM_QUERY_ORPHANS_H_

#include <string>
#include <vector>

#include "query/query.h"

namespace amem::query {

struct OrphanLink {
  NodeRow memory;
  std::string code;      // the key of the missing code node (file:... or symbol:...)
  std::string relation;  // the edge's relation name
  bool outgoing = false;  // the edge is memory -> code
};

// Every link of a live memory to a node whose key starts with `file:` or
// `symbol:` and that is a stub, by (memory key, code key, relation, incoming
// first). O(entity nodes + the stubs' edges).
std::vector<OrphanLink> Orphans(const snapshot::Reader& reader);

}  // namespace amem::query

#endif  // AMEM_QUERY_ORPHANS_H_
