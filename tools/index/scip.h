// The SCIP reader: a SCIP index (the protobuf `scip.Index` message of the published
// scip.proto, as scip-typescript, scip-clang, rust-analyzer... write it) read into the
// neutral code index model (tools/index/code_index.h). What is read, and the checks
// every index passes, are in docs/CODE.md §6. The protobuf wire format is decoded
// here, without a protobuf library, as hostile bytes: any input gives a CodeIndex or
// an InvalidArgument naming the document and byte offset, never a crash, and nothing
// is allocated that the input's length does not justify.
#ifndef AMEM_TOOLS_INDEX_SCIP_H_
#define AMEM_TOOLS_INDEX_SCIP_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string_view>

#include "common/status.h"
#include "tools/index/code_index.h"

namespace amem::index {

// The longest symbol string accepted (SymbolInformation.symbol, Occurrence.symbol,
// Relationship.symbol, enclosing_symbol). Real symbols are well under 1 KiB; the
// store's keys keep at most 1,000 bytes of them (docs/CODE.md §1).
inline constexpr size_t kMaxScipSymbolBytes = 16 * 1024;

// How deep unknown group fields (protobuf's deprecated wire types 3 and 4) may nest.
// The messages read here nest four deep at most; only unknown groups nest further.
inline constexpr int kMaxScipGroupDepth = 32;

struct ScipOptions {
  // Called with each document's relative path and digest before it is decoded;
  // returning true skips decoding it (the Document then has decoded=false and only
  // path, language, digest set). Empty: decode everything.
  std::function<bool(std::string_view path, uint64_t digest)> skip_document;
};

// Reads the serialized SCIP index `bytes`. On success the documents are sorted by
// path; indexer is "scip" and tool is "NAME VERSION" from Metadata.tool_info.
// Returns InvalidArgument, saying what and where (document path, byte offset), for
// malformed protobuf, a field of a known number with the wrong wire type, a bad
// range, path or symbol, invalid UTF-8 in a string read, or a duplicate document
// path or symbol (docs/CODE.md §6).
Result<CodeIndex> ReadScip(std::string_view bytes, const ScipOptions& options = {});

}  // namespace amem::index

#endif  // AMEM_TOOLS_INDEX_SCIP_H_
