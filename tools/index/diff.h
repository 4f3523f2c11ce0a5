// The unified diff reader: `git diff` (any -U, --no-prefix, renames, binary files,
// mode changes) or a plain `diff -u`, read into the file changes that
// `impact --diff` maps onto the code graph (docs/CODE.md §5).
#ifndef AMEM_TOOLS_INDEX_DIFF_H_
#define AMEM_TOOLS_INDEX_DIFF_H_

#include <string_view>
#include <vector>

#include "common/status.h"
#include "query/code_change.h"

namespace amem::index {

using query::ChangeKind;
using query::FileChange;
using query::LineSpan;

// Reads `text` (LF or CRLF lines) into its file changes, in the order of the diff.
//
// File sections start at `diff --git A B` or at a `--- A` line followed by
// `+++ B`. Paths: the a/ and b/ prefixes are removed when both sides have them
// (so --no-prefix diffs keep their paths whole), C-quoted paths ("a/x\ty") are
// unquoted, a tab ends a ---/+++ path (what follows is a timestamp), a leading
// "./" is dropped; /dev/null marks the missing side. Kind: `new file mode` or
// --- /dev/null: added; `deleted file mode` or +++ /dev/null: deleted; `rename
// from`/`rename to`, or a plain diff whose two paths differ: renamed; `copy to`:
// added (the copy; its source is unchanged); else modified. Lines before the
// first section and between sections (commit messages, `index`, mode and
// similarity lines, binary patches) are skipped.
//
// Empty or blank text is no change. InvalidArgument naming the line for: text
// with no file section; a hunk outside a section that has its ---/+++ lines; a
// malformed hunk header, or a number in it beyond 2^32 - 1; hunk lines that do
// not add up to the header's counts; hunks out of order; a combined (merge)
// diff; a bad quoted path; a section whose paths cannot be told.
Result<std::vector<FileChange>> ParseUnifiedDiff(std::string_view text);

}  // namespace amem::index

#endif  // AMEM_TOOLS_INDEX_DIFF_H_
