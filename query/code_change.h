// What a change to a code base touched, file by file: the input of the code-impact
// query (query/code_impact.h). The unified diff reader (tools/index/diff.h) produces
// it; the query needs nothing of the diff's text.
#ifndef AMEM_QUERY_CODE_CHANGE_H_
#define AMEM_QUERY_CODE_CHANGE_H_

#include <cstdint>
#include <string>
#include <vector>

namespace amem::query {

// Lines first..last of the file before the change, 1-based, inclusive. A pure
// insertion is the one line it follows (first == last; 0 at the top of the file).
struct LineSpan {
  uint32_t first = 0;
  uint32_t last = 0;
  friend bool operator==(const LineSpan&, const LineSpan&) = default;
};

enum class ChangeKind : uint8_t { kModified, kAdded, kDeleted, kRenamed };
// "modified", "added", "deleted", "renamed".
const char* ChangeKindName(ChangeKind kind);

struct FileChange {
  std::string old_path;  // relative to the tree's root; empty for an added file
  std::string new_path;  // empty for a deleted file
  ChangeKind kind = ChangeKind::kModified;
  // The old-side lines that changed, ascending: removed lines, and the line each
  // run of pure additions follows. Context lines are not changes, so the spans do
  // not depend on the diff's -U. Empty for an added file, and for a change with no
  // lines (binary, mode only, a pure rename).
  std::vector<LineSpan> old_lines;
  bool binary = false;
  friend bool operator==(const FileChange&, const FileChange&) = default;
};

}  // namespace amem::query

#endif  // AMEM_QUERY_CODE_CHANGE_H_
