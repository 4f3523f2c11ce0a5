#include "query/orphans.h"

#include <algorithm>
#include <tuple>

#include "snapshot/reader.h"

namespace amem::query {

std::vector<OrphanLink> Orphans(const snapshot::Reader& r) {
  // A stub is written with type entity (snapshot/reader.h), so the type index
  // finds every candidate without a pass over all nodes.
  std::vector<OrphanLink> out;
  auto link = [&](uint32_t m, uint32_t code, uint32_t edge, bool outgoing) {
    const NodeType t = r.type(m);
    if (r.is_stub(m) || t == NodeType::kFile || t == NodeType::kSymbol ||
        t == NodeType::kModule) {
      return;
    }
    out.push_back({MakeNodeRow(r, m), std::string(r.key(code)),
                   std::string(r.relation_name(r.edge_rel(edge))), outgoing});
  };
  for (uint32_t s : r.NodesOfType(static_cast<uint8_t>(NodeType::kEntity))) {
    if (!r.is_stub(s)) continue;
    std::string_view key = r.key(s);
    if (!key.starts_with("file:") && !key.starts_with("symbol:")) continue;
    for (uint32_t j = r.out_begin(s); j < r.out_end(s); ++j) link(r.edge_target(j), s, j, false);
    for (uint32_t k = r.in_begin(s); k < r.in_end(s); ++k) {
      const uint32_t j = r.in_edge(k);
      link(r.edge_source(j), s, j, true);
    }
  }
  std::sort(out.begin(), out.end(), [](const OrphanLink& a, const OrphanLink& b) {
    return std::tie(a.memory.key, a.code, a.relation, a.outgoing) <
           std::tie(b.memory.key, b.code, b.relation, b.outgoing);
  });
  return out;
}

}  // namespace amem::query
