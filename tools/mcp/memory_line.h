// The fast path of memory.jsonl parsing (amem import-mcp-memory): simdjson's
// On-Demand parser reads one line of the official MCP memory server's file,
// {"type":"entity","name":..,"entityType":..,"observations":[..]} or
// {"type":"relation","from":..,"to":..,"relationType":..}, straight into the
// graph. Like the ingest fast path (tools/io/ingest_line.h) it only accepts: a line
// with anything else (other or repeated fields, other types, any error) goes to
// the reference parser in ParseMemoryJsonl, which decides and names the error,
// so every rejection keeps its message and accepted lines give the same graph.
#ifndef AMEM_TOOLS_MCP_MEMORY_LINE_H_
#define AMEM_TOOLS_MCP_MEMORY_LINE_H_

#include <cstddef>
#include <memory>

#include "tools/mcp/compat.h"

namespace amem::mcp {

class FastMemoryLineParser {
 public:
  FastMemoryLineParser();
  ~FastMemoryLineParser();
  FastMemoryLineParser(const FastMemoryLineParser&) = delete;
  FastMemoryLineParser& operator=(const FastMemoryLineParser&) = delete;

  // Parses `line` (no newline) and appends its entity or relation to `graph`.
  // Returns false, with `graph` unchanged, when the line must go to the
  // reference parser. REQUIRES: data[size .. size + io::kLinePadding) is readable.
  bool Add(const char* data, size_t size, KnowledgeGraph* graph);

 private:
  struct Rep;
  std::unique_ptr<Rep> rep_;
};

}  // namespace amem::mcp

#endif  // AMEM_TOOLS_MCP_MEMORY_LINE_H_
