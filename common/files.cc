#include "common/files.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <random>

namespace amem {

namespace {

Status IoError(const std::string& what, const std::string& path, int err) {
  return Status::IOError(what + " " + path + ": " + std::strerror(err));
}

// The directory of `path` ("." for a bare name).
std::string DirectoryOf(const std::string& path) {
  const size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

// Whether `rest` (what follows "<target>.tmp.") is "<pid>.<16 hex digits>";
// sets *pid.
bool ParseTempSuffix(std::string_view rest, long* pid) {
  const size_t dot = rest.find('.');
  if (dot == 0 || dot == std::string_view::npos || dot > 10) return false;
  long p = 0;
  for (char c : rest.substr(0, dot)) {
    if (c < '0' || c > '9') return false;
    p = p * 10 + (c - '0');
  }
  std::string_view hex = rest.substr(dot + 1);
  if (hex.size() != 16) return false;
  for (char c : hex) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  }
  *pid = p;
  return p > 0;
}

}  // namespace

Status CheckPathArgument(std::string_view path, std::string_view what) {
  auto refuse = [&](const std::string& why) {
    return Status::InvalidArgument(std::string(what) + ": " + why);
  };
  for (size_t i = 0; i < path.size(); ++i) {
    const auto c = static_cast<unsigned char>(path[i]);
    const bool c1 = c == 0xC2 && i + 1 < path.size() &&
                    static_cast<unsigned char>(path[i + 1]) >= 0x80 &&
                    static_cast<unsigned char>(path[i + 1]) <= 0x9F;
    if (c < 0x20 || c == 0x7F || c1) {
      char code[8];
      std::snprintf(code, sizeof(code), "U+%04X",
                    c1 ? static_cast<unsigned>(static_cast<unsigned char>(path[i + 1])) : c);
      return refuse(std::string("the path holds a control character (") + code +
                    " at byte " + std::to_string(i) +
                    "); paths with control characters are never used");
    }
  }
  return Status::OK();
}

std::string TempPathFor(const std::string& path) {
  static std::atomic<uint64_t> counter{0};
  // Process id, a per-process counter and random bits: unique across processes,
  // threads and pid reuse; O_EXCL catches the rest.
  const uint64_t salt = (static_cast<uint64_t>(std::random_device{}()) << 32) ^
                        counter.fetch_add(1, std::memory_order_relaxed);
  char suffix[64];
  std::snprintf(suffix, sizeof(suffix), "%s%ld.%016llx", kTempInfix,
                static_cast<long>(::getpid()), static_cast<unsigned long long>(salt));
  return path + suffix;
}

AtomicFile::~AtomicFile() { Abandon(); }

void AtomicFile::Abandon() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
  if (!tmp_.empty()) ::unlink(tmp_.c_str());
  tmp_.clear();
}

Status AtomicFile::Open(const std::string& path, bool write_behind) {
  Abandon();
  // The last line of defence: the front ends refuse such paths first.
  AMEM_RETURN_IF_ERROR(CheckPathArgument(path, "path"));
  if (path.empty()) return Status::InvalidArgument("path: an empty path");
  path_ = path;
  write_behind_ = write_behind;
  written_ = handed_ = waited_ = 0;
  // A temp name of our own (O_EXCL): two writers of one path never write into, or
  // rename, each other's half-written file; O_EXCL and O_NOFOLLOW never open
  // through a symbolic link planted at the name.
  for (int attempt = 0;; ++attempt) {
    std::string tmp = TempPathFor(path);
    fd_ = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (fd_ >= 0) {
      tmp_ = std::move(tmp);
      return Status::OK();
    }
    if (errno != EEXIST || attempt == 8) return IoError("create", tmp, errno);
  }
}

// The pages of a write-behind file go to the disk in steps of kWriteBehind, and
// the step before the one just handed is waited for, so at most two steps are
// ever queued at the disk, however large one Append is. Handing 32 MB at once
// (or a 200 MB array in one Append) queued that much ahead of every other
// writer's fsync on the device: an `amem mcp` write (its LMDB commit) during a
// background merge waited 60-110 ms behind the export's pages.
constexpr uint64_t kWriteBehind = uint64_t{4} << 20;

Status AtomicFile::Append(std::string_view bytes) {
  if (fd_ < 0) return Status::IOError("write " + path_ + ": the file is not open");
  while (!bytes.empty()) {
    const size_t want = write_behind_
                            ? static_cast<size_t>(std::min<uint64_t>(
                                  bytes.size(), handed_ + kWriteBehind - written_))
                            : bytes.size();
    const ssize_t w = ::write(fd_, bytes.data(), want);
    if (w < 0) {
      if (errno == EINTR) continue;
      return IoError("write", tmp_, errno);
    }
    bytes.remove_prefix(static_cast<size_t>(w));
    written_ += static_cast<uint64_t>(w);
    if (write_behind_ && written_ - handed_ >= kWriteBehind) HandToDisk();
  }
  return Status::OK();
}

void AtomicFile::HandToDisk() {
  // Only hints: the fsync that follows is what makes the file durable, so an
  // error here (e.g. a file system without it) changes nothing.
  (void)::sync_file_range(fd_, static_cast<off_t>(handed_),
                          static_cast<off_t>(written_ - handed_), SYNC_FILE_RANGE_WRITE);
  if (handed_ > waited_) {
    (void)::sync_file_range(fd_, static_cast<off_t>(waited_),
                            static_cast<off_t>(handed_ - waited_),
                            SYNC_FILE_RANGE_WAIT_BEFORE | SYNC_FILE_RANGE_WRITE |
                                SYNC_FILE_RANGE_WAIT_AFTER);
    waited_ = handed_;
  }
  handed_ = written_;
}

Status AtomicFile::Commit(Durability durability) {
  if (fd_ < 0) return Status::IOError("write " + path_ + ": the file is not open");
  const bool synced = durability == Durability::kSynced;
  auto fail = [&](const char* what, const std::string& p) {
    Status s = IoError(what, p, errno);
    Abandon();
    return s;
  };
  if (synced && ::fsync(fd_) != 0) return fail("fsync", tmp_);
  const int closed = ::close(fd_);
  fd_ = -1;
  if (closed != 0) return fail("close", tmp_);
  if (::rename(tmp_.c_str(), path_.c_str()) != 0) return fail("rename", tmp_);
  tmp_.clear();  // it is the file now
  if (!synced) return Status::OK();
  // The rename is durable only once the directory entry is.
  const std::string dir = DirectoryOf(path_);
  const int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd < 0) return IoError("open directory", dir, errno);
  const int rc = ::fsync(dfd);
  const int err = errno;
  ::close(dfd);
  if (rc != 0) return IoError("fsync directory", dir, err);
  return Status::OK();
}

namespace {

// Whether process `pid` is gone: no such process, or a zombie (it exited and its
// parent has not reaped it yet: a detached process whose parent is an init that
// reaps late, or never, in some containers, holds nothing any more).
bool ProcessGone(long pid) {
  if (::kill(static_cast<pid_t>(pid), 0) != 0) return errno == ESRCH;
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string stat;
  if (!std::getline(in, stat)) return false;
  const size_t paren = stat.rfind(')');  // the state follows the name, which may hold any byte
  return paren != std::string::npos && paren + 2 < stat.size() &&
         (stat[paren + 2] == 'Z' || stat[paren + 2] == 'X');
}

}  // namespace

size_t RemoveStaleTempFiles(const std::string& dir, std::string_view target) {
  DIR* d = ::opendir(dir.c_str());
  if (d == nullptr) return 0;
  const int dfd = ::dirfd(d);
  size_t removed = 0;
  while (const dirent* e = ::readdir(d)) {
    const std::string_view name(e->d_name);
    // "<target>.tmp.<suffix>": the last ".tmp." is ours (a target's name may hold one).
    const size_t at = target.empty() ? name.rfind(kTempInfix) : target.size();
    if (at == std::string_view::npos || at == 0 || (!target.empty() && name.substr(0, at) != target) ||
        name.substr(at, std::strlen(kTempInfix)) != kTempInfix) {
      continue;
    }
    long pid = 0;
    if (!ParseTempSuffix(name.substr(at + std::strlen(kTempInfix)), &pid)) continue;
    if (pid == static_cast<long>(::getpid())) continue;
    if (!ProcessGone(pid)) continue;  // still running
    struct stat st {};
    if (::fstatat(dfd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISREG(st.st_mode) ||
        st.st_uid != ::geteuid()) {
      continue;
    }
    if (::unlinkat(dfd, e->d_name, 0) == 0) ++removed;
  }
  ::closedir(d);
  return removed;
}

size_t RemoveStaleTempFilesOf(const std::string& path) {
  const size_t slash = path.rfind('/');
  const std::string name = slash == std::string::npos ? path : path.substr(slash + 1);
  if (name.empty()) return 0;
  return RemoveStaleTempFiles(DirectoryOf(path), name);
}

Result<int> OpenAppendFile(const std::string& path, std::string_view what) {
  AMEM_RETURN_IF_ERROR(CheckPathArgument(path, what));
  const std::string label = std::string(what) + " " + path;
  const int fd =
      ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_NONBLOCK | O_CLOEXEC, 0644);
  if (fd < 0) {
    // A FIFO with no reader: O_NONBLOCK makes the open fail instead of waiting.
    if (errno == ENXIO) return Status::InvalidArgument(label + ": not a regular file (a FIFO)");
    return IoError(std::string(what), path, errno);
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    const int err = errno;
    ::close(fd);
    return IoError(std::string(what), path, err);
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd);
    return Status::InvalidArgument(label + ": not a regular file");
  }
  return fd;
}

Status AppendToFile(const std::string& path, std::string_view bytes, std::string_view what) {
  AMEM_ASSIGN_OR_RETURN(fd, OpenAppendFile(path, what));
  size_t done = 0;
  int err = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      err = n < 0 ? errno : EIO;
      break;
    }
    done += static_cast<size_t>(n);
  }
  ::close(fd);
  if (done != bytes.size()) return IoError(std::string(what), path, err);
  return Status::OK();
}

}  // namespace amem
