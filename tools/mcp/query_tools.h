// The query tools of `amem mcp` (docs/MCP.md "Query tools"): the 16 queries of
// docs/QUERIES.md (traverse, find_memories, temporal, impact, similar, context, resolve,
// text_search, hybrid_search, centrality, path, revise, gaps, analogy, consolidate,
// drift) and export_snapshot.
//
// Every query runs on the store's state as of `as_of`/`at` (snapshot/live.h
// OpenLive: the base snapshot plus a delta of the changes since it),
// Each tool is made from its query's entry in the query table
// (tools/io/query_table.h), as the CLI's subcommand is: its JSON Schema from the
// entry's parameters, its answer from the entry's run function, so
// `amem traverse X --json` and the traverse tool answer alike. Answers carry the
// `revision` they were read at and are cut to the result budget: rows that did not
// fit are counted under `omitted`. Only `consolidate` with execute: true and
// `export_snapshot` write (to the store, and to a file the caller names).
#ifndef AMEM_TOOLS_MCP_QUERY_TOOLS_H_
#define AMEM_TOOLS_MCP_QUERY_TOOLS_H_

#include <cstddef>

#include <optional>
#include <vector>

#include "tools/mcp/common.h"

namespace amem::mcp {

void AddQueryTools(ToolRegistry* registry, ToolContext* ctx);

// Cuts the top-level arrays of a query answer so that its ResultCost (both copies in
// the response, tools/mcp/tool.h) stays within `budget`: arrays share the budget
// (small ones keep everything, the rest split what is left), each cut by
// BoundedList, and `omitted` records how many rows each cut array lost (and
// "truncated": true). `skip[k]`, when given, drops the first rows of the k-th array
// field (in the answer's order) first: the rows earlier pages gave. Returns, when a
// list was cut, each array's rows given so far (skipped + kept): the next page's skip.
// Exposed for tests.
std::optional<std::vector<size_t>> FitToBudget(Json* doc, size_t budget,
                                               const std::vector<size_t>& skip = {});

}  // namespace amem::mcp

#endif  // AMEM_TOOLS_MCP_QUERY_TOOLS_H_
