// The query tools' reference in docs/MCP.md, made from the query table
// (query_table.h) that also makes the CLI's --help and the MCP schemas: each
// tool's full description and every argument with its type, range, choices and
// default. tests/io/query_docs_test.cc fails when the document's copy is stale.
#ifndef AMEM_TOOLS_IO_QUERY_DOCS_H_
#define AMEM_TOOLS_IO_QUERY_DOCS_H_

#include <string>
#include <string_view>

namespace amem::io {

// The lines docs/MCP.md holds between these two markers.
inline constexpr std::string_view kQueryDocsBegin =
    "<!-- query tools: generated from the query table; do not edit by hand -->";
inline constexpr std::string_view kQueryDocsEnd = "<!-- end of the generated query tools -->";

// Markdown: one section per query, in docs/QUERIES.md order.
std::string QueryToolReference();

}  // namespace amem::io

#endif  // AMEM_TOOLS_IO_QUERY_DOCS_H_
