// The entries of the query table (tools/io/query_table.h), one function per family:
// tools/io/query_table_graph.cc (traverse, search, temporal, impact, context,
// resolve, path), query_table_ranking.cc (similar, text-search, hybrid-search,
// centrality) and query_table_cognitive.cc (revise, gaps, analogy, consolidate,
// drift).
#ifndef AMEM_TOOLS_IO_INTERNAL_QUERY_FAMILIES_H_
#define AMEM_TOOLS_IO_INTERNAL_QUERY_FAMILIES_H_

#include <string>
#include <vector>

#include "tools/io/query_table.h"

namespace amem::io {

std::vector<QueryDef> GraphQueries();
std::vector<QueryDef> RankingQueries();
std::vector<QueryDef> CognitiveQueries();

// Parameters several queries share.
Param LimitParam(size_t default_limit, int mcp_max, std::string help = "Maximum rows");
Param NodeParam(std::string name, std::string cli, std::string help, bool required);
Param TypesParam(std::string help);
Param RunsParam(std::string help);
Param RelationsParam(std::string help);
Param DirectionParam(const char* default_direction);
// `p` with MCP's short help `brief` (Param::brief).
Param Brief(Param p, std::string brief);

}  // namespace amem::io

#endif  // AMEM_TOOLS_IO_INTERNAL_QUERY_FAMILIES_H_
