// Why a lock and not only rename: two exporters racing could rename current.amem
// in one order and write current.rev in the other, leaving a rev file that names a
// revision the file does not hold, which would serve stale answers until the next
// write. Holding current.lock across check-export-rename-record makes the pair
// consistent; readers take no lock (rename is atomic).
#include "snapshot/live.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <thread>
#include <tuple>
#include <utility>
#include <vector>

#include "common/coding.h"
#include "common/files.h"
#include "snapshot/delta.h"
#include "snapshot/export.h"
#include "snapshot/format.h"
#include "snapshot/internal/layered.h"
#include "snapshot/writer.h"

namespace amem::snapshot {

namespace {

std::string Errno(const std::string& what) { return what + ": " + std::strerror(errno); }

std::string Hex16(uint64_t x) {
  char buf[17];
  std::snprintf(buf, sizeof(buf), "%016llx", static_cast<unsigned long long>(x));
  return buf;
}

// A base's fingerprint: the XXH3-64 of its checksum block (docs/FORMAT.md §8.21),
// the last 16 bytes of every file amem writes as a base. current.rev records it, so
// a rev file is paired only with the base it was written for: a process killed
// between renaming a new current.amem into place and writing current.rev leaves
// the old record, which then names another file and is written again. 0 for a file
// that cannot be read or does not end in a checksum block (never paired).
uint64_t BaseFingerprint(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 0;
  struct stat st;
  char tail[16];
  const bool read = ::fstat(fd, &st) == 0 && st.st_size >= 16 + 64 &&
                    ::pread(fd, tail, sizeof(tail), st.st_size - 16) == 16;
  ::close(fd);
  if (!read || DecodeFixed32(tail) != static_cast<uint32_t>(BlockTag::kChecksum) ||
      DecodeFixed32(tail + 4) != 8) {
    return 0;
  }
  return DecodeFixed64(tail + 8);
}

// Lower-case hex digits of a u64, at most 16; false for anything else.
bool ParseHex16(std::string_view text, uint64_t* out) {
  if (text.empty() || text.size() > 16) return false;
  uint64_t x = 0;
  for (const char c : text) {
    const int v = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
    if (v < 0) return false;
    x = x << 4 | static_cast<uint64_t>(v);
  }
  *out = x;
  return true;
}

// current.rev: "B ID FP\n", the base's revision, its history identity
// (Store::RevisionIdentity) and the base file's fingerprint, each of the last two
// in 16 hex digits. false for anything else, a file of an older amem ("B\n",
// "B ID\n") included: its base is then exported again.
struct RevisionRecord {
  uint64_t rev = 0, identity = 0, fingerprint = 0;
};
bool ReadRevisionFile(const std::string& path, RevisionRecord* record) {
  std::ifstream in(path);
  std::string line;
  if (!in || !std::getline(in, line)) return false;
  const size_t space = line.find(' ');
  if (space == 0 || space == std::string::npos || line.size() != space + 34 ||
      line[space + 17] != ' ') {
    return false;
  }
  uint64_t r = 0;
  for (size_t i = 0; i < space; ++i) {
    const char c = line[i];
    if (c < '0' || c > '9' || r > (UINT64_MAX - 9) / 10) return false;
    r = r * 10 + static_cast<uint64_t>(c - '0');
  }
  const std::string_view rest = std::string_view(line).substr(space + 1);
  RevisionRecord got{.rev = r};
  if (!ParseHex16(rest.substr(0, 16), &got.identity) ||
      !ParseHex16(rest.substr(17), &got.fingerprint)) {
    return false;
  }
  *record = got;
  return true;
}
std::string RevisionFileText(uint64_t rev, uint64_t identity, uint64_t fingerprint) {
  return std::to_string(rev) + " " + Hex16(identity) + " " + Hex16(fingerprint) + "\n";
}

// Whether `rev` and `identity` (read from a cache file) name a commit of this
// store's history: false after data.mdb was restored from a backup or the store
// recreated, when the same revision number is another commit.
bool SameHistory(const Store& store, uint64_t rev, uint64_t identity) {
  auto id = store.RevisionIdentity(rev);
  return id.ok() && *id == identity;
}

class FileLock {
 public:
  // A directory that cannot be written (a read-only file system, no permission)
  // still lets a reader lock an existing file opened read-only (flock needs no
  // write access); with no file there, nobody can be exporting either. So does
  // a read-only store, which creates nothing (create = false).
  explicit FileLock(const std::string& path, bool create = true)
      : fd_(create ? ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644) : -1) {
    if (!create) errno = EROFS;
    if (fd_ < 0 && (errno == EROFS || errno == EACCES)) {
      fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
      unwritable_ = fd_ < 0 && errno == ENOENT;
      if (fd_ < 0) errno = EROFS;
    }
  }
  ~FileLock() {
    if (fd_ >= 0) ::close(fd_);  // closing releases the flock
  }
  FileLock(const FileLock&) = delete;
  FileLock& operator=(const FileLock&) = delete;
  // An exclusive lock if nobody holds one: false when another process does.
  Result<bool> TryLock(const std::string& path) {
    if (fd_ < 0) return Status::IOError(Errno("open " + path));
    while (::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
      if (errno == EWOULDBLOCK) return false;
      if (errno != EINTR) return Status::IOError(Errno("flock " + path));
    }
    return true;
  }
  Status Lock(const std::string& path, bool shared = false) {
    if (fd_ < 0 && shared && unwritable_) return Status::OK();
    if (fd_ < 0) return Status::IOError(Errno("open " + path));
    while (::flock(fd_, shared ? LOCK_SH : LOCK_EX) != 0) {
      if (errno != EINTR) return Status::IOError(Errno("flock " + path));
    }
    return Status::OK();
  }

 private:
  int fd_;
  bool unwritable_ = false;
};

// The state as of `view` as a snapshot built in memory: what a query reads when
// the snapshot cache cannot be written (a full disk, a read-only store).
Result<std::shared_ptr<const Reader>> SnapshotInMemory(const Store& store, const ReadView& view) {
  AMEM_ASSIGN_OR_RETURN(state, store.ReadState(view));
  AMEM_ASSIGN_OR_RETURN(bytes, BuildSnapshot(state));
  AMEM_ASSIGN_OR_RETURN(reader, Reader::OpenBuffer(bytes));
  return std::shared_ptr<const Reader>(std::move(reader));
}

// A cache file a read-only store needs and does not write (OpenLive then builds
// it in memory).
Status NotWritten(const std::string& path) {
  return Status::IOError("the store is open read-only: " + path + " is not written");
}

// Why a cache file was not written, for LiveView::note.
std::string CacheNote(const Status& why) {
  return "the snapshot cache was not written (" + why.ToString() + "); answered from memory";
}

// Streams the snapshot of `view` into `path` (amem export's writer: a temp file of
// its own, fsynced, renamed into place, the directory fsynced) and returns the
// revision exported. The file is never assembled in memory.
Result<uint64_t> Export(const Store& store, const ReadView& view, const std::string& path,
                        const LiveOptions& live) {
  ExportOptions options;
  options.view = view;
  options.progress = live.progress;
  options.writer.entity_search = live.entity_search;
  options.writer.entity_labels = live.entity_labels;
  auto done = ExportSnapshot(store, path, options);
  if (!done.ok()) return done.status().WithContext("export");
  return done->revision;
}

// Marks a cached past snapshot as just used (its mtime is the LRU clock).
void Touch(const std::string& path) { ::utimensat(AT_FDCWD, path.c_str(), nullptr, 0); }

// Whether the file at `path` has this build's format version: a cached file from
// an older amem (its term blocks made by the former tokenizer) is exported again.
bool CurrentVersion(const std::string& path) {
  char header[Header::kVersionOffset + 2];
  std::ifstream in(path, std::ios::binary);
  return in.read(header, sizeof(header)) &&
         DecodeFixed16(header + Header::kVersionOffset) == kFormatVersion;
}

// Removes the least recently used snapshots/rev-*.amem until at most
// options.max_cached_snapshots files and max_cached_bytes remain, sparing `keep`.
// A process that mapped a removed file still reads it (the mapping holds the
// inode). Failures are ignored: a file another process removed first is gone.
void EvictCachedSnapshots(const std::string& dir, const std::string& keep,
                          const LiveOptions& options) {
  namespace fs = std::filesystem;
  std::error_code ec;
  struct Cached {
    fs::file_time_type used;
    std::string path;
    uint64_t bytes;
  };
  std::vector<Cached> files;
  uint64_t total = 0;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind("rev-", 0) != 0 || entry.path().extension() != ".amem") continue;
    auto t = fs::last_write_time(entry.path(), ec);
    if (ec) continue;
    uint64_t bytes = fs::file_size(entry.path(), ec);
    if (ec) continue;
    total += bytes;
    if (entry.path().string() != keep) files.push_back({t, entry.path().string(), bytes});
  }
  size_t count = files.size() + 1;  // `keep` counts
  std::sort(files.begin(), files.end(),
            [](const Cached& a, const Cached& b) { return std::tie(a.used, a.path) < std::tie(b.used, b.path); });
  for (const Cached& f : files) {
    if (count <= options.max_cached_snapshots && total <= options.max_cached_bytes) break;
    fs::remove(f.path, ec);
    --count;
    total -= f.bytes;
  }
}

// snapshots/rev-R-ID.amem: a past revision's file, named by the revision and its
// history identity (Store::RevisionIdentity), so that a file of another history
// (a restored or recreated store) never matches.
Result<std::string> PastSnapshotName(const Store& store, uint64_t revision) {
  AMEM_ASSIGN_OR_RETURN(identity, store.RevisionIdentity(revision));
  return "snapshots/rev-" + std::to_string(revision) + "-" + Hex16(identity) + ".amem";
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

Result<SnapshotFile> EnsureSnapshot(const Store& store, const ReadView& view,
                                    const LiveOptions& options) {
  namespace fs = std::filesystem;
  const std::string dir = store.path();
  auto latest = store.ResolveRevision(ReadView::Latest());
  if (!latest.ok()) return latest.status();
  auto wanted = store.ResolveRevision(view);
  if (!wanted.ok()) return wanted.status();
  SnapshotFile file;
  file.revision = *wanted;

  if (view.kind != ReadView::Kind::kLatest && *wanted != *latest) {
    // A past revision: its snapshot never changes, so a cached file is final. Its
    // name carries the revision's history identity: a file from before a restore
    // or a re-creation of the store is another commit's, and never matches.
    AMEM_ASSIGN_OR_RETURN(name, PastSnapshotName(store, *wanted));
    std::error_code ec;
    file.path = dir + "/" + name;
    if (fs::exists(file.path, ec) && CurrentVersion(file.path)) {
      Touch(file.path);
      return file;
    }
    if (store.read_only()) return NotWritten(file.path);
    fs::create_directories(dir + "/snapshots", ec);
    if (ec) return Status::IOError("create " + dir + "/snapshots: " + ec.message());
    auto done = Export(store, ReadView::AtRevision(*wanted), file.path, options);
    if (!done.ok()) return done.status();
    file.exported = true;
    EvictCachedSnapshots(dir + "/snapshots", file.path, options);
    return file;
  }

  file.path = dir + "/current.amem";
  const std::string rev_path = dir + "/current.rev";
  const auto fresh = [&](uint64_t rev) {
    RevisionRecord recorded;
    return ReadRevisionFile(rev_path, &recorded) && recorded.rev == rev &&
           SameHistory(store, rev, recorded.identity) &&
           recorded.fingerprint == BaseFingerprint(file.path) && CurrentVersion(file.path);
  };
  file.revision = *latest;
  if (fresh(*latest)) return file;
  if (store.read_only()) return NotWritten(file.path);

  const std::string lock_path = dir + "/current.lock";
  FileLock lock(lock_path);
  AMEM_RETURN_IF_ERROR(lock.Lock(lock_path));
  // Another process may have exported while we waited; the store may also have
  // moved on again, in which case we export what is latest now.
  auto now = store.ResolveRevision(ReadView::Latest());
  if (!now.ok()) return now.status();
  RemoveStaleTempFiles(dir);
  file.revision = *now;
  if (fresh(*now)) return file;
  // A write landing during the export only makes the file newer than recorded; the
  // next query then re-exports once more. Recording the state's own revision keeps
  // the pair honest.
  auto exported = Export(store, ReadView::Latest(), file.path, options);
  if (!exported.ok()) return exported.status();
  file.revision = *exported;
  AMEM_ASSIGN_OR_RETURN(identity, store.RevisionIdentity(*exported));
  AMEM_RETURN_IF_ERROR(WriteFileAtomic(
      rev_path, RevisionFileText(*exported, identity, BaseFingerprint(file.path))));
  file.exported = true;
  return file;
}

namespace {

// What identifies the mapped base: a re-export renames a new file into place.
std::string FileIdentity(const struct stat& st) {
  return std::to_string(st.st_dev) + ":" + std::to_string(st.st_ino) + ":" +
         std::to_string(st.st_size) + ":" + std::to_string(st.st_mtim.tv_sec) + "." +
         std::to_string(st.st_mtim.tv_nsec);
}

Result<uint64_t> EnvNumber(const char* name, uint64_t fallback) {
  const char* v = std::getenv(name);
  if (v == nullptr || *v == '\0') return fallback;
  uint64_t x = 0;
  for (const char* p = v; *p; ++p) {
    if (*p < '0' || *p > '9' || x > (UINT64_MAX - 9) / 10) {
      return Status::InvalidArgument(std::string(name) + "=" + v + ": not a whole number");
    }
    x = x * 10 + static_cast<uint64_t>(*p - '0');
  }
  return x;
}

}  // namespace

Result<LiveOptions> LiveOptionsFromEnv() {
  LiveOptions o;
  AMEM_ASSIGN_OR_RETURN(files, EnvNumber("AMEM_SNAPSHOT_CACHE_FILES", o.max_cached_snapshots));
  AMEM_ASSIGN_OR_RETURN(bytes, EnvNumber("AMEM_SNAPSHOT_CACHE_BYTES", o.max_cached_bytes));
  AMEM_ASSIGN_OR_RETURN(merge_bytes, EnvNumber("AMEM_MERGE_BYTES", o.merge_bytes));
  AMEM_ASSIGN_OR_RETURN(merge_records, EnvNumber("AMEM_MERGE_RECORDS", o.merge_records));
  o.max_cached_snapshots = static_cast<size_t>(files);
  o.max_cached_bytes = bytes;
  o.merge_bytes = merge_bytes;
  o.merge_records = merge_records;
  if (const char* f = std::getenv("AMEM_MERGE_FRACTION"); f != nullptr && *f != '\0') {
    char* end = nullptr;
    errno = 0;
    double x = std::strtod(f, &end);
    if (errno != 0 || end == f || *end != '\0' || !(x >= 0.0 && x <= 1e6)) {
      return Status::InvalidArgument(
          std::string("AMEM_MERGE_FRACTION=") + f +
          ": not a number >= 0 (the records a delta may touch over the base's records)");
    }
    o.merge_fraction = x;
  }
  if (const char* f = std::getenv("AMEM_FOREGROUND_MERGE"); f != nullptr) {
    std::string_view v(f);
    if (v != "" && v != "0" && v != "1") {
      return Status::InvalidArgument(std::string("AMEM_FOREGROUND_MERGE=") + f + ": use 0 or 1");
    }
    o.foreground_merge = v == "1";
  }
  if (const char* f = std::getenv("AMEM_FULL_EXPORT"); f != nullptr) {
    std::string_view v(f);
    if (v != "" && v != "0" && v != "1") {
      return Status::InvalidArgument(std::string("AMEM_FULL_EXPORT=") + f + ": use 0 or 1");
    }
    o.full_export = v == "1";
  }
  return o;
}

namespace {

// The most records a delta of the latest state may touch before the base is
// rebuilt (DeltaSummary::records): a fraction of the base's records, never below
// merge_records. Compiling a record of the change log costs far more than writing
// one in an export (LMDB reads, sorting by the base's order), so the fraction is
// small.
uint64_t MergeBound(const LiveOptions& options, const Reader& base) {
  const double records = static_cast<double>(base.node_count()) + base.edge_count() +
                         base.kv_count();
  const double bound = options.merge_fraction * records;
  if (bound >= 1.8e19) return UINT64_MAX;
  return std::max(options.merge_records, static_cast<uint64_t>(bound));
}

// The most records a delta past the merge bound may touch and still be compiled
// whole while a merge runs elsewhere (a background or spawned merge answers from
// it meanwhile): four times the bound, and never less than the records whose
// compile costs about an export of the base (a delta record costs tens of export
// records: a 25th of the base's). Past that the query's foreground exports.
uint64_t CompileCap(const Reader& base, uint64_t bound) {
  if (bound > UINT64_MAX / 4) return bound;
  const uint64_t records = base.node_count() + base.edge_count() + base.kv_count();
  return std::max(4 * bound, records / 25);
}

// A base from an amem that wrote no embeddings block (docs/FORMAT.md §8.20): every
// text-only similar on it would embed each content again; or one whose term blocks
// come from the former tokenizer (format version 1). Either is rebuilt.
bool Outdated(const Reader& r) {
  return (r.features() & kFeatureTermIndex) &&
         (r.version() < kFormatVersion || !(r.features() & kFeatureEmbeddings));
}

}  // namespace

// A merge on a thread of its own (LiveOptions::background_merge).
struct BackgroundMerge {
  std::thread thread;
  std::atomic<bool> done{false};
  // The new base as the thread mapped and checked it (ReadOptions::check_records
  // as asked), with its file's identity and revision: the query that finds it in
  // place maps nothing. Null when the merge failed or found a newer base there.
  std::shared_ptr<const Reader> base;
  std::string identity;
  uint64_t revision = 0;
  // Level 0 of the new base's stack: the writes made while the merge ran,
  // compiled on the thread too (CatchUp), so that the first call on the new base
  // compiles only the writes since. Its view is null when there were none.
  LiveLevel level;
};

// Level 0 of a LiveCache's stack compiled again on a thread of its own
// (LiveOptions::background_fold), against the cache's base at `revision`, by
// level 0's compiler, which the cache lends it while it runs.
struct BackgroundFold {
  std::thread thread;
  std::atomic<bool> done{false};
  std::shared_ptr<const Reader> base;
  uint64_t revision = 0;
  std::shared_ptr<DeltaCompiler> compiler;
  // The new level 0; its view is null when there was nothing to compile, or the
  // compile failed or passed its cap (the calls then go on as without it).
  LiveLevel level;
};

Retirer::~Retirer() {
  if (thread_.joinable()) thread_.join();
}
void Retirer::Retire(std::shared_ptr<const void> what) {
  if (what == nullptr) return;
  std::lock_guard<std::mutex> lock(mu_);
  if (thread_.joinable()) thread_.join();
  thread_ = std::thread([what = std::move(what)]() mutable { what.reset(); });
}

LiveCache::LiveCache() = default;
LiveCache::~LiveCache() {
  if (merge && merge->thread.joinable()) merge->thread.join();
  if (fold && fold->thread.joinable()) fold->thread.join();
}
void LiveCache::WaitForMerge() {
  std::lock_guard<std::mutex> lock(mu);
  if (merge && merge->thread.joinable()) merge->thread.join();
}
void LiveCache::WaitForFold() {
  std::lock_guard<std::mutex> lock(mu);
  if (fold && fold->thread.joinable()) fold->thread.join();
}

namespace {

// Level 0 of a stack over `base` (a snapshot of `store` at `revision`), compiled
// off the calls' path by `compiler`: the delta to the latest revision, as
// OpenLive's level 0 would be, up to CompileCap (past the merge bound, the call
// that takes the level starts the next merge), its view opened and handed to
// LiveOptions::prepare_level. Its view is null when there were no writes since,
// or too many, or on a failure: the calls then compile what they need.
LiveLevel CompileLevel0(const Store& store, const LiveOptions& live,
                        const std::shared_ptr<const Reader>& base, uint64_t revision,
                        std::shared_ptr<DeltaCompiler> compiler) {
  auto head = store.ResolveRevision(ReadView::Latest());
  if (!head.ok() || *head <= revision) return {};
  auto history = store.RevisionIdentity(*head);
  if (!history.ok()) return {};
  std::string bytes;
  const uint64_t cap = CompileCap(*base, MergeBound(live, *base));
  auto compiled = compiler->Compile(store, *base, revision, *head, &bytes, cap);
  if (!compiled.ok() || compiled->over_bound || compiled->records > cap ||
      bytes.size() > live.merge_bytes) {
    return {};
  }
  auto delta = Delta::OpenBuffer(std::move(bytes), *base);
  if (!delta.ok()) return {};
  auto view = Reader::OpenLayered(base, std::shared_ptr<const Delta>(std::move(delta).value()));
  if (!view.ok()) return {};
  LiveLevel level{std::shared_ptr<const Reader>(std::move(view).value()), *head, *history,
                  compiled->records, std::move(compiler)};
  if (live.prepare_level) live.prepare_level(store, level.view);
  return level;
}

// The writes made while a background merge exported its base (at m->revision):
// level 0 of the new base's stack.
void CatchUp(const Store& store, const LiveOptions& live, BackgroundMerge* m) {
  m->level = CompileLevel0(store, live, m->base, m->revision, std::make_shared<DeltaCompiler>());
}

// The merge (MergeBase): under merge.lock, taken without waiting (false when
// another process holds it), exports the latest state to a temp file of this
// process ("current.amem.tmp.<pid>.<hex>", removed by the next export or merge if
// the process dies), then, under the exclusive lock, renames it into place and
// records it, unless a base at least as new is there. SIGKILLed at any point it
// leaves the old pair, or the new base beside the old record (its fingerprint then
// names another file: exported again), and at most temp files of a dead process;
// the flocks go with the process. Sets m's base when `m` is given.
Result<bool> Merge(const Store& store, const LiveOptions& live, BackgroundMerge* m) {
  const std::string dir = store.path();
  const std::string merge_lock_path = dir + "/merge.lock";
  FileLock merge_lock(merge_lock_path);
  AMEM_ASSIGN_OR_RETURN(mine, merge_lock.TryLock(merge_lock_path));
  if (!mine) return false;  // another process merges
  RemoveStaleTempFiles(dir);
  const std::string base_path = dir + "/current.amem", rev_path = dir + "/current.rev";
  const std::string lock_path = dir + "/current.lock";
  // Sound and recorded at `rev` or later: a merge that ran since the query looked.
  const auto base_at = [&](uint64_t rev) {
    RevisionRecord recorded;
    return ReadRevisionFile(rev_path, &recorded) && recorded.rev >= rev &&
           SameHistory(store, recorded.rev, recorded.identity) &&
           recorded.fingerprint == BaseFingerprint(base_path);
  };
  AMEM_ASSIGN_OR_RETURN(latest, store.ResolveRevision(ReadView::Latest()));
  if (base_at(latest)) return false;
  if (m) {
    // A write that must grow the store's map waits for every read of this
    // process to end, this export's included (seconds at 1M nodes), and the
    // pages the writes free meanwhile are not reused before it ends: room for
    // them first (address space; about twice the base's size).
    struct stat st;
    const uint64_t base_size =
        ::stat(base_path.c_str(), &st) == 0 ? static_cast<uint64_t>(st.st_size) : 0;
    (void)store.ReserveMap(std::max<uint64_t>(uint64_t{1} << 30, 2 * base_size));
  }
  const std::string temp = TempPathFor(base_path);
  ExportOptions options;
  options.progress = live.progress;
  options.writer.threads = 1;  // the other core answers queries meanwhile
  options.writer.entity_search = live.entity_search;
  options.writer.entity_labels = live.entity_labels;
  auto exported = ExportSnapshot(store, temp, options);
  if (!exported.ok()) {
    ::unlink(temp.c_str());
    return exported.status();
  }
  Status s;
  bool merged = false;
  {
    // Held only to put the base in place: the work after it takes seconds at 1M
    // nodes, and every other process's query waits on this lock.
    FileLock lock(lock_path);
    s = lock.Lock(lock_path);
    if (s.ok() && base_at(exported->revision)) {
      ::unlink(temp.c_str());
      return false;
    }
    if (s.ok() && ::rename(temp.c_str(), base_path.c_str()) != 0) {
      s = Status::IOError(Errno("rename " + temp));
    } else if (s.ok()) {
      ::unlink((dir + "/current.amdl").c_str());  // the old base's
      auto identity = store.RevisionIdentity(exported->revision);
      s = identity.ok() ? WriteFileAtomic(rev_path, RevisionFileText(exported->revision, *identity,
                                                                    BaseFingerprint(base_path)))
                        : identity.status();
      merged = s.ok();
      // Mapped under the lock (the file is ours until it is released), checked after.
      struct stat st;
      if (m && s.ok() && ::stat(base_path.c_str(), &st) == 0) {
        if (auto r = Reader::Open(base_path); r.ok()) {
          m->base = std::move(r).value();
          m->identity = FileIdentity(st);
          m->revision = exported->revision;
        }
      }
    }
  }
  ::unlink(temp.c_str());  // when it was not renamed
  if (m && m->base && live.check_records && !m->base->CheckRecords().ok()) m->base = nullptr;
  // The queries' first-use work, before the base is theirs (the thread's `done`).
  if (m && m->base && live.warm_base && !m->base->Warm().ok()) m->base = nullptr;
  if (m && m->base && live.prepare_base) live.prepare_base(store, m->base, m->revision);
  if (m && m->base) CatchUp(store, live, m);
  if (!s.ok()) return s;
  return merged;
}

// A merge on a thread of its own (amem mcp), on a Store handle of its own.
Status MergeInBackground(const std::string& dir, const LiveOptions& live, BackgroundMerge* m) {
  StoreOptions store_options;
  store_options.create_if_missing = false;
  AMEM_ASSIGN_OR_RETURN(store, Store::Open(dir, store_options));
  return Merge(*store, live, m).status();
}

// Starts a background merge unless one runs or one finished during this call: its
// base, checked and prepared on its thread, is for the next call to take (OpenLive
// reaps it first), not to be dropped for a merge of its own here.
void StartMerge(const Store& store, LiveCache* cache, const LiveOptions& options) {
  if (cache->merge) return;
  cache->merge = std::make_unique<BackgroundMerge>();
  BackgroundMerge* m = cache->merge.get();
  m->thread = std::thread([m, dir = store.path(), options] {
    Status s = MergeInBackground(dir, options, m);
    if (!s.ok()) {
      const std::string line = "amem: the background merge failed (" + s.ToString() +
                               "); the next query past the bound tries again\n";
      std::fwrite(line.data(), 1, line.size(), stderr);
    }
    m->done.store(true, std::memory_order_release);
  });
}

// Starts compiling level 0 of the cache's stack again on a thread, with the
// compiler level 0 was compiled by (a call that compiles level 0 meanwhile starts
// a compiler of its own; levels[0].compiler, which no call compiles with, keeps
// naming it).
void StartFold(const Store& store, LiveCache* cache, const LiveOptions& options) {
  cache->fold = std::make_unique<BackgroundFold>();
  BackgroundFold* f = cache->fold.get();
  f->base = cache->base;
  f->revision = cache->base_revision;
  f->compiler = std::move(cache->compiler);
  f->thread = std::thread([f, dir = store.path(), read_only = store.read_only(), options] {
    StoreOptions store_options;
    store_options.create_if_missing = false;
    store_options.read_only = read_only;
    if (auto own = Store::Open(dir, store_options); own.ok()) {
      f->level = CompileLevel0(**own, options, f->base, f->revision, f->compiler);
    }
    f->done.store(true, std::memory_order_release);
  });
}

// True while a fold this cache started runs. A finished one is reaped: its level
// 0, when it is over the cache's base, of this history, and newer than the
// stack's level 0, replaces the stack (the levels above were compiled against the
// old level 0; the next view compiles the writes since over the new one).
bool Folding(const Store& store, LiveCache* cache) {
  if (!cache->fold) return false;
  if (!cache->fold->done.load(std::memory_order_acquire)) return true;
  if (cache->fold->thread.joinable()) cache->fold->thread.join();
  std::unique_ptr<BackgroundFold> f = std::move(cache->fold);
  if (f->base != cache->base) return false;
  LiveLevel& level = f->level;
  if (level.view && SameHistory(store, level.revision, level.history) &&
      (cache->levels.empty() || cache->levels[0].revision < level.revision)) {
    cache->levels.clear();
    cache->compiler = level.compiler;
    cache->levels.push_back(std::move(level));
  } else if (!cache->compiler) {
    cache->compiler = std::move(f->compiler);  // lent back
  }
  return false;
}

// True while a merge this cache started runs. A finished one is reaped: its new
// base, if any, goes to *merged for the base check to take.
bool Merging(LiveCache* cache, std::unique_ptr<BackgroundMerge>* merged = nullptr) {
  if (!cache->merge) return false;
  if (!cache->merge->done.load(std::memory_order_acquire)) return true;
  if (cache->merge->thread.joinable()) cache->merge->thread.join();
  if (merged) *merged = std::move(cache->merge);
  cache->merge.reset();
  return false;
}

// The cap of a middle level over `below`.
uint64_t MidLevelCap(const LiveOptions& options, const LiveLevel& below) {
  return std::max(options.mid_level_records, below.records / 8);
}

// The latest state at `wanted` from the cache's stack of views (LiveCache), without
// compiling level 0: the top level extended to `wanted`, a new level over it, or a
// middle level compiled again to `wanted` (the levels above it folded in). Null
// when none fits its cap (or the stack's records pass `bound`): level 0 is then
// compiled again in the call. Levels whose head is not a commit of this history
// before `wanted` are dropped first. With LiveOptions::background_fold level 1
// has no cap: a thread compiles level 0 again once level 1 is half full, and the
// call after it takes that level 0.
Result<std::shared_ptr<const Reader>> ExtendStack(const Store& store, LiveCache* cache,
                                                  uint64_t wanted, uint64_t wanted_history,
                                                  const LiveOptions& options, uint64_t bound) {
  std::vector<LiveLevel>& levels = cache->levels;
  for (size_t k = 0; k < levels.size(); ++k) {
    const bool same = levels[k].revision <= wanted &&
                      SameHistory(store, levels[k].revision, levels[k].history);
    if (same && levels[k].revision == wanted && levels[k].history == wanted_history) {
      levels.resize(k + 1);
      return levels[k].view;
    }
    if (!same) {
      levels.resize(k);
      break;
    }
  }
  const int top = static_cast<int>(kMaxLiveLevels) - 1;
  for (int k = std::min(static_cast<int>(levels.size()), top); k >= 1; --k) {
    const LiveLevel& below = levels[static_cast<size_t>(k) - 1];
    uint64_t under = 0;  // the records of the levels below k: what the stack costs
    for (int x = 0; x < k; ++x) under += levels[static_cast<size_t>(x)].records;
    if (under >= bound) return std::shared_ptr<const Reader>();
    const uint64_t cap = k == top                   ? options.top_level_records
                         : options.background_fold ? UINT64_MAX
                                                   : MidLevelCap(options, below);
    // Level k extended (its compiler read what it holds), or a new level over the top.
    std::shared_ptr<DeltaCompiler> compiler = static_cast<size_t>(k) < levels.size()
                                                  ? levels[static_cast<size_t>(k)].compiler
                                                  : std::make_shared<DeltaCompiler>();
    std::string bytes;
    NestedRead nested;  // the level is read for the stack, not asked by a query
    auto compiled = compiler->Compile(store, *below.view, below.revision, wanted, &bytes,
                                      std::min(cap, bound - under));
    if (!compiled.ok()) {
      // The history since that level was compacted away: level 0 decides.
      if (compiled.status().IsInvalidArgument()) return std::shared_ptr<const Reader>();
      return compiled.status();
    }
    if (compiled->over_bound || compiled->records > cap || under + compiled->records > bound) {
      continue;  // full: fold it into the level below
    }
    std::shared_ptr<const Reader> below_view = below.view;
    AMEM_ASSIGN_OR_RETURN(delta, Delta::OpenBuffer(std::move(bytes), *below_view));
    AMEM_ASSIGN_OR_RETURN(view, Reader::OpenLayered(below_view,
                                                    std::shared_ptr<const Delta>(std::move(delta))));
    const uint64_t records = compiled->records;
    levels.resize(static_cast<size_t>(k));
    levels.push_back({std::shared_ptr<const Reader>(std::move(view)), wanted, wanted_history,
                      records, std::move(compiler)});
    return levels.back().view;
  }
  return std::shared_ptr<const Reader>();
}

}  // namespace

Result<bool> MergeBase(const Store& store, const LiveOptions& options) {
  if (store.read_only()) return NotWritten(store.path() + "/current.amem");
  return Merge(store, options, nullptr);
}

void PrintNote(const LiveView& view, const std::string& who) {
  if (view.note.empty()) return;
  const std::string line = who + ": " + view.note + "\n";
  std::fwrite(line.data(), 1, line.size(), stderr);
}

Result<LiveView> OpenLive(const Store& store, const ReadView& view, const LiveOptions& options,
                          LiveCache* cache) {
  const std::string dir = store.path();
  const std::string base_path = dir + "/current.amem", rev_path = dir + "/current.rev";
  const std::string delta_path = dir + "/current.amdl", lock_path = dir + "/current.lock";
  AMEM_ASSIGN_OR_RETURN(latest, store.ResolveRevision(ReadView::Latest()));
  AMEM_ASSIGN_OR_RETURN(wanted, store.ResolveRevision(view));
  // A read-only store writes nothing beside it either: what the caches lack is
  // built in memory.
  const bool writable = !store.read_only();
  std::unique_lock<std::mutex> cache_lock;
  if (cache) cache_lock = std::unique_lock<std::mutex>(cache->mu);
  std::unique_ptr<BackgroundMerge> merged;  // a background merge that finished
  if (cache) Merging(cache, &merged);

  LiveView out;
  out.revision = wanted;
  const ReadOptions read_options{.check_records = options.check_records};
  auto whole_file = [&](const ReadView& v) -> Result<LiveView> {
    AMEM_ASSIGN_OR_RETURN(file, EnsureSnapshot(store, v, options));
    out.revision = out.base_revision = file.revision;
    out.exported = out.exported || file.exported;
    struct stat st;
    std::string identity;
    if (::stat(file.path.c_str(), &st) == 0) identity = file.path + "|" + FileIdentity(st);
    if (cache && cache->file_reader && !identity.empty() && identity == cache->file_identity) {
      out.reader = cache->file_reader;
      return out;
    }
    auto reader = Reader::Open(file.path, read_options);
    if (!reader.ok()) {
      // Another process evicted the cached file between the check and the open
      // (a mapped file stays readable; only this window can miss it), or the file
      // is damaged (truncated, emptied): it is dropped and exported once more.
      if (reader.status().IsCorruption() && writable) {
        ::unlink(file.path == base_path ? rev_path.c_str() : file.path.c_str());
      }
      AMEM_ASSIGN_OR_RETURN(again, EnsureSnapshot(store, v, options));
      out.exported = out.exported || again.exported;
      reader = Reader::Open(again.path, read_options);
      if (!reader.ok()) return reader.status();
      identity.clear();
    }
    out.reader = std::move(reader).value();
    if (cache) {
      cache->file_reader = identity.empty() ? nullptr : out.reader;
      cache->file_identity = identity;
    }
    return out;
  };
  // The state as of `v` built in memory, when its file cannot be written: the
  // disk is full, the file system read-only, or the store opened read-only.
  auto from_memory = [&](const ReadView& v, const Status& why) -> Result<LiveView> {
    AMEM_ASSIGN_OR_RETURN(at, store.ResolveRevision(v));
    AMEM_ASSIGN_OR_RETURN(reader, SnapshotInMemory(store, ReadView::AtRevision(at)));
    out.reader = std::move(reader);
    out.revision = out.base_revision = at;
    out.note = CacheNote(why);
    return out;
  };
  auto whole_or_memory = [&](const ReadView& v) -> Result<LiveView> {
    auto done = whole_file(v);
    if (!done.ok() && done.status().IsIOError()) return from_memory(v, done.status());
    return done;
  };
  if (options.full_export) return whole_or_memory(view);

  // The base: current.rev and current.amem are read under the shared lock, so
  // that they belong together (a re-export holds it exclusively). current.rev
  // names the base's commit (Store::RevisionIdentity): a base of another history
  // (data.mdb restored from a backup, the store recreated) is exported again.
  std::shared_ptr<const Reader> base;
  uint64_t base_rev = 0, base_history = 0;
  std::string identity;
  // While this cache's background merge runs, its base stays: the merge records
  // the new base before it has checked and warmed it and prepared what the caller
  // keeps per base (LiveOptions::warm_base, prepare_base), and the first call after
  // it finished takes the new base as the thread left it. (Base + delta answers
  // right on any base of this history.)
  if (cache && cache->base && cache->merge && !cache->merge->done.load(std::memory_order_acquire) &&
      SameHistory(store, cache->base_revision, cache->base_history)) {
    base = cache->base;
    base_rev = cache->base_revision;
    base_history = cache->base_history;
    identity = cache->base_identity;
  }
  for (int attempt = 0; attempt < 2 && !base; ++attempt) {
    {
      FileLock lock(lock_path, /*create=*/writable);
      AMEM_RETURN_IF_ERROR(lock.Lock(lock_path, /*shared=*/true));
      struct stat st;
      RevisionRecord recorded;
      if (ReadRevisionFile(rev_path, &recorded) && ::stat(base_path.c_str(), &st) == 0) {
        identity = FileIdentity(st);
        base_rev = recorded.rev;
        base_history = recorded.identity;
        if (!SameHistory(store, base_rev, base_history)) {
          if (writable) ::unlink(rev_path.c_str());  // another history's: exported again
        } else if (cache && cache->base && cache->base_identity == identity &&
                   cache->base_revision == base_rev) {
          base = cache->base;  // the same file and record as when it was checked below
        } else if (merged && merged->base && merged->identity == identity &&
                   merged->revision == base_rev) {
          base = merged->base;  // this process's background merge mapped and checked it
        } else if (recorded.fingerprint != BaseFingerprint(base_path)) {
          // Written for another file (a process killed between the base's rename
          // and its record): exported again.
          if (writable) ::unlink(rev_path.c_str());
        } else if (auto r = Reader::Open(base_path, read_options); r.ok() && !Outdated(**r)) {
          base = std::move(r).value();
        } else if (writable) {
          // Unreadable, or outdated: the export below replaces it (once per
          // store, on the first query after an upgrade).
          ::unlink(rev_path.c_str());
        }
      }
    }
    if (!base && attempt == 0) {
      // No base yet: export the latest state, which is then the base.
      auto file = EnsureSnapshot(store, ReadView::Latest(), options);
      if (!file.ok() && file.status().IsIOError()) return from_memory(view, file.status());
      if (!file.ok()) return file.status();
      out.exported = file->exported;
    }
  }
  if (!base) return Status::IOError("cannot open the store's snapshot " + base_path);
  if (cache && base != cache->base) {
    if (cache->base) {
      // The old base and its views: their last reference unmaps it, on a thread.
      using Old = std::tuple<std::shared_ptr<const Reader>, std::shared_ptr<const Reader>,
                             std::vector<LiveLevel>, std::shared_ptr<DeltaCompiler>>;
      cache->retirer.Retire(std::make_shared<Old>(std::move(cache->base), std::move(cache->view),
                                                  std::move(cache->levels),
                                                  std::move(cache->compiler)));
    }
    cache->base = base;
    cache->base_identity = identity;
    cache->base_revision = base_rev;
    cache->base_history = base_history;
    cache->view = nullptr;
    cache->compiler = nullptr;
    cache->levels.clear();
    if (merged && base == merged->base && merged->level.view &&
        SameHistory(store, merged->level.revision, merged->level.history)) {
      // The writes made during the merge, compiled by its thread: level 0.
      cache->compiler = merged->level.compiler;
      cache->levels.push_back(std::move(merged->level));
    }
  }
  out.base_revision = base_rev;
  // Older than the base: a whole file.
  if (wanted < base_rev) return whole_or_memory(ReadView::AtRevision(wanted));
  if (wanted == base_rev) {
    out.reader = base;
    return out;
  }
  AMEM_ASSIGN_OR_RETURN(wanted_history, store.RevisionIdentity(wanted));
  if (cache && cache->view && cache->view_revision == wanted &&
      cache->view_history == wanted_history) {
    out.reader = cache->view;
    return out;
  }

  // The delta from the base to `wanted`: the cached file for the latest state if it
  // is the right one (its header names the commits at both ends), else compiled
  // from the store's change log.
  const bool is_latest = wanted == latest;
  // A long-lived process that writes no delta file layers the latest writes over
  // its kept views (LiveCache): O(those writes), not O(every change since the base).
  const bool stacked = cache && is_latest && !options.write_delta_file;
  // While a background merge runs, no bound: the views answer until its base is in.
  const bool background = stacked && options.background_merge && writable;
  // Running, or finished since the call began (the next call takes its base,
  // which must not be dropped here).
  const bool merging = background && cache->merge != nullptr;
  // A one-shot process: the merge runs in a process of its own (spawn_merge).
  const bool spawned = !background && is_latest && writable && options.spawn_merge &&
                       !options.foreground_merge;
  if (stacked) {
    const bool folding = Folding(store, cache);
    const uint64_t merge_bound = MergeBound(options, *base);
    // With a background merge the stack answers past the merge bound: its records
    // (a record counted once per level that holds it) start the merge once the
    // view is made, so that no call compiles level 0 only to find it past the
    // bound; past CompileCap level 0 decides, as an export may cost less.
    const uint64_t bound = merging      ? UINT64_MAX
                           : background ? CompileCap(*base, merge_bound)
                                        : merge_bound;
    AMEM_ASSIGN_OR_RETURN(top, ExtendStack(store, cache, wanted, wanted_history, options, bound));
    if (top) {
      uint64_t stack_records = 0;
      for (const LiveLevel& level : cache->levels) stack_records += level.records;
      if (background && !merging && stack_records > merge_bound) {
        StartMerge(store, cache, options);  // the stack answers meanwhile
      }
      // Level 1 half full: level 0 is compiled again on a thread, to be ready
      // about when level 1 is full.
      std::vector<LiveLevel>& levels = cache->levels;
      if (options.background_fold && !folding && levels.size() >= 2 && cache->compiler &&
          levels[0].compiler == cache->compiler &&
          levels[1].records >= MidLevelCap(options, levels[0]) / 2) {
        StartFold(store, cache, options);
      }
      out.reader = std::move(top);
      out.compiled = true;
      cache->view = out.reader;
      cache->view_revision = wanted;
      cache->view_history = wanted_history;
      return out;
    }
  }
  uint64_t level_records = UINT64_MAX;  // what level 0 holds, once compiled here
  std::unique_ptr<Delta> delta;
  if (is_latest) {
    auto d = Delta::Open(delta_path, *base);
    if (d.ok() && (*d)->base_revision() == base_rev && (*d)->head_revision() == wanted &&
        (*d)->base_identity() == base_history && (*d)->head_identity() == wanted_history) {
      delta = std::move(d).value();
    }
  }
  if (!delta) {
    std::string bytes;
    // Only the latest state merges; the compile stops early when the change log
    // alone is past the bound.
    const uint64_t bound = is_latest && !merging ? MergeBound(options, *base) : UINT64_MAX;
    // A merge in the background answers from this delta, compiled whole up to
    // CompileCap; a change log past that (one write deleting most of the store)
    // costs more to compile than an export, which then runs here.
    const uint64_t stop = background || spawned ? CompileCap(*base, bound) : bound;
    // A long-lived process extends what its last compile of the latest state read.
    if (cache && is_latest && !cache->compiler) cache->compiler = std::make_shared<DeltaCompiler>();
    auto compiled = cache && is_latest
                        ? cache->compiler->Compile(store, *base, base_rev, wanted, &bytes, stop)
                        : CompileDelta(store, *base, base_rev, wanted, &bytes, stop);
    if (!compiled.ok()) {
      // The history since the base was compacted away: a full file instead.
      if (!compiled.status().IsInvalidArgument()) return compiled.status();
      return whole_or_memory(is_latest ? ReadView::Latest() : ReadView::AtRevision(wanted));
    }
    bool layer = true;
    const bool over = is_latest && (compiled->over_bound || compiled->records > bound ||
                                    bytes.size() > options.merge_bytes);
    // A merge process that cannot be started (no process left, say): the
    // foreground merges, as without one.
    if (over && background && !compiled->over_bound) {
      StartMerge(store, cache, options);  // answered from this delta meanwhile
    } else if (over && spawned && !compiled->over_bound && options.spawn_merge(dir).ok()) {
      // Answered from this delta meanwhile.
    } else if (over) {
      // Merge: the delta costs more than its bound; rebuild the base. When the new
      // base cannot be written, the base and this delta answer from memory.
      if (writable) ::unlink(delta_path.c_str());
      auto merged = whole_file(ReadView::Latest());
      if (merged.ok() || !merged.status().IsIOError()) {
        if (merged.ok()) merged->merged = true;
        return merged;
      }
      out.revision = wanted;
      out.base_revision = base_rev;
      out.note = CacheNote(merged.status());
      layer = false;
      if (compiled->over_bound) {  // stopped before compiling: compile it whole
        auto whole = CompileDelta(store, *base, base_rev, wanted, &bytes);
        if (!whole.ok()) return whole.status();
      }
    }
    if (layer && is_latest && options.write_delta_file) {
      // A cache: not fsynced; a torn or stale file fails its checksum or base check
      // and is compiled again. A failure to write it only costs the next process.
      if (!writable) {
        out.note = CacheNote(Status::IOError("the store is open read-only"));
      } else if (Status w = WriteFileAtomic(delta_path, bytes, Durability::kCache); !w.ok()) {
        out.note = CacheNote(w);
      }
    }
    AMEM_ASSIGN_OR_RETURN(opened, Delta::OpenBuffer(std::move(bytes), *base));
    delta = std::move(opened);
    out.compiled = true;
    if (layer) level_records = compiled->records;
  }
  AMEM_ASSIGN_OR_RETURN(layered, Reader::OpenLayered(base, std::shared_ptr<const Delta>(std::move(delta))));
  out.reader = std::move(layered);
  if (cache) {
    cache->view = out.reader;
    cache->view_revision = wanted;
    cache->view_history = wanted_history;
  }
  if (stacked) {
    // Level 0 of a new stack; a delta read from current.amdl (its records unknown)
    // starts none: the next write compiles level 0 again.
    cache->levels.clear();
    if (level_records != UINT64_MAX) {
      cache->levels.push_back(
          {out.reader, wanted, wanted_history, level_records, cache->compiler});
    }
  }
  return out;
}

Result<std::string> DiscardLiveCache(const Store& store, const LiveView* view, LiveCache* cache) {
  const std::string dir = store.path();
  const std::string base_path = dir + "/current.amem", rev_path = dir + "/current.rev";
  const std::string delta_path = dir + "/current.amdl", lock_path = dir + "/current.lock";
  if (cache) {
    std::lock_guard<std::mutex> lock(cache->mu);
    cache->base = nullptr;
    cache->view = nullptr;
    cache->compiler = nullptr;
    cache->levels.clear();
    cache->file_reader = nullptr;
    cache->base_identity.clear();
    cache->file_identity.clear();
  }
  FileLock lock(lock_path);
  AMEM_RETURN_IF_ERROR(lock.Lock(lock_path));
  // A base + delta view: only a delta read from current.amdl can be wrong with a
  // sound base. A whole file: the base, or else the past revision's file.
  const bool whole = view != nullptr && view->reader && !view->reader->layered();
  bool drop_base = view == nullptr || !view->reader || view->compiled;
  if (!drop_base) {
    auto base = Reader::Open(base_path);
    drop_base = !base.ok() || !(*base)->Verify().ok();
  }
  std::string removed;
  auto remove = [&](const std::string& path, const std::string& name) {
    if (::unlink(path.c_str()) == 0) removed += (removed.empty() ? "" : ", ") + name;
  };
  remove(delta_path, "current.amdl");
  if (drop_base) {
    remove(rev_path, "current.rev");  // first: a rev file never names a missing base
    remove(base_path, "current.amem");
  } else if (whole) {
    if (auto past = PastSnapshotName(store, view->revision); past.ok()) {
      remove(dir + "/" + *past, *past);
    }
  }
  RemoveStaleTempFiles(dir);
  return removed;
}

}  // namespace amem::snapshot
