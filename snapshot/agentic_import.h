// Importing a parsed AgenticMemory file (snapshot/agentic_memory.h) into a store:
// the mapping of docs/AGENTIC_MEMORY.md §3. The CLI wires it to `amem import FILE`.
#ifndef AMEM_SNAPSHOT_AGENTIC_IMPORT_H_
#define AMEM_SNAPSHOT_AGENTIC_IMPORT_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "common/status.h"
#include "snapshot/agentic_memory.h"
#include "store/store.h"

namespace amem::snapshot::agentic {

// Keys and runs of the file imported under `name`: node id 7 is
// "agentic:<name>/7", session 3 is the run "agentic:<name>/session-3".
std::string KeyPrefix(std::string_view name);
std::string NodeKey(std::string_view name, uint64_t id);
std::string RunName(std::string_view name, uint32_t session);
// A name: 1..kMaxImportNameBytes bytes of UTF-8, no '/', no control characters.
inline constexpr size_t kMaxImportNameBytes = 200;
Status ValidateImportName(std::string_view name);
// The default name of a file: its stem ("project" for "dir/project.amem").
std::string DefaultImportName(const std::string& path);

// InvalidArgument naming both dimensions when the file has non-zero vectors of
// another dimension than the store's. Files without vectors fit any store.
Status CheckDimension(const File& file, uint32_t store_dimension);

struct ImportResult {
  std::string prefix;  // "agentic:<name>/"
  uint64_t nodes = 0, nodes_written = 0;
  uint64_t edges = 0, edges_written = 0;  // distinct (source, type, target)
  uint64_t merged_edges = 0;  // parallel edges of one type: the last one is kept
  uint64_t sessions = 0, vectors = 0;
  uint64_t revision = 0;  // the store's revision afterwards
};

// Writes every node and edge of `file` that is not already in the store exactly
// as the mapping gives it, in one transaction (nothing when all are): importing
// the same file twice writes nothing the second time.
Result<ImportResult> Import(const File& file, std::string_view name, Store* store);

}  // namespace amem::snapshot::agentic

#endif  // AMEM_SNAPSHOT_AGENTIC_IMPORT_H_
