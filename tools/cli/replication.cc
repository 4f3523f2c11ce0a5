// A store bound to an ordered log of its revisions (tools/cli/replication.h,
// docs/REPLICATION.md).
#include "tools/cli/replication.h"

#include <algorithm>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <mutex>
#include <string_view>
#include <system_error>
#include <utility>

#include <sys/stat.h>
#include <unistd.h>

#include "common/file_pieces.h"
#include "common/files.h"
#include "common/hash.h"
#include "snapshot/export.h"
#include "tools/cli/command.h"
#include "tools/io/history_log.h"
#include "tools/io/ingest.h"

namespace amem::cli {

namespace {

RevisionLogFactory& Factory() {
  static RevisionLogFactory factory;
  return factory;
}

std::string RemotePath(const std::string& store_dir) {
  return (std::filesystem::path(store_dir) / kRemoteFile).string();
}

Status CheckStreamName(const std::string& stream) {
  if (stream.empty() || stream.size() > 64) {
    return Status::InvalidArgument("--stream: a name of 1 to 64 letters, digits, '-' or '_'");
  }
  for (char c : stream) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '-' || c == '_';
    if (!ok) {
      return Status::InvalidArgument("--stream '" + stream +
                                     "': only letters, digits, '-' and '_' (it names a "
                                     "JetStream stream and its subject)");
    }
  }
  return Status::OK();
}

Status CheckServer(const std::string& url) {
  constexpr std::string_view kScheme = "nats://";
  if (url.compare(0, kScheme.size(), kScheme) != 0 || url.size() == kScheme.size()) {
    return Status::InvalidArgument("server '" + url + "': expected nats://HOST:PORT");
  }
  for (char c : url) {
    if (static_cast<unsigned char>(c) <= ' ' || c == ',' || c == '"' || c == '\\') {
      return Status::InvalidArgument("server '" + url + "': expected nats://HOST:PORT");
    }
  }
  return Status::OK();
}

std::string Env(const char* name) {
  const char* v = std::getenv(name);
  return v != nullptr ? v : "";
}

std::string Where(const std::string& stream, uint64_t seq) {
  return "stream " + stream + ", sequence " + std::to_string(seq);
}

// What remote.json is: whether it exists, and its identity. The file is replaced
// whole (WriteRemoteBinding renames a new file into place), so any change gives a
// new stamp.
struct BindingStamp {
  bool bound = false;
  uint64_t dev = 0, ino = 0, size = 0;
  int64_t mtime_ns = 0;
  bool operator==(const BindingStamp&) const = default;
};

BindingStamp StampRemoteBinding(const std::string& store_dir) {
  BindingStamp stamp;
  struct stat st {};
  if (::stat(RemotePath(store_dir).c_str(), &st) != 0) return stamp;
  stamp.bound = true;
  stamp.dev = st.st_dev;
  stamp.ino = st.st_ino;
  stamp.size = static_cast<uint64_t>(st.st_size);
  stamp.mtime_ns = static_cast<int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec;
  return stamp;
}

// The record of the store's revision `rev`.
Result<std::string> LocalRecord(const Store& store, uint64_t rev) {
  std::string record;
  AMEM_RETURN_IF_ERROR(store.ReadHistory(rev - 1, rev, [&](const LoggedRevision& r) {
    record = RevisionRecord(r);
    return Status::OK();
  }));
  if (record.empty()) return Status::NotFound("revision " + std::to_string(rev));
  return record;
}

}  // namespace

Result<RemoteBinding> ParseRemote(const std::string& servers, const std::string& stream,
                                  int replicas) {
  RemoteBinding b;
  size_t start = 0;
  while (start <= servers.size()) {
    size_t comma = servers.find(',', start);
    if (comma == std::string::npos) comma = servers.size();
    std::string url = servers.substr(start, comma - start);
    AMEM_RETURN_IF_ERROR(CheckServer(url));
    b.servers.push_back(std::move(url));
    start = comma + 1;
  }
  AMEM_RETURN_IF_ERROR(CheckStreamName(stream));
  if (replicas < 1 || replicas > 5) {
    return Status::InvalidArgument("--replicas: 1 to 5 (JetStream's limit)");
  }
  b.stream = stream;
  b.replicas = replicas;
  return b;
}

Result<RemoteBinding> ReadRemoteBinding(const std::string& store_dir) {
  const std::string path = RemotePath(store_dir);
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) return Status::NotFound("the store is not bound");
  std::string text;
  AMEM_RETURN_IF_ERROR(ReadInputFile(path, &text, 1 << 20));
  Json doc = Json::parse(text, nullptr, /*allow_exceptions=*/false);
  auto bad = [&](const std::string& why) {
    return Status::Corruption(path + ": " + why + " (amem remote remove, then add, rewrites it)");
  };
  if (!doc.is_object() || !doc["servers"].is_array() || !doc["stream"].is_string() ||
      !doc["replicas"].is_number_integer()) {
    return bad("not a binding (servers, stream, replicas)");
  }
  std::string servers;
  for (const Json& s : doc["servers"]) {
    if (!s.is_string()) return bad("a server is not a string");
    servers += (servers.empty() ? "" : ",") + s.get<std::string>();
  }
  Result<RemoteBinding> b =
      ParseRemote(servers, doc["stream"].get<std::string>(), doc["replicas"].get<int>());
  if (!b.ok()) return bad(b.status().message());
  return b;
}

Json RemoteBindingJson(const RemoteBinding& binding) {
  Json doc;
  doc["servers"] = binding.servers;
  doc["stream"] = binding.stream;
  doc["subject"] = binding.subject();
  doc["replicas"] = binding.replicas;
  return doc;
}

Status WriteRemoteBinding(const std::string& store_dir, const RemoteBinding& binding) {
  AtomicFile file;
  AMEM_RETURN_IF_ERROR(file.Open(RemotePath(store_dir)));
  AMEM_RETURN_IF_ERROR(file.Append(RemoteBindingJson(binding).dump(2) + "\n"));
  return file.Commit(Durability::kSynced);
}

Status RemoveRemoteBinding(const std::string& store_dir) {
  std::error_code ec;
  if (!std::filesystem::remove(RemotePath(store_dir), ec)) {
    if (ec) return Status::IOError(RemotePath(store_dir) + ": " + ec.message());
    return Status::NotFound("the store is not bound to a stream");
  }
  return Status::OK();
}

RemoteAccess RemoteAccessFromEnv() {
  RemoteAccess a;
  a.creds = Env("AMEM_NATS_CREDS");
  a.tls_ca = Env("AMEM_NATS_TLS_CA");
  a.tls_cert = Env("AMEM_NATS_TLS_CERT");
  a.tls_key = Env("AMEM_NATS_TLS_KEY");
  const std::string timeout = Env("AMEM_NATS_TIMEOUT_MS");
  if (!timeout.empty()) {
    char* end = nullptr;
    const long long v = std::strtoll(timeout.c_str(), &end, 10);
    if (end != nullptr && *end == '\0' && v > 0) a.timeout_ms = v;
  }
  return a;
}

void CloneTestDieAt(const std::string& stage) {
  if (Env("AMEM_REPLICATION_TEST_CLONE_DIE") == stage) std::raise(SIGKILL);
}

void SetRevisionLogFactory(RevisionLogFactory factory) { Factory() = std::move(factory); }

Result<std::unique_ptr<RevisionLog>> OpenRevisionLog(const RemoteBinding& binding,
                                                     const RemoteAccess& access) {
  if (!Factory()) {
    return Status::NotSupported(
        "this amem was built without NATS (libnats-dev was missing when it was "
        "configured): install libnats-dev (tools/bootstrap.sh test does) and build again");
  }
  return Factory()(binding, access);
}

Status RevisionLog::AppendNext(uint64_t expected_last, const std::string& record) {
  if (!next_error_.ok()) return next_error_;
  Result<uint64_t> seq = Append(expected_last, record);
  if (!seq.ok()) {
    next_error_ = seq.status().IsAborted()
                      ? seq.status()
                      : seq.status().WithContext("the log did not accept revision " +
                                                 std::to_string(expected_last + 1));
    return Status::OK();  // WaitAppended returns it
  }
  next_last_ = *seq;
  next_any_ = true;
  return Status::OK();
}

Status RevisionLog::WaitAppended(uint64_t* last) {
  if (next_any_) *last = next_last_;
  Status s = std::move(next_error_);
  next_error_ = Status::OK();
  next_any_ = false;
  return s;
}

Status RevisionLog::Read(uint64_t from, uint64_t to,
                         const std::function<Status(uint64_t seq, std::string record)>& fn) {
  // Fetches the whole message before asking fn, so fn may take its time.
  for (uint64_t seq = from; seq <= to; ++seq) {
    Result<std::string> record = Get(seq);
    if (!record.ok()) return record.status().WithContext("sequence " + std::to_string(seq));
    AMEM_RETURN_IF_ERROR(fn(seq, std::move(record).value()));
  }
  return Status::OK();
}

std::string StreamDescription(uint32_t dimension) {
  return std::string(kStreamDescriptionPrefix) + std::to_string(dimension);
}

uint32_t ParseStreamDescription(const std::string& description) {
  const std::string_view prefix = kStreamDescriptionPrefix;
  if (description.compare(0, prefix.size(), prefix) != 0) return 0;
  const std::string digits = description.substr(prefix.size());
  if (digits.empty() || digits.size() > 4 || digits.find_first_not_of("0123456789") != std::string::npos) {
    return 0;
  }
  const auto d = static_cast<uint32_t>(std::stoul(digits));
  return d <= kMaxDimension ? d : 0;
}

std::string SnapshotObjectName(uint64_t rev, const std::string& sha256) {
  return "rev-" + std::to_string(rev) + "-" + sha256;
}

Result<PublishedSnapshot> RevisionLog::PutSnapshot(const std::string&, uint64_t, int64_t, bool*) {
  return Status::NotSupported("this revision log keeps no snapshots");
}

Result<PublishedSnapshot> RevisionLog::NewestSnapshot() {
  return Status::NotSupported("this revision log keeps no snapshots");
}

Status RevisionLog::FetchSnapshot(const PublishedSnapshot&, const std::string&) {
  return Status::NotSupported("this revision log keeps no snapshots");
}

Result<std::vector<PublishedSnapshot>> RevisionLog::Snapshots() {
  return Status::NotSupported("this revision log keeps no snapshots");
}

Status RevisionLog::DeleteSnapshot(const PublishedSnapshot&) {
  return Status::NotSupported("this revision log keeps no snapshots");
}

Result<std::vector<PublishedSnapshot>> PruneSnapshots(RevisionLog& log, size_t keep,
                                                      const std::string& published) {
  Result<std::vector<PublishedSnapshot>> all = log.Snapshots();
  if (!all.ok()) return all.status();
  std::sort(all->begin(), all->end(), [](const PublishedSnapshot& x, const PublishedSnapshot& y) {
    return x.rev != y.rev ? x.rev > y.rev : x.name < y.name;
  });
  std::vector<PublishedSnapshot> deleted;
  for (size_t i = keep; i < all->size(); ++i) {
    if ((*all)[i].name == published) continue;
    AMEM_RETURN_IF_ERROR(log.DeleteSnapshot((*all)[i]));
    deleted.push_back((*all)[i]);
  }
  return deleted;
}

std::string RevisionRecord(const LoggedRevision& revision) {
  std::string out;
  io::AppendLogLines(revision, &out);
  return out;
}

Result<LoggedRevision> ParseRevisionRecord(const std::string& stream, uint64_t seq,
                                           const std::string& record) {
  Result<io::ParsedLog> log = io::ParseLog(record);
  if (!log.ok()) {
    return log.status().WithContext(Where(stream, seq) + ": not an amem revision");
  }
  if (log->revisions.size() != 1) {
    return Status::InvalidArgument(Where(stream, seq) + ": holds " +
                                   std::to_string(log->revisions.size()) +
                                   " revisions, not one");
  }
  if (log->revisions[0].rev != seq) {
    return Status::InvalidArgument(Where(stream, seq) + ": holds revision " +
                                   std::to_string(log->revisions[0].rev) + ", not " +
                                   std::to_string(seq));
  }
  return std::move(log->revisions[0]);
}

Status CheckSameRevision(const Store& store, RevisionLog& log, const std::string& stream,
                         uint64_t local) {
  if (local == 0) return Status::OK();
  Result<std::string> theirs = log.Get(local);
  if (!theirs.ok()) return theirs.status().WithContext(Where(stream, local));
  auto diverged = [&](const std::string& what) {
    return Status::InvalidArgument(
        "the store's revision " + std::to_string(local) + what + " differs from " +
        Where(stream, local) +
        ": the store diverged from the stream, so it cannot follow it (nothing applied)");
  };
  Result<StoreBase> base = store.Base();
  if (!base.ok()) return base.status();
  if (base->rev == local) {
    // Imported at this revision (amem clone): no record of it here, so its commit
    // time is what can be compared; the snapshot's digest was checked by clone.
    Result<LoggedRevision> revision = ParseRevisionRecord(stream, local, *theirs);
    if (!revision.ok()) return revision.status();
    if (revision->ts != base->ts) return diverged(" (imported, its commit time)");
    return Status::OK();
  }
  Result<std::string> mine = LocalRecord(store, local);
  if (!mine.ok()) return mine.status();
  if (*mine != *theirs) return diverged("");
  return Status::OK();
}

Result<CatchUpReport> CatchUp(Store& store, RevisionLog& log, const std::string& stream,
                              size_t batch_size) {
  batch_size = std::max<size_t>(batch_size, 1);
  Result<LogInfo> info = log.Open(/*create=*/false);
  if (!info.ok()) return info.status();
  CatchUpReport report;
  bool first = true;
  // Another process may apply or write the same revisions meanwhile (a writer on
  // this store, another sync): when an apply fails because the store moved past
  // it, look again from the store's new revision.
  for (;;) {
    Result<uint64_t> local = store.revision();
    if (!local.ok()) return local.status();
    if (first) report.from = *local;
    first = false;
    report.to = *local;
    report.log_last = info->last_seq;
    if (*local > info->last_seq) {
      // The stream may have grown since it was asked (another writer).
      info = log.Open(/*create=*/false);
      if (!info.ok()) return info.status();
    }
    if (*local > info->last_seq) {
      return Status::InvalidArgument(
          "the store is at revision " + std::to_string(*local) + " but stream " + stream +
          " ends at sequence " + std::to_string(info->last_seq) +
          ": the store went ahead of the stream, so it cannot follow it (nothing applied)");
    }
    if (info->first_seq > *local + 1 && info->last_seq > 0) {
      return Status::InvalidArgument("stream " + stream + " starts at sequence " +
                                     std::to_string(info->first_seq) +
                                     "; the revisions after the store's " +
                                     std::to_string(*local) + " are gone from it");
    }
    AMEM_RETURN_IF_ERROR(CheckSameRevision(store, log, stream, *local));
    // Revisions parsed and not yet applied; applied in one transaction when the
    // batch is full, before an error is returned and at the end.
    std::vector<LoggedRevision> batch;
    size_t batch_bytes = 0;
    bool moved = false;
    auto flush = [&]() -> Status {
      std::vector<LoggedRevision> pending;
      pending.swap(batch);
      batch_bytes = 0;
      if (pending.empty()) return Status::OK();
      Result<uint64_t> applied = store.ApplyRevisions(pending);
      if (applied.ok()) {
        report.to = *applied;
        return Status::OK();
      }
      // All or nothing failed: apply them one by one, so that the revisions before
      // the one that fails commit and the failure names its sequence.
      for (LoggedRevision& r : pending) {
        const uint64_t seq = r.rev;
        std::vector<LoggedRevision> one;
        one.push_back(std::move(r));
        Result<uint64_t> single = store.ApplyRevisions(one);
        if (!single.ok()) {
          Result<uint64_t> now = store.revision();
          if (now.ok() && *now >= seq) {
            moved = true;  // applied or written by another process meanwhile
            return Status::Aborted("the store moved");
          }
          return single.status().WithContext(Where(stream, seq) + ": cannot be applied");
        }
        report.to = *single;
      }
      return Status::OK();
    };
    if (info->last_seq > *local) {
      bool stopped = false;  // by the callback: its error names the stream
      Status read = log.Read(*local + 1, info->last_seq,
                             [&](uint64_t seq, std::string record) -> Status {
        stopped = true;
        Result<LoggedRevision> revision = ParseRevisionRecord(stream, seq, record);
        if (!revision.ok()) {
          AMEM_RETURN_IF_ERROR(flush());
          return revision.status();
        }
        batch_bytes += record.size();
        batch.push_back(std::move(revision).value());
        if (batch.size() >= batch_size || batch_bytes >= kCatchUpBatchBytes) {
          AMEM_RETURN_IF_ERROR(flush());
        }
        stopped = false;
        return Status::OK();
      });
      if (!read.ok() && !stopped) read = read.WithContext("stream " + stream);
      // What was read before an error (the log unreachable midway) is applied too;
      // when one of those fails, that is the first error.
      if (!moved) {
        Status flushed = flush();
        if (!flushed.ok()) read = flushed;
      }
      if (moved) continue;
      if (!read.ok()) return read;
    }
    return report;
  }
}

namespace {

// Appends revisions to a log without waiting for each answer (RevisionLog::
// AppendNext): a window of up to kAppendWindow revisions (or kAppendWindowBytes of
// records) is sent, then its answers awaited, then the next.
class Appender {
 public:
  explicit Appender(RevisionLog& log) : log_(log) {}
  // Sends `revision` as sequence revision.rev, expecting revision.rev - 1 before it.
  Status Add(const LoggedRevision& revision) {
    const std::string record = RevisionRecord(revision);
    if (first_sent_ == 0) first_sent_ = revision.rev;
    Status sent = log_.AppendNext(revision.rev - 1, record);
    if (!sent.ok()) {
      Status answered = Wait();
      return answered.ok() ? sent : answered;
    }
    bytes_ += record.size();
    if (++in_window_ >= kAppendWindow || bytes_ >= kAppendWindowBytes) return Wait();
    return Status::OK();
  }
  // Waits for the answers to what was sent.
  Status Finish() { return Wait(); }
  // The revisions the log accepted: [first(), last()], none when last() is 0.
  uint64_t first() const { return first_sent_; }
  uint64_t last() const { return last_; }
  uint64_t count() const { return last_ == 0 ? 0 : last_ - first_sent_ + 1; }

 private:
  Status Wait() {
    in_window_ = 0;
    bytes_ = 0;
    return log_.WaitAppended(&last_);
  }

  RevisionLog& log_;
  uint64_t first_sent_ = 0, last_ = 0;
  size_t in_window_ = 0, bytes_ = 0;
};

}  // namespace

Result<uint64_t> ReconcileHistory(Store& store, RevisionLog& log, const std::string& stream) {
  Result<LogInfo> info = log.Open(/*create=*/false);
  if (!info.ok()) return info.status();
  Result<uint64_t> local = store.revision();
  if (!local.ok()) return local.status();
  Result<StoreBase> base = store.Base();
  if (!base.ok()) return base.status();
  if (base->rev > 0) {
    return Status::InvalidArgument(
        "the store was imported from a snapshot of revision " + std::to_string(base->rev) +
        ", so its history cannot be compared with stream " + stream +
        "'s (amem clone starts a replica from the stream's own snapshot)");
  }
  if (info->last_seq > 0 && info->first_seq > 1) {
    return Status::InvalidArgument("stream " + stream + " starts at sequence " +
                                   std::to_string(info->first_seq) +
                                   ": its early revisions are gone, so the store's history "
                                   "cannot be compared with it");
  }
  const uint64_t common = std::min(*local, info->last_seq);
  Appender appender(log);
  AMEM_RETURN_IF_ERROR(store.ReadHistory(0, 0, [&](const LoggedRevision& r) -> Status {
    if (r.rev > common) return appender.Add(r);
    Result<std::string> theirs = log.Get(r.rev);
    if (!theirs.ok()) return theirs.status().WithContext(Where(stream, r.rev));
    if (*theirs != RevisionRecord(r)) {
      return Status::InvalidArgument("the store's revision " + std::to_string(r.rev) +
                                     " differs from " + Where(stream, r.rev) +
                                     ": the store's history is not the stream's (not bound)");
    }
    return Status::OK();
  }));
  AMEM_RETURN_IF_ERROR(appender.Finish());
  return appender.count();
}

std::string ExportDigest::ToJson() const {
  Json doc;
  doc["rev"] = rev;
  doc["xxh3"] = xxh3;
  doc["bytes"] = bytes;
  return doc.dump();
}

Result<ExportDigest> ExportDigest::Parse(const std::string& bucket, uint64_t rev,
                                         const std::string& value) {
  Json doc = Json::parse(value, nullptr, /*allow_exceptions=*/false);
  uint64_t id = 0;
  if (!doc.is_object() || !doc["rev"].is_number_unsigned() || !doc["bytes"].is_number_unsigned() ||
      !doc["xxh3"].is_string() || !ParseHexId(doc["xxh3"].get<std::string>(), &id) ||
      doc["rev"].get<uint64_t>() != rev) {
    return Status::InvalidArgument("bucket " + bucket + ", key " + std::to_string(rev) +
                                   ": not an amem export digest of revision " +
                                   std::to_string(rev));
  }
  ExportDigest d;
  d.rev = rev;
  d.bytes = doc["bytes"].get<uint64_t>();
  d.xxh3 = FormatHexId(id);
  return d;
}

Result<snapshot::ExportResult> ExportRevisionToTemp(const Store& store, uint64_t rev,
                                                   const std::string& progress,
                                                   std::string* path) {
  path->clear();
  std::error_code ec;
  const std::filesystem::path dir = std::filesystem::temp_directory_path(ec);
  if (ec) return Status::IOError("no temporary directory: " + ec.message());
  static int counter = 0;
  *path = (dir / ("amem-export-" + std::to_string(::getpid()) + "-" +
                  std::to_string(++counter) + ".amem"))
              .string();
  snapshot::ExportOptions options;
  options.view = ReadView::AtRevision(rev);
  options.progress = progress;
  return snapshot::ExportSnapshot(store, *path, options);
}

Result<ExportDigest> LocalExportDigest(const Store& store, uint64_t rev) {
  Result<uint64_t> latest = store.revision();
  if (!latest.ok()) return latest.status();
  if (rev > *latest) {
    return Status::InvalidArgument("the store is at revision " + std::to_string(*latest) +
                                   ", before " + std::to_string(rev) +
                                   " (amem sync catches it up)");
  }
  std::string path;
  Result<snapshot::ExportResult> exported =
      ExportRevisionToTemp(store, rev, "amem verify-replica", &path);
  ExportDigest d;
  d.rev = rev;
  Status read;
  if (exported.ok()) {
    Hasher64 hasher;
    Result<uint64_t> bytes = ReadFileInPieces(path, 1 << 20, [&](std::string_view piece) {
      hasher.Update(piece.data(), piece.size());
      return Status::OK();
    });
    d.bytes = bytes.ok() ? *bytes : 0;
    if (!bytes.ok() || d.bytes != exported->bytes) read = Status::IOError(path + ": cannot read it back");
    d.xxh3 = FormatHexId(hasher.Digest());
  }
  std::error_code ec;
  if (!path.empty()) std::filesystem::remove(path, ec);
  if (!exported.ok()) return exported.status().WithContext("export at revision " + std::to_string(rev));
  AMEM_RETURN_IF_ERROR(read);
  return d;
}

Result<ReplicaCheck> CheckReplica(const Store& store, RevisionLog& log,
                                  const RemoteBinding& binding, uint64_t rev, bool publish) {
  ReplicaCheck check;
  Result<ExportDigest> local = LocalExportDigest(store, rev);
  if (!local.ok()) return local.status();
  check.local = *local;
  const std::string mine = local->ToJson();
  Result<std::string> theirs =
      publish ? log.PublishDigest(rev, mine, &check.published_now) : log.GetDigest(rev);
  if (!theirs.ok()) {
    if (theirs.status().IsNotFound()) {
      return Status::NotFound("no export digest of revision " + std::to_string(rev) +
                              " in bucket " + binding.digest_bucket() +
                              " (amem verify-replica --at " + std::to_string(rev) +
                              " --publish on a replica publishes its own)");
    }
    return theirs.status().WithContext("bucket " + binding.digest_bucket());
  }
  Result<ExportDigest> published = ExportDigest::Parse(binding.digest_bucket(), rev, *theirs);
  if (!published.ok()) return published.status();
  check.published = *published;
  return check;
}

namespace {

// A write's revision appended to the log as sequence revision.rev: Aborted when the
// log has moved past revision.rev - 1; another error names the revision.
Status AppendRevision(RevisionLog& log, const std::string& stream,
                      const LoggedRevision& revision) {
  Result<uint64_t> seq = log.Append(revision.rev - 1, RevisionRecord(revision));
  if (!seq.ok()) {
    if (seq.status().IsAborted()) return seq.status();
    return seq.status().WithContext("stream " + stream + " did not accept revision " +
                                    std::to_string(revision.rev) + "; nothing was written");
  }
  if (*seq != revision.rev) {
    return Status::Corruption("stream " + stream + " took revision " +
                              std::to_string(revision.rev) + " as sequence " +
                              std::to_string(*seq));
  }
  return Status::OK();
}

// The binding a store's commit hook follows (InstallReplication), and its log once
// connected. Writers on several threads share one store (the Python module), so
// every field is read and replaced under `mu`.
class BindingFollower {
 public:
  BindingFollower(std::string store_dir, Store* store)
      : dir_(std::move(store_dir)), store_(store), access_(RemoteAccessFromEnv()) {}

  // Reads remote.json now: Corruption when it is damaged.
  Status Load() {
    std::lock_guard<std::mutex> lock(mu_);
    Refresh();
    return binding_.status().IsNotFound() ? Status::OK() : binding_.status();
  }
  // Whether the store is bound at this moment.
  bool Bound() {
    std::lock_guard<std::mutex> lock(mu_);
    Refresh();
    return stamp_.bound;
  }
  Status Publish(const LoggedRevision& revision) {
    std::string stream;
    Result<std::shared_ptr<RevisionLog>> log = Connect(&stream);
    if (!log.ok()) return log.status();
    // Fault injection for tests/replication/cluster_test.sh: die with the revision
    // written in the uncommitted transaction and not yet sent to the stream.
    if (std::getenv("AMEM_REPLICATION_TEST_DIE_BEFORE_PUBLISH") != nullptr) std::raise(SIGKILL);
    AMEM_RETURN_IF_ERROR(AppendRevision(**log, stream, revision));
    // Fault injection for tests/replication/cluster_test.sh: die after the
    // stream's acknowledgement and before the local commit.
    if (std::getenv("AMEM_REPLICATION_TEST_DIE_AFTER_PUBLISH") != nullptr) std::raise(SIGKILL);
    return Status::OK();
  }
  Status CatchUpNow() {
    std::string stream;
    Result<std::shared_ptr<RevisionLog>> log = Connect(&stream);
    if (!log.ok()) return log.status();
    return CatchUp(*store_, **log, stream).status();
  }

 private:
  // Under mu_: reads remote.json again when it changed since it was last read, and
  // forgets the log of the binding before.
  void Refresh() {
    const BindingStamp now = StampRemoteBinding(dir_);
    if (loaded_ && now == stamp_) return;
    loaded_ = true;
    stamp_ = now;
    log_.reset();
    binding_ = now.bound ? ReadRemoteBinding(dir_)
                         : Result<RemoteBinding>(Status::NotFound("the store is not bound"));
  }
  // The log of the current binding, connected once per binding.
  Result<std::shared_ptr<RevisionLog>> Connect(std::string* stream) {
    std::lock_guard<std::mutex> lock(mu_);
    Refresh();
    if (binding_.status().IsNotFound()) {
      return Status::InvalidArgument(
          "the store was unbound (amem remote remove) while this write ran; nothing was "
          "written: write again");
    }
    if (!binding_.ok()) return binding_.status();
    *stream = binding_->stream;
    if (log_) return log_;
    const std::string where = "the store is bound to stream " + binding_->stream +
                              "; nothing was written";
    // Not asked for the log's state (RevisionLog::Open): a publish names the log it
    // expects, and a catch-up asks.
    Result<std::unique_ptr<RevisionLog>> opened = OpenRevisionLog(*binding_, access_);
    if (!opened.ok()) return opened.status().WithContext(where);
    log_ = std::move(opened).value();
    return log_;
  }

  const std::string dir_;
  Store* const store_;
  const RemoteAccess access_;
  std::mutex mu_;
  bool loaded_ = false;
  BindingStamp stamp_;
  Result<RemoteBinding> binding_ = Status::NotFound("the store is not bound");
  std::shared_ptr<RevisionLog> log_;
};

}  // namespace

Status InstallReplication(const std::string& store_dir, Store* store) {
  auto follower = std::make_shared<BindingFollower>(store_dir, store);
  AMEM_RETURN_IF_ERROR(follower->Load());
  auto hook = std::make_shared<CommitHook>();
  hook->active = [follower] { return follower->Bound(); };
  hook->publish = [follower](const LoggedRevision& r) { return follower->Publish(r); };
  hook->catch_up = [follower] { return follower->CatchUpNow(); };
  store->SetCommitHook(std::move(hook));
  return Status::OK();
}

Result<ReplayReport> ReplayRevisions(Store& store, const std::string& store_dir,
                                     const std::vector<LoggedRevision>& revisions) {
  ReplayReport report;
  Result<RemoteBinding> binding = ReadRemoteBinding(store_dir);
  if (binding.status().IsNotFound()) {
    Result<uint64_t> rev = store.ApplyRevisions(revisions);
    if (!rev.ok()) return rev.status();
    report.rev = *rev;
    return report;
  }
  if (!binding.ok()) return binding.status();
  const std::string& stream = binding->stream;
  report.stream = stream;
  const std::string bound = "the store is bound to stream " + stream;
  Result<std::unique_ptr<RevisionLog>> log = OpenRevisionLog(*binding, RemoteAccessFromEnv());
  if (!log.ok()) return log.status().WithContext(bound + "; nothing was replayed");
  Result<CatchUpReport> caught = CatchUp(store, **log, stream);
  if (!caught.ok()) return caught.status().WithContext(bound + "; nothing was replayed");
  Result<uint64_t> local = store.revision();
  if (!local.ok()) return local.status();

  // The log's revisions the store has already: each the same record, else refused.
  size_t next = 0;
  if (!revisions.empty() && revisions.front().rev >= 1 && revisions.front().rev <= *local) {
    AMEM_RETURN_IF_ERROR(store.ReadHistory(
        revisions.front().rev - 1, std::min(*local, revisions.back().rev),
        [&](const LoggedRevision& mine) -> Status {
          if (next >= revisions.size() || revisions[next].rev != mine.rev) return Status::OK();
          if (RevisionRecord(revisions[next]) != RevisionRecord(mine)) {
            // "revision R: ...", so that amem replay names the log's line.
            return Status::InvalidArgument(
                "revision " + std::to_string(mine.rev) + ": differs from the store's " +
                "revision " + std::to_string(mine.rev) + ", which " + Where(stream, mine.rev) +
                " holds: the log continues another history (nothing was replayed)");
          }
          ++next;
          return Status::OK();
        }));
  }
  report.skipped = next;
  report.rev = *local;
  if (next == revisions.size()) return report;
  const std::vector<LoggedRevision> rest(revisions.begin() + static_cast<ptrdiff_t>(next),
                                         revisions.end());
  // Sent without waiting for each answer; all are answered before the commit.
  Appender appender(**log);
  Result<uint64_t> rev = store.ApplyRevisions(rest, [&](const LoggedRevision& r) -> Status {
    Status appended = appender.Add(r);
    if (appended.ok() && r.rev == rest.back().rev) appended = appender.Finish();
    if (appended.IsAborted()) {
      const uint64_t next = appender.last() != 0 ? appender.last() + 1 : appender.first();
      return Status::InvalidArgument(
          "stream " + stream + " moved past revision " + std::to_string(next - 1) +
          " (another writer's revision came first); a replayed log keeps its revision "
          "numbers, so revision " + std::to_string(next) + " cannot follow it");
    }
    return appended;
  });
  if (rev.ok()) {
    report.rev = *rev;
    report.published = appender.count();
    return report;
  }
  if (appender.count() == 0) return rev.status();  // nothing published: nothing written
  const uint64_t first_published = appender.first(), last_published = appender.last();
  // Published, then failed: the store takes what the log holds.
  Result<CatchUpReport> after = CatchUp(store, **log, stream);
  const std::string done = "replay stopped after revision " + std::to_string(last_published) +
                           " (revisions " + std::to_string(first_published) + ".." +
                           std::to_string(last_published) + " are in stream " + stream;
  // Appended, so that amem replay still names the log's line of a revision's error.
  if (!after.ok()) {
    return io::WithMessage(rev.status(), rev.status().message() + "; " + done +
                                             "; applying them here failed: " +
                                             after.status().message() +
                                             "; amem sync applies them)");
  }
  return io::WithMessage(rev.status(), rev.status().message() + "; " + done +
                                           " and applied here: replaying the same log "
                                           "again resumes after them)");
}

}  // namespace amem::cli
