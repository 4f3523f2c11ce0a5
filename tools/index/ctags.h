// The universal-ctags reader: turns the JSON Lines of `ctags --output-format=json`
// into the code index model (tools/index/code_index.h). Keys, fields and the
// reference rule are docs/CODE.md §1 and "ctags".
#ifndef AMEM_TOOLS_INDEX_CTAGS_H_
#define AMEM_TOOLS_INDEX_CTAGS_H_

#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "tools/index/code_index.h"

namespace amem::index {

struct CtagsOptions {
  // The indexed root. Non-empty: each file is read from ROOT/PATH to compute its
  // digest (XXH3-64 of the content), to check the tags' lines against it and to
  // find references. Empty: digests are XXH3-64 of the file's ctags lines (each
  // followed by '\n', in input order), and no references are found.
  std::string root;
};

// A name defined by more tags than this is ambiguous: no references are made to it.
inline constexpr size_t kCtagsMaxNameDefinitions = 8;
// The largest line number a tag may give.
inline constexpr uint32_t kCtagsMaxLine = 0x7fffffff;

// Reads ctags JSON Lines. Each `_type: "tag"` line becomes a SymbolInfo (symbol =
// the docs/CODE.md key without "symbol:", kind = ctags' long kind name) and one
// definition Occurrence covering lines line..end (0-based; columns are 0, ctags
// gives none); `_type: "ptag"` lines only name the tool. Documents are sorted by
// path, symbols by line, occurrences by position.
// Errors, with nothing returned: InvalidArgument naming the JSON line ("ctags JSON
// line 7: ...") for a line that is not a JSON object, a missing or mistyped field,
// a line number of 0, past `end` or above kCtagsMaxLine, a control character in a
// name or path, a path that is absolute or leaves the root, a duplicate tag, or
// (with a root) a tag past the end of its file; IOError for a file under the root
// that cannot be read.
Result<CodeIndex> ReadCtags(std::string_view jsonl, const CtagsOptions& options = {});

// The ctags command amem runs and documents (argv), to be run in the indexed root:
// JSON output on stdout, the fields ReadCtags reads, recursive from ".", symbolic
// links not followed.
std::vector<std::string> CtagsCommand();

}  // namespace amem::index

#endif  // AMEM_TOOLS_INDEX_CTAGS_H_
