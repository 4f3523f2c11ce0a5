// resolve (docs/QUERIES.md #7). Cycle safety: a candidate already on the chain is
// skipped; when every candidate is on the chain the walk stops with cycle = true and
// the last node reached is reported as current (there is no better answer).
#include "query/resolve.h"

#include "query/internal/scratch.h"
#include "snapshot/reader.h"

namespace amem::query {

ResolveResult Resolve(const snapshot::Reader& reader, uint32_t node,
                      const ResolveOptions& options) {
  assert(node < reader.node_count());
  ResolveResult result;
  NodeMap<uint8_t>& on_chain = ThreadScratch<uint8_t, kScratchA>();
  on_chain.Reset(reader.node_count());
  result.chain.push_back(node);
  on_chain.Set(node, 1);
  uint32_t cur = node;
  for (;;) {
    auto [kb, ke] = reader.InEdgesWithRel(cur, kSupersedes);
    if (kb == ke) break;
    bool found = false;
    uint32_t best = 0, best_edge = 0;
    int64_t best_ts = 0;
    uint32_t candidates = 0;
    for (uint32_t k = kb; k < ke; ++k) {
      uint32_t e = reader.in_edge(k);
      uint32_t newer = reader.edge_source(e);
      if (on_chain.Has(newer)) continue;
      ++candidates;
      int64_t ts = reader.created_ts(newer);
      if (!found || ts > best_ts || (ts == best_ts && newer > best)) {
        found = true;
        best = newer;
        best_ts = ts;
        best_edge = e;
      }
    }
    if (!found) {
      result.cycle = true;
      break;
    }
    if (result.chain.size() >= options.limit) {
      result.truncated = true;
      break;
    }
    result.competing += candidates - 1;
    result.chain.push_back(best);
    result.edges.push_back(best_edge);
    on_chain.Set(best, 1);
    cur = best;
  }
  return result;
}

}  // namespace amem::query
