// The "results" array of the ranking queries (similar, text-search, hybrid-search,
// centrality): one node row (query/render.h NodeRowJson) per hit, in rank order,
// with the query's own fields added by `fill(hit, row)`.
#ifndef AMEM_QUERY_INTERNAL_RANKED_ROWS_H_
#define AMEM_QUERY_INTERNAL_RANKED_ROWS_H_

#include <utility>
#include <vector>

#include "query/query.h"
#include "query/render.h"

namespace amem::query {

// Hit has a dense `index`. REQUIRES: every index < reader.node_count().
template <typename Hit, typename Fill>
Json RankedRowsJson(const snapshot::Reader& reader, const std::vector<Hit>& hits, Fill&& fill) {
  Json rows = Json::array();
  for (const Hit& hit : hits) {
    Json row = NodeRowJson(MakeNodeRow(reader, hit.index));
    fill(hit, row);
    rows.push_back(std::move(row));
  }
  return rows;
}

}  // namespace amem::query

#endif  // AMEM_QUERY_INTERNAL_RANKED_ROWS_H_
