// `amem diff A B`: what changed between two snapshots, by key (nodes), by
// (source key, relation name, target key) (edges) and by (scope, ns, key) (kv).
// Dense numbers and byte offsets are ignored, so two exports of the same logical
// state compare equal even if their bytes differ.
#ifndef AMEM_SNAPSHOT_DIFF_H_
#define AMEM_SNAPSHOT_DIFF_H_

#include <string>
#include <vector>

#include "snapshot/reader.h"

namespace amem::snapshot {

struct DiffEntry {
  std::string key;  // node key; "src -rel-> dst" for edges; "scope/ns/key" for kv
  std::vector<std::string> fields;  // changed: the names of the fields that differ
};

struct DiffResult {
  std::vector<DiffEntry> nodes_added, nodes_removed, nodes_changed;
  std::vector<DiffEntry> edges_added, edges_removed, edges_changed;
  std::vector<DiffEntry> kv_added, kv_removed, kv_changed;
  bool header_changed = false;  // dimension differs
  bool equal() const;
};

// Lists are sorted by key. Files without keys (seed-spec files) name node i "#i".
DiffResult DiffSnapshots(const Reader& a, const Reader& b);

// {"equal":..,"nodes":{"added":[..],"removed":[..],"changed":[{"key":..,"fields":[..]}]},
//  "edges":{..},"kv":{..}}
std::string DiffToJson(const DiffResult& diff);
// One line per entry: "+ node KEY", "- edge A -rel-> B", "~ node KEY: content, meta".
std::string DiffToText(const DiffResult& diff);

}  // namespace amem::snapshot

#endif  // AMEM_SNAPSHOT_DIFF_H_
