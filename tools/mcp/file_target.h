// Where a tool may write a file (export_snapshot, view; docs/MCP.md "Files the
// tools write"): one set of rules for every tool that writes.
#ifndef AMEM_TOOLS_MCP_FILE_TARGET_H_
#define AMEM_TOOLS_MCP_FILE_TARGET_H_

#include <filesystem>
#include <string>

#include "common/status.h"

namespace amem::mcp {

// The kind of file a tool writes.
struct FileKind {
  std::string extension;  // ".amem", ".html", ...: the name must end in it
  std::string noun;       // "an .amem snapshot", "a view amem wrote"
  // Whether an existing regular file is of this kind: the only files `overwrite`
  // replaces.
  bool (*is_kind)(const std::filesystem::path& path) = nullptr;
};

// The path `requested` names, or InvalidArgument saying why it may not be
// written: relative to `root` (the export directory; empty: writing is disabled),
// no "..", a NUL or a control character, the kind's extension, its directory
// existing inside root's tree through every symbolic link, outside `store_dir`,
// never a symbolic link or a directory, and an existing file replaced only with
// `overwrite` and only when it is of the kind.
Result<std::filesystem::path> FileTarget(const std::string& root, const std::string& store_dir,
                                         const std::string& requested, bool overwrite,
                                         const FileKind& kind);

}  // namespace amem::mcp

#endif  // AMEM_TOOLS_MCP_FILE_TARGET_H_
