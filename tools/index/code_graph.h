// The code graph builder: turns a CodeIndex (tools/index/code_index.h) into store
// operations and writes them in one transaction, re-writing only the files whose
// digest changed (docs/CODE.md §1-§4).
#ifndef AMEM_TOOLS_INDEX_CODE_GRAPH_H_
#define AMEM_TOOLS_INDEX_CODE_GRAPH_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "store/store.h"
#include "tools/index/code_index.h"

namespace amem::index {

// Where the indexed files are registered: kv (kRegistryScope, kRegistryNs, PATH) →
// {"digest":"<16 hex>","indexer":"scip|ctags","path":"PATH"}. A path longer than a
// kv key may be is registered under "~" and the 16 hex digits of its XXH3-64.
inline constexpr std::string_view kRegistryScope = "amem";
inline constexpr std::string_view kRegistryNs = "code_files";

struct RegisteredFile {
  uint64_t digest = 0;
  std::string indexer;
};
// path → what the last index recorded.
using FileRegistry = std::map<std::string, RegisteredFile, std::less<>>;

// Reads the registry; `*revision` (when given) gets the store revision it is the
// registry of. Errors: the store's; Corruption for an entry that is not the JSON
// above.
Result<FileRegistry> ReadRegistry(const Store& store, uint64_t* revision = nullptr);

// The default test-file patterns (docs/CODE.md §3).
const std::vector<std::string>& DefaultTestGlobs();
// Glob match on '/'-separated paths: `**` is any number of whole segments (zero
// included), `*` any run of characters within a segment, `?` one character.
bool GlobMatch(std::string_view glob, std::string_view path);

struct IndexOptions {
  std::vector<std::string> test_globs;  // empty: DefaultTestGlobs()
  // true: every decoded document is compared with the store, whatever its digest.
  bool full = false;
  WriteOptions write;  // ts, run, task; expected_revision is set by IndexCode
  // Tests: what the write expects to add to the store (unset: 320 bytes per
  // occurrence). A low guess makes a write that fills the map run again.
  std::optional<uint64_t> TEST_size_hint;
};

// A memory linked to a code node that this index deleted (docs/CODE.md §4).
struct Orphan {
  std::string memory;  // the memory's key
  std::string code;    // the deleted code node's key
  std::string rel;     // the relation's name
  bool from_memory = true;  // memory --rel--> code; false: code --rel--> memory
};

struct IndexReport {
  uint64_t revision = 0;  // the store's revision afterwards
  bool written = false;   // false: nothing differed, no revision was committed
  size_t documents = 0;   // in the index
  size_t unchanged = 0;   // skipped: same digest as registered
  size_t added = 0, changed = 0, removed = 0;  // files
  size_t nodes_put = 0, nodes_deleted = 0, edges_put = 0, edges_deleted = 0;
  size_t digests = 0;  // registry entries written or deleted (docs/CODE.md §4)
  std::vector<Orphan> orphans;  // sorted by (memory, code, rel)
};

// Writes the code graph of `index` into `store` in one transaction (docs/CODE.md).
// `registry` must be what ReadRegistry read at `registry_revision`; documents whose
// decoded == false must be registered with the same digest. The write happens only
// at that revision; when another writer committed since, the registry is read again
// and, if it is the same, the index is planned again (Aborted otherwise: the caller
// decided what to decode from a registry that is gone). Errors: InvalidArgument for a document the registry
// does not explain, or a key the store refuses; the store's errors. On error
// nothing is written.
Result<IndexReport> IndexCode(Store& store, const CodeIndex& index, const FileRegistry& registry,
                              uint64_t registry_revision, const IndexOptions& options);

// The key of a file node and of a symbol node (docs/CODE.md §1). `symbol` is the
// index's symbol string; a document-local one ("local N") is made unique by `path`.
std::string FileKey(std::string_view path);
std::string SymbolKey(std::string_view path, std::string_view symbol);

}  // namespace amem::index

#endif  // AMEM_TOOLS_INDEX_CODE_GRAPH_H_
