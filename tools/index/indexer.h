// `amem index`, shared by the CLI and the MCP tool index_code: reads a SCIP file, a
// universal-ctags JSON file, or runs universal-ctags on a directory, and writes the
// code graph (tools/index/code_graph.h, docs/CODE.md).
#ifndef AMEM_TOOLS_INDEX_INDEXER_H_
#define AMEM_TOOLS_INDEX_INDEXER_H_

#include <string>

#include <nlohmann/json.hpp>

#include "common/status.h"
#include "store/store.h"
#include "tools/index/code_graph.h"

namespace amem::index {

struct IndexRequest {
  enum class Source { kScip, kCtags, kDirectory };
  Source source = Source::kDirectory;
  // The SCIP file, the ctags JSON Lines file, or the directory to run ctags in.
  std::string path;
  // For a ctags file: the root its paths are relative to, where the files are read
  // for their digests and references. Empty: the files are not read.
  std::string root;
  IndexOptions options;
};

// Errors: NotFound when the file or directory does not exist, or universal-ctags
// is not installed (the message says what to install); InvalidArgument for a
// malformed index, naming where; IOError; the store's. Nothing is written on error.
Result<IndexReport> RunIndex(Store& store, const IndexRequest& request);

// The report as `amem index --json` and the MCP tool index_code give it:
// {"rev","written","files":{"indexed","added","changed","removed","unchanged"},
//  "nodes":{"put","deleted"},"edges":{"put","deleted"},"digests",
//  "orphans":[{"memory","rel","code","direction"}]}, direction "memory->code" or
// "code->memory".
nlohmann::ordered_json IndexReportJson(const IndexReport& report);

// Runs universal-ctags (CtagsCommand()) in `dir` and returns its JSON Lines.
Result<std::string> RunCtags(const std::string& dir);

}  // namespace amem::index

#endif  // AMEM_TOOLS_INDEX_INDEXER_H_
