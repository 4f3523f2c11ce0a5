// Why a lock and not only rename: two exporters racing could rename current.amem
// in one order and write current.rev in the other, leaving a rev file that names a
// revision the file does not hold, which would serve stale answers until the next
// write. Holding current.lock across check-export-rename-record makes the pair
// consistent; readers take no lock (rename is atomic).
#include "query/current.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <utility>
#include <vector>

#include "snapshot/export.h"
#include "snapshot/writer.h"

namespace amem::query {

namespace {

std::string Errno(const std::string& what) { return what + ": " + std::strerror(errno); }

bool ReadRevisionFile(const std::string& path, uint64_t* rev) {
  std::ifstream in(path);
  std::string line;
  if (!in || !std::getline(in, line) || line.empty()) return false;
  for (char c : line) {
    if (c < '0' || c > '9') return false;
  }
  try {
    *rev = std::stoull(line);
  } catch (...) {
    return false;
  }
  return true;
}

class FileLock {
 public:
  explicit FileLock(const std::string& path)
      : fd_(::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644)) {}
  ~FileLock() {
    if (fd_ >= 0) ::close(fd_);  // closing releases the flock
  }
  FileLock(const FileLock&) = delete;
  FileLock& operator=(const FileLock&) = delete;
  Status Lock(const std::string& path) {
    if (fd_ < 0) return Status::IOError(Errno("open " + path));
    while (::flock(fd_, LOCK_EX) != 0) {
      if (errno != EINTR) return Status::IOError(Errno("flock " + path));
    }
    return Status::OK();
  }

 private:
  int fd_;
};

// Streams the snapshot of `view` into `path` (amem export's writer: a temp file of
// its own, fsynced, renamed into place, the directory fsynced) and returns the
// revision exported. The file is never assembled in memory.
Result<uint64_t> Export(const Store& store, const ReadView& view, const std::string& path) {
  snapshot::ExportOptions options;
  options.view = view;
  auto done = snapshot::ExportSnapshot(store, path, options);
  if (!done.ok()) return done.status().WithContext("export");
  return done->revision;
}

// Marks a cached past snapshot as just used (its mtime is the LRU clock).
void Touch(const std::string& path) { ::utimensat(AT_FDCWD, path.c_str(), nullptr, 0); }

// Removes the least recently used snapshots/rev-*.amem beyond kMaxCachedSnapshots,
// sparing `keep` and any used within the grace period. Failures are ignored: a
// file another process removed first is gone either way.
void EvictCachedSnapshots(const std::string& dir, const std::string& keep) {
  namespace fs = std::filesystem;
  std::error_code ec;
  std::vector<std::pair<fs::file_time_type, std::string>> files;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind("rev-", 0) != 0 || entry.path().extension() != ".amem") continue;
    auto t = fs::last_write_time(entry.path(), ec);
    if (!ec && entry.path().string() != keep) files.emplace_back(t, entry.path().string());
  }
  if (files.size() + 1 <= kMaxCachedSnapshots) return;
  std::sort(files.begin(), files.end());
  const auto grace = fs::file_time_type::clock::now() -
                     std::chrono::seconds(kSnapshotGraceSeconds);
  size_t excess = files.size() + 1 - kMaxCachedSnapshots;
  for (const auto& [t, path] : files) {
    if (excess == 0 || t > grace) break;
    fs::remove(path, ec);
    --excess;
  }
}

}  // namespace

Result<SnapshotFile> EnsureSnapshot(const std::string& store_dir, const ReadView& view) {
  std::error_code ec;
  if (!std::filesystem::is_directory(store_dir, ec)) {
    return Status::NotFound("no store at " + store_dir);
  }
  StoreOptions options;
  options.create_if_missing = false;
  auto store = Store::Open(store_dir, options);
  if (!store.ok()) return store.status();
  return EnsureSnapshot(**store, view);
}

Result<SnapshotFile> EnsureSnapshot(const Store& store, const ReadView& view) {
  namespace fs = std::filesystem;
  const std::string dir = store.path();
  auto latest = store.ResolveRevision(ReadView::Latest());
  if (!latest.ok()) return latest.status();
  auto wanted = store.ResolveRevision(view);
  if (!wanted.ok()) return wanted.status();
  SnapshotFile file;
  file.revision = *wanted;

  if (view.kind != ReadView::Kind::kLatest && *wanted != *latest) {
    // A past revision: its snapshot never changes, so a cached file is final.
    std::error_code ec;
    fs::create_directories(dir + "/snapshots", ec);
    if (ec) return Status::IOError("create " + dir + "/snapshots: " + ec.message());
    file.path = dir + "/snapshots/rev-" + std::to_string(*wanted) + ".amem";
    if (fs::exists(file.path, ec)) {
      Touch(file.path);
      return file;
    }
    auto done = Export(store, ReadView::AtRevision(*wanted), file.path);
    if (!done.ok()) return done.status();
    file.exported = true;
    EvictCachedSnapshots(dir + "/snapshots", file.path);
    return file;
  }

  file.path = dir + "/current.amem";
  const std::string rev_path = dir + "/current.rev";
  const auto fresh = [&](uint64_t rev) {
    uint64_t recorded = 0;
    std::error_code ec;
    return ReadRevisionFile(rev_path, &recorded) && recorded == rev &&
           fs::exists(file.path, ec);
  };
  file.revision = *latest;
  if (fresh(*latest)) return file;

  const std::string lock_path = dir + "/current.lock";
  FileLock lock(lock_path);
  AMEM_RETURN_IF_ERROR(lock.Lock(lock_path));
  // Another process may have exported while we waited; the store may also have
  // moved on again, in which case we export what is latest now.
  auto now = store.ResolveRevision(ReadView::Latest());
  if (!now.ok()) return now.status();
  file.revision = *now;
  if (fresh(*now)) return file;
  // A write landing during the export only makes the file newer than recorded; the
  // next query then re-exports once more. Recording the state's own revision keeps
  // the pair honest.
  auto exported = Export(store, ReadView::Latest(), file.path);
  if (!exported.ok()) return exported.status();
  file.revision = *exported;
  AMEM_RETURN_IF_ERROR(snapshot::WriteFileAtomic(rev_path, std::to_string(*exported) + "\n"));
  file.exported = true;
  return file;
}

}  // namespace amem::query
