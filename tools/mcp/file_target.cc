#include "tools/mcp/file_target.h"

#include "common/files.h"

namespace amem::mcp {

namespace fs = std::filesystem;

Result<fs::path> FileTarget(const std::string& root, const std::string& store_dir,
                            const std::string& requested, bool overwrite, const FileKind& kind) {
  auto refuse = [&](const std::string& why) {
    return Status::InvalidArgument(requested + ": " + why);
  };
  // First: a NUL would end the path for the system calls while the checks below
  // saw the rest (".npmrc\0.amem").
  AMEM_RETURN_IF_ERROR(CheckPathArgument(requested, "path"));
  if (root.empty()) return refuse("writing files is disabled (no export directory)");
  const fs::path rel(requested);
  if (requested.empty() || rel.is_absolute() || rel.has_root_name() || rel.has_root_directory()) {
    return refuse("give a path relative to the export directory " + root);
  }
  for (const fs::path& part : rel) {
    if (part == "..") return refuse("'..' is not allowed; paths stay inside " + root);
  }
  if (rel.extension() != kind.extension) {
    return refuse("the file name must end in " + kind.extension);
  }
  std::error_code ec;
  const fs::path parent = fs::canonical(fs::path(root) / rel.parent_path(), ec);
  if (ec || !fs::is_directory(parent, ec)) {
    return refuse("directory " + (fs::path(root) / rel.parent_path()).string() +
                  " does not exist; create it or choose another path");
  }
  auto inside = [](const fs::path& p, const fs::path& dir) {
    const fs::path r = p.lexically_relative(dir);
    return !r.empty() && *r.begin() != "..";
  };
  if (parent != fs::path(root) && !inside(parent, fs::path(root))) {
    return refuse("leads outside the export directory " + root + " (through a symbolic link)");
  }
  const fs::path path = parent / rel.filename();
  const fs::path store = fs::weakly_canonical(fs::absolute(store_dir, ec), ec);
  if (path == store || inside(path, store)) {
    return refuse("is inside the store directory " + store.string() + "; choose a path outside it");
  }
  const fs::file_status st = fs::symlink_status(path, ec);
  if (fs::is_symlink(st)) return refuse("is a symbolic link; a tool never follows one");
  if (fs::is_directory(st)) return refuse("is a directory; give a file name");
  if (fs::exists(st)) {
    if (!overwrite) {
      return refuse("exists; pass overwrite: true to replace it, or choose another path");
    }
    if (!fs::is_regular_file(st) || kind.is_kind == nullptr || !kind.is_kind(path)) {
      return refuse("exists and is not " + kind.noun + "; only " + kind.noun +
                    " is ever replaced");
    }
  }
  return path;
}

}  // namespace amem::mcp
