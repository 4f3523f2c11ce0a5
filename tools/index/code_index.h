// The code index model: what a SCIP index or universal-ctags output says about a
// code base, read into one neutral form (docs/CODE.md). The readers of foreign
// formats (tools/index/scip.h, tools/index/ctags.h) produce it; the graph builder
// (tools/index/code_graph.h) turns it into store operations.
#ifndef AMEM_TOOLS_INDEX_CODE_INDEX_H_
#define AMEM_TOOLS_INDEX_CODE_INDEX_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace amem::index {

// A range in a source file: 0-based lines and columns, as SCIP gives them; the end
// is exclusive in columns and inclusive in lines (SCIP's [start, end) with end_col
// past the last character of end_line).
struct SourceRange {
  uint32_t start_line = 0;
  uint32_t start_col = 0;
  uint32_t end_line = 0;
  uint32_t end_col = 0;
  friend bool operator==(const SourceRange&, const SourceRange&) = default;
};

// SCIP's SymbolRole bits (the values of the published specification).
enum SymbolRole : uint32_t {
  kRoleDefinition = 0x1,
  kRoleImport = 0x2,
  kRoleWriteAccess = 0x4,
  kRoleReadAccess = 0x8,
  kRoleGenerated = 0x10,
  kRoleTest = 0x20,
  kRoleForwardDefinition = 0x40,
};

struct Relationship {
  std::string symbol;
  bool is_reference = false;
  bool is_implementation = false;
  bool is_type_definition = false;
  bool is_definition = false;
};

struct SymbolInfo {
  // The SCIP symbol string. Document-local symbols ("local N") are kept as SCIP
  // writes them; the graph builder makes them unique by their file. For ctags, the
  // key scheme of docs/CODE.md.
  std::string symbol;
  std::string display_name;  // empty: derived from the symbol
  // Lower-case kind word: "function", "method", "class", "struct", "namespace",
  // "variable", "field", "enum", "interface", "type", "macro", "constructor", ...
  // Empty when the index does not say.
  std::string kind;
  std::string signature;      // e.g. "(int a, int b) -> int"; empty if none
  std::string documentation;  // paragraphs joined by "\n\n"; empty if none
  std::string enclosing_symbol;  // the symbol this one is nested in; empty if none
  std::vector<Relationship> relationships;
};

struct Occurrence {
  SourceRange range;
  std::string symbol;
  uint32_t roles = 0;  // SymbolRole bits
  // The whole definition's range (SCIP's enclosing_range, ctags' line..end).
  std::optional<SourceRange> enclosing_range;
};

struct Document {
  std::string path;      // relative to the indexed root, '/'-separated, no "." or ".."
  std::string language;  // as the index names it; may be empty
  // The file's digest: XXH3-64 of the document's bytes in the SCIP index, or of the
  // file's content when the indexer read the file (ctags). 0: unknown.
  uint64_t digest = 0;
  // false when the reader was told to skip this document (unchanged digest): then
  // only path, language and digest are set.
  bool decoded = true;
  std::vector<SymbolInfo> symbols;  // information on symbols defined here
  std::vector<Occurrence> occurrences;
};

struct CodeIndex {
  std::string indexer;  // "scip" or "ctags"
  std::string tool;     // the tool that wrote the index, e.g. "scip-typescript 0.3.x"; may be empty
  std::vector<Document> documents;  // sorted by path, paths unique
  std::vector<SymbolInfo> external_symbols;
};

}  // namespace amem::index

#endif  // AMEM_TOOLS_INDEX_CODE_INDEX_H_
