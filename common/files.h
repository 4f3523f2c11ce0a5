// How amem writes files and checks the paths it is given: one place for both.
//
// Every file amem writes whole (an exported snapshot, the store's base and delta
// caches and their revision file, `amem log --out`) goes through AtomicFile: a
// temp file of its own next to the target ("<target>.tmp.<pid>.<16 hex digits>",
// created with O_CREAT | O_EXCL | O_NOFOLLOW, so neither a planted symbolic link
// nor a concurrent writer of the same target is ever written through), renamed
// over the target when complete, and removed on any failure. A killed process
// leaves its temp file behind; RemoveStaleTempFiles removes those whose process is
// gone (the next export of that target, `amem compact`, the next base export).
//
// Files amem appends to (the query log) are opened by OpenAppendFile: a regular
// file only, opened without blocking (a FIFO or device is refused).
//
// Every path argument, from any front end, passes CheckPathArgument first.
#ifndef AMEM_COMMON_FILES_H_
#define AMEM_COMMON_FILES_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "common/status.h"

namespace amem {

// InvalidArgument when `path` holds a control character: an ASCII one
// (U+0000..U+001F, including NUL, which the system calls would treat as the end
// of the path while every check before them saw the rest; and U+007F) or a C1
// one (U+0080..U+009F in UTF-8). `what` names the argument in the message
// ("--out", "path"). Front ends call it before any other check of a path.
Status CheckPathArgument(std::string_view path, std::string_view what);

// How a completed file is made durable: kSynced fsyncs the file before the rename
// and the directory after it; kCache skips both (derived files that are checked
// when read: a crash may leave the old file, the new one, or one that fails its
// check).
enum class Durability : uint8_t { kSynced, kCache };

// "<path>.tmp.<pid>.<16 hex digits>": a fresh temp name next to `path`.
inline constexpr char kTempInfix[] = ".tmp.";
std::string TempPathFor(const std::string& path);

// A file written to a temp file of its own and put in place by Commit.
class AtomicFile {
 public:
  AtomicFile() = default;
  ~AtomicFile();  // removes the temp file unless committed
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;

  // Creates the temp file for `path` (mode 0644 before the umask). `write_behind`:
  // hand written bytes to the disk as they come (for large synced files).
  Status Open(const std::string& path, bool write_behind = false);
  Status Append(std::string_view bytes);
  // Makes the file `path`: fsync (kSynced), close, rename, fsync of the directory
  // (kSynced). On failure the temp file is removed and `path` is unchanged.
  Status Commit(Durability durability = Durability::kSynced);
  // Removes the temp file now (what the destructor does).
  void Abandon();

  const std::string& temp_path() const { return tmp_; }
  uint64_t bytes() const { return written_; }

 private:
  void HandToDisk();  // write-behind: hands [handed_, written_), waits for the step before

  std::string path_, tmp_;
  int fd_ = -1;
  bool write_behind_ = false;
  uint64_t written_ = 0, handed_ = 0, waited_ = 0;  // write-behind: handed, waited for
};

// Removes the temp files in `dir` that amem made for the file named `target` in
// it ("" for every target) and whose process is gone: a
// regular file (not a link) owned by this user, named "<target>.tmp.<pid>.<16 hex
// digits>", whose pid is not running on this host (no such process, or a zombie;
// stores and export targets
// are local: LMDB needs a local file system). Returns how many were removed.
size_t RemoveStaleTempFiles(const std::string& dir, std::string_view target = {});
// The same for the temp files of one target path.
size_t RemoveStaleTempFilesOf(const std::string& path);

// Opens `path` for appending (created 0644 if missing): a regular file only,
// opened with O_NONBLOCK so that a FIFO never blocks (it is refused, as is any
// other non-regular file, with InvalidArgument). Returns the descriptor; the
// caller closes it. `what` names the file in messages ("query log").
Result<int> OpenAppendFile(const std::string& path, std::string_view what);
// Appends `bytes` to `path` in one write (OpenAppendFile, then write, close).
Status AppendToFile(const std::string& path, std::string_view bytes, std::string_view what);

}  // namespace amem

#endif  // AMEM_COMMON_FILES_H_
