// `amem remote add|show|remove`, `amem sync`, `amem follow` and `amem
// verify-replica`: a store bound to a NATS JetStream stream of its revisions (tools/cli/replication.h,
// docs/REPLICATION.md).
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "snapshot/export.h"
#include "snapshot/reader.h"
#include "tools/cli/command.h"
#include "tools/cli/replication.h"

namespace amem::cli {

namespace {

struct AccessFlags {
  std::string creds, tls_ca, tls_cert, tls_key;
  int64_t timeout_ms = 0;
  // Flags first, else the environment.
  RemoteAccess Get() const {
    RemoteAccess a = RemoteAccessFromEnv();
    if (!creds.empty()) a.creds = creds;
    if (!tls_ca.empty()) a.tls_ca = tls_ca;
    if (!tls_cert.empty()) a.tls_cert = tls_cert;
    if (!tls_key.empty()) a.tls_key = tls_key;
    if (timeout_ms > 0) a.timeout_ms = timeout_ms;
    return a;
  }
};

void AddAccessFlags(CLI::App* cmd, AccessFlags* f) {
  PathArgument(cmd->add_option("--creds", f->creds,
                               "NATS credentials file (else $AMEM_NATS_CREDS); never stored"))
      ->type_name("FILE");
  PathArgument(cmd->add_option("--tls-ca", f->tls_ca,
                               "CA certificates to trust (else $AMEM_NATS_TLS_CA)"))
      ->type_name("FILE");
  PathArgument(cmd->add_option("--tls-cert", f->tls_cert,
                               "Client certificate (else $AMEM_NATS_TLS_CERT)"))
      ->type_name("FILE");
  PathArgument(cmd->add_option("--tls-key", f->tls_key,
                               "Client certificate's key (else $AMEM_NATS_TLS_KEY)"))
      ->type_name("FILE");
  cmd->add_option("--timeout-ms", f->timeout_ms,
                  "Connect and request timeout (else $AMEM_NATS_TIMEOUT_MS, else 5000)")
      ->type_name("MS");
}

std::string Servers(const RemoteBinding& b) {
  std::string s;
  for (const std::string& url : b.servers) s += (s.empty() ? "" : ",") + url;
  return s;
}

// ---- remote add ----
struct AddArgs {
  std::string servers, stream;
  int replicas = 3;
  AccessFlags access;
};

Status RunRemoteAdd(Context& ctx, const AddArgs& a) {
  Result<RemoteBinding> binding = ParseRemote(a.servers, a.stream, a.replicas);
  if (!binding.ok()) return ctx.UsageError(binding.status().message());
  Result<RemoteBinding> old = ReadRemoteBinding(ctx.store_dir());
  if (old.ok()) {
    return Status::InvalidArgument("the store is already bound to stream " + old->stream +
                                   " (amem remote remove drops the binding)");
  }
  if (!old.status().IsNotFound()) return old.status();
  Result<Store*> store = ctx.OpenStore();
  if (!store.ok()) return store.status();
  Result<std::unique_ptr<RevisionLog>> log = OpenRevisionLog(*binding, a.access.Get());
  if (!log.ok()) return log.status();
  const uint32_t dimension = (*store)->dimension();
  Result<LogInfo> info = (*log)->Open(/*create=*/true, dimension);
  if (!info.ok()) return info.status();
  if (info->dimension != 0 && info->dimension != dimension) {
    return Status::InvalidArgument("stream " + binding->stream + " holds a store of vector "
                                   "dimension " + std::to_string(info->dimension) +
                                   ", this store's is " + std::to_string(dimension) +
                                   ": not bound");
  }
  // The binding records the stream's replicas as they are, not as asked.
  if (!info->created && info->replicas > 0) binding->replicas = info->replicas;
  Result<uint64_t> appended = ReconcileHistory(**store, **log, binding->stream);
  if (!appended.ok()) return appended.status();
  AMEM_RETURN_IF_ERROR(WriteRemoteBinding(ctx.store_dir(), *binding));
  Result<uint64_t> rev = (*store)->revision();
  if (!rev.ok()) return rev.status();
  const uint64_t stream_last = std::max(info->last_seq, *rev);
  if (ctx.json()) {
    Json doc = RemoteBindingJson(*binding);
    doc["created"] = info->created;
    doc["published"] = *appended;
    doc["revision"] = *rev;
    doc["stream_last_seq"] = stream_last;
    ctx.SetJsonOutput(doc);
  } else {
    ctx.Out() += std::string(info->created ? "created" : "found") + " stream " +
                 binding->stream + " (subject " + binding->subject() + ", " +
                 std::to_string(binding->replicas) +
                 " replicas); published " + std::to_string(*appended) +
                 " revisions; the store is bound at revision " + std::to_string(*rev) +
                 (stream_last > *rev ? " (amem sync applies the stream's " +
                                           std::to_string(stream_last - *rev) + " newer ones)"
                                     : "") +
                 "\n";
  }
  return Status::OK();
}

// ---- remote show ----
Status RunRemoteShow(Context& ctx) {
  Result<RemoteBinding> b = ReadRemoteBinding(ctx.store_dir());
  if (!b.ok()) return b.status();
  if (ctx.json()) {
    ctx.SetJsonOutput(RemoteBindingJson(*b));
  } else {
    ctx.Out() += "servers  " + Servers(*b) + "\nstream   " + b->stream + "\nsubject  " +
                 b->subject() + "\nreplicas " + std::to_string(b->replicas) + "\n";
  }
  return Status::OK();
}

// A damaged binding file is removed too.
Status RunRemoteRemove(Context& ctx) {
  Result<RemoteBinding> b = ReadRemoteBinding(ctx.store_dir());
  AMEM_RETURN_IF_ERROR(RemoveRemoteBinding(ctx.store_dir()));
  const std::string stream = b.ok() ? b->stream : std::string();
  if (ctx.json()) {
    Json doc;
    doc["stream"] = b.ok() ? Json(stream) : Json(nullptr);
    doc["removed"] = true;
    ctx.SetJsonOutput(doc);
  } else {
    ctx.Out() += (b.ok() ? "unbound from stream " + stream + " (the stream itself is kept)"
                         : "removed a damaged binding") +
                 std::string("\n");
  }
  return Status::OK();
}

// ---- sync, follow ----
struct SyncArgs {
  AccessFlags access;
  int64_t interval_ms = 200;
  size_t batch = kCatchUpBatch;
};

// The store's binding; InvalidArgument when it is not bound.
Result<RemoteBinding> RequireBinding(Context& ctx) {
  Result<RemoteBinding> binding = ReadRemoteBinding(ctx.store_dir());
  if (binding.status().IsNotFound()) {
    return Status::InvalidArgument("the store is not bound to a stream (amem remote add)");
  }
  return binding;
}

std::atomic<bool> g_stop{false};
extern "C" void OnStopSignal(int) { g_stop.store(true); }

Status RunSync(Context& ctx, const SyncArgs& a, bool follow) {
  Result<RemoteBinding> binding = RequireBinding(ctx);
  if (!binding.ok()) return binding.status();
  if (a.batch < 1) return ctx.UsageError("--batch: at least 1 revision");
  Result<Store*> store = ctx.OpenStore();
  if (!store.ok()) return store.status();
  Result<std::unique_ptr<RevisionLog>> log = OpenRevisionLog(*binding, a.access.Get());
  if (!log.ok()) return log.status();
  if (!follow) {
    Result<CatchUpReport> r = CatchUp(**store, **log, binding->stream, a.batch);
    if (!r.ok()) return r.status();
    if (ctx.json()) {
      Json doc;
      doc["stream"] = binding->stream;
      doc["from"] = r->from;
      doc["rev"] = r->to;
      doc["applied"] = r->to - r->from;
      ctx.SetJsonOutput(doc);
    } else {
      ctx.Out() += "applied " + std::to_string(r->to - r->from) + " revisions from stream " +
                   binding->stream + "; the store is at rev " + std::to_string(r->to) + "\n";
    }
    return Status::OK();
  }
  std::signal(SIGTERM, OnStopSignal);
  std::signal(SIGINT, OnStopSignal);
  uint64_t applied = 0, rev = 0;
  bool warned = false;
  while (!g_stop.load()) {
    Result<CatchUpReport> r = CatchUp(**store, **log, binding->stream, a.batch);
    if (r.ok()) {
      applied += r->to - r->from;
      rev = r->to;
      warned = false;
    } else if (r.status().IsIOError() || r.status().IsNotFound()) {
      // The stream unreachable (or not elected yet): keep trying, say so once.
      if (!warned) {
        std::fprintf(stderr, "amem follow: warning: %s (retrying)\n",
                     r.status().ToString().c_str());
      }
      warned = true;
    } else {
      return r.status();
    }
    for (int64_t waited = 0; waited < a.interval_ms && !g_stop.load(); waited += 10) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
  }
  if (ctx.json()) {
    Json doc;
    doc["stream"] = binding->stream;
    doc["rev"] = rev;
    doc["applied"] = applied;
    ctx.SetJsonOutput(doc);
  } else {
    ctx.Out() += "applied " + std::to_string(applied) + " revisions from stream " +
                 binding->stream + "; stopped at rev " + std::to_string(rev) + "\n";
  }
  return Status::OK();
}

// ---- verify-replica ----
struct VerifyReplicaArgs {
  AccessFlags access;
  uint64_t at = 0;  // 0: the store's latest revision
  bool publish = false;
};

// Exit 0 when the digests are equal, 1 when they differ (the line says both), 3
// when none is published (NotFound), 4 when the store is not at the revision yet.
Status RunVerifyReplica(Context& ctx, const VerifyReplicaArgs& a) {
  Result<RemoteBinding> binding = RequireBinding(ctx);
  if (!binding.ok()) return binding.status();
  Result<Store*> store = ctx.OpenStore();
  if (!store.ok()) return store.status();
  uint64_t rev = a.at;
  if (rev == 0) {
    Result<uint64_t> latest = (*store)->revision();
    if (!latest.ok()) return latest.status();
    rev = *latest;
  }
  Result<std::unique_ptr<RevisionLog>> log = OpenRevisionLog(*binding, a.access.Get());
  if (!log.ok()) return log.status();
  Result<ReplicaCheck> check = CheckReplica(**store, **log, *binding, rev, a.publish);
  if (!check.ok()) return check.status();
  if (!check->equal()) ctx.set_answer_false();
  const std::string bucket = binding->digest_bucket();
  if (ctx.json()) {
    Json doc;
    doc["stream"] = binding->stream;
    doc["bucket"] = bucket;
    doc["rev"] = rev;
    doc["equal"] = check->equal();
    doc["published_now"] = check->published_now;
    doc["xxh3"] = check->local.xxh3;
    doc["bytes"] = check->local.bytes;
    doc["published"] = Json{{"xxh3", check->published.xxh3}, {"bytes", check->published.bytes}};
    ctx.SetJsonOutput(doc);
    return Status::OK();
  }
  auto said = [](const ExportDigest& d) {
    return "xxh3 " + d.xxh3 + ", " + std::to_string(d.bytes) + " bytes";
  };
  const std::string at = "revision " + std::to_string(rev) + ": ";
  if (check->published_now) {
    ctx.Out() += at + "published the store's export digest (" + said(check->local) +
                 ") to bucket " + bucket + "\n";
  } else if (check->equal()) {
    ctx.Out() += at + "the store's export matches the digest in bucket " + bucket + " (" +
                 said(check->local) + ")\n";
  } else {
    ctx.Out() += at + "the store's export DIFFERS from the digest in bucket " + bucket +
                 ": " + said(check->local) + " here, " + said(check->published) +
                 " published; this replica is not the stream's state at that revision\n";
  }
  return Status::OK();
}

// ---- publish-snapshot ----
struct PublishSnapshotArgs {
  AccessFlags access;
  uint64_t at = 0;  // 0: the store's latest revision
  std::optional<size_t> keep;  // delete all but the N newest snapshots
};

Status RunPublishSnapshot(Context& ctx, const PublishSnapshotArgs& a) {
  Result<RemoteBinding> binding = RequireBinding(ctx);
  if (!binding.ok()) return binding.status();
  Result<Store*> store = ctx.OpenStore();
  if (!store.ok()) return store.status();
  Result<uint64_t> latest = (*store)->revision();
  if (!latest.ok()) return latest.status();
  if (*latest == 0) return Status::InvalidArgument("the store is empty: there is no snapshot to publish");
  if (a.at > *latest) {
    return Status::InvalidArgument("the store is at revision " + std::to_string(*latest) +
                                   ", before " + std::to_string(a.at) + " (amem sync catches it up)");
  }
  const uint64_t rev = a.at > 0 ? a.at : *latest;
  if (a.keep && *a.keep < 1) return ctx.UsageError("--keep: at least 1 snapshot");
  Result<std::unique_ptr<RevisionLog>> log = OpenRevisionLog(*binding, a.access.Get());
  if (!log.ok()) return log.status();
  Result<LogInfo> info = (*log)->Open(/*create=*/false);
  if (!info.ok()) return info.status();
  // Only a revision the stream holds, as the stream holds it, is published.
  if (rev > info->last_seq) {
    return Status::InvalidArgument("revision " + std::to_string(rev) + " is not in stream " +
                                   binding->stream + ", which ends at sequence " +
                                   std::to_string(info->last_seq) + ": nothing published");
  }
  AMEM_RETURN_IF_ERROR(CheckSameRevision(**store, **log, binding->stream, rev));
  std::string path;
  Result<snapshot::ExportResult> exported =
      ExportRevisionToTemp(**store, rev, "amem publish-snapshot", &path);
  bool created = false;
  Result<PublishedSnapshot> snap =
      exported.ok() ? (*log)->PutSnapshot(path, rev, exported->revision_ts, &created)
                    : Result<PublishedSnapshot>(exported.status());
  std::error_code ec;
  if (!path.empty()) std::filesystem::remove(path, ec);
  if (!snap.ok()) return snap.status();
  std::vector<PublishedSnapshot> deleted;
  if (a.keep) {
    Result<std::vector<PublishedSnapshot>> pruned = PruneSnapshots(**log, *a.keep, snap->name);
    if (!pruned.ok()) {
      return pruned.status().WithContext("snapshot " + snap->name + " is published; --keep");
    }
    deleted = std::move(pruned).value();
  }
  const std::string bucket = binding->snapshot_bucket();
  if (ctx.json()) {
    Json doc;
    doc["stream"] = binding->stream;
    doc["bucket"] = bucket;
    doc["name"] = snap->name;
    doc["rev"] = snap->rev;
    doc["bytes"] = snap->bytes;
    doc["chunks"] = snap->chunks;
    doc["sha256"] = snap->sha256;
    doc["published_now"] = created;
    if (a.keep) {
      Json names = Json::array();
      for (const PublishedSnapshot& d : deleted) names.push_back(d.name);
      doc["deleted"] = names;
    }
    ctx.SetJsonOutput(doc);
  } else {
    ctx.Out() += "revision " + std::to_string(snap->rev) + ": " +
                 (created ? "published snapshot " : "snapshot already published: ") +
                 snap->name + " (" + std::to_string(snap->bytes) + " bytes, " +
                 std::to_string(snap->chunks) + " chunks) in bucket " + bucket + "\n";
    for (const PublishedSnapshot& d : deleted) {
      ctx.Out() += "deleted snapshot " + d.name + " (revision " + std::to_string(d.rev) +
                   ", --keep " + std::to_string(*a.keep) + ")\n";
    }
  }
  return Status::OK();
}

// ---- clone ----
struct CloneArgs {
  std::string servers, stream, dir;
  AccessFlags access;
  size_t batch = kCatchUpBatch;
  uint32_t dimension = 0;  // 0: the snapshot's, else the stream's
};

// A clone is built in DIR.clone-tmp-<pid> and renamed to DIR when complete.
constexpr char kCloneTempInfix[] = ".clone-tmp-";

// Removes the DIR.clone-tmp-<pid> directories (owned by this user, not links) whose
// process is gone: clones that were killed. Returns how many.
size_t RemoveStaleClones(const std::string& dir) {
  namespace fs = std::filesystem;
  const fs::path target(dir);
  const std::string prefix = target.filename().string() + kCloneTempInfix;
  const fs::path parent = target.has_parent_path() ? target.parent_path() : fs::path(".");
  std::vector<fs::path> stale;
  std::error_code ec;
  for (fs::directory_iterator it(parent, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (name.size() <= prefix.size() || name.compare(0, prefix.size(), prefix) != 0) continue;
    const std::string digits = name.substr(prefix.size());
    if (digits.size() > 9 || digits.find_first_not_of("0123456789") != std::string::npos) continue;
    const long pid = std::stol(digits);
    if (pid <= 0 || pid == static_cast<long>(::getpid())) continue;
    if (::kill(static_cast<pid_t>(pid), 0) == 0 || errno != ESRCH) continue;  // still running
    struct stat st {};
    if (::lstat(it->path().c_str(), &st) != 0 || !S_ISDIR(st.st_mode) ||
        st.st_uid != ::geteuid()) {
      continue;
    }
    stale.push_back(it->path());
  }
  size_t removed = 0;
  for (const fs::path& p : stale) {
    if (fs::remove_all(p, ec) > 0 && !ec) ++removed;
  }
  return removed;
}

// Renames the finished clone `from` to `to`, which must not exist (RENAME_NOREPLACE:
// a DIR made meanwhile is never replaced), and makes the rename durable.
Status PutCloneInPlace(const std::string& from, const std::string& to) {
  int rc = ::renameat2(AT_FDCWD, from.c_str(), AT_FDCWD, to.c_str(), RENAME_NOREPLACE);
  if (rc != 0 && (errno == EINVAL || errno == ENOSYS)) {
    // A file system without RENAME_NOREPLACE: check, then rename.
    std::error_code ec;
    if (std::filesystem::exists(to, ec) || std::filesystem::is_symlink(to, ec)) {
      errno = EEXIST;
    } else {
      rc = ::rename(from.c_str(), to.c_str());
    }
  }
  if (rc != 0) {
    if (errno == EEXIST || errno == ENOTEMPTY) {
      return Status::InvalidArgument(to + " exists (made while the clone ran): the clone is "
                                     "not put there");
    }
    return Status::IOError("rename " + from + " to " + to + ": " + std::strerror(errno));
  }
  const std::filesystem::path parent = std::filesystem::path(to).parent_path();
  const std::string pdir = parent.empty() ? "." : parent.string();
  const int dfd = ::open(pdir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd < 0) return Status::IOError("open directory " + pdir + ": " + std::strerror(errno));
  rc = ::fsync(dfd);
  const int err = errno;
  ::close(dfd);
  if (rc != 0) return Status::IOError("fsync directory " + pdir + ": " + std::strerror(err));
  return Status::OK();
}

// Builds the replica in `work`/store: the newest snapshot (downloaded to
// `work`/snapshot.amem) imported at its revision, or with none published an empty
// store, of the dimension the snapshot or the stream records; the binding; the
// stream's tail. *snap is set when there was a snapshot.
Status BuildClone(RevisionLog& log, const RemoteBinding& binding, const LogInfo& info,
                  const CloneArgs& a, const std::string& work,
                  std::optional<PublishedSnapshot>* snap, CatchUpReport* report) {
  const std::string dir = work + "/store", file = work + "/snapshot.amem";
  Result<PublishedSnapshot> newest = log.NewestSnapshot();
  if (!newest.ok() && !newest.status().IsNotFound()) return newest.status();
  const std::string stream = "stream " + binding.stream;
  StoreOptions options;
  options.create_if_missing = true;
  if (newest.ok()) {
    const std::string where =
        "bucket " + binding.snapshot_bucket() + ", snapshot " + newest->name;
    if (newest->rev > info.last_seq) {
      return Status::Corruption(where + ": of revision " + std::to_string(newest->rev) +
                                ", but " + stream + " ends at sequence " +
                                std::to_string(info.last_seq));
    }
    Result<std::string> record = log.Get(newest->rev);
    if (!record.ok()) return record.status().WithContext(stream);
    Result<LoggedRevision> revision = ParseRevisionRecord(binding.stream, newest->rev, *record);
    if (!revision.ok()) return revision.status();
    if (revision->ts != newest->rev_ts) {
      return Status::Corruption(where + ": its revision's commit time " +
                                std::to_string(newest->rev_ts) + " is not " + stream +
                                "'s (" + std::to_string(revision->ts) + ")");
    }
    AMEM_RETURN_IF_ERROR(log.FetchSnapshot(*newest, file));
    Result<std::unique_ptr<snapshot::Reader>> reader = snapshot::Reader::Open(file);
    if (!reader.ok()) return reader.status().WithContext(where);
    options.dimension = (*reader)->dimension();
    if (info.dimension != 0 && info.dimension != options.dimension) {
      return Status::Corruption(where + ": its vector dimension " +
                                std::to_string(options.dimension) + " is not the " +
                                std::to_string(info.dimension) + " " + stream + " records");
    }
  } else {
    options.dimension = info.dimension != 0 ? info.dimension
                        : a.dimension != 0  ? a.dimension
                                            : kDefaultDimension;
  }
  if (a.dimension != 0 && a.dimension != options.dimension) {
    return Status::InvalidArgument(
        "--dimension " + std::to_string(a.dimension) + ": " +
        (newest.ok() ? "the snapshot " + newest->name + " has " : stream + " records ") +
        std::to_string(options.dimension) + " (nothing was made)");
  }
  Result<std::unique_ptr<Store>> store = Store::Open(dir, options);
  if (!store.ok()) return store.status();
  if (newest.ok()) {
    snapshot::ImportOptions import;
    import.revision = newest->rev;
    import.revision_ts = newest->rev_ts;
    Result<snapshot::ImportResult> imported = snapshot::ImportSnapshot(file, store->get(), import);
    if (!imported.ok()) return imported.status().WithContext(newest->name);
    std::error_code ec;
    std::filesystem::remove(file, ec);
    *snap = *newest;
    CloneTestDieAt("imported");
  }
  AMEM_RETURN_IF_ERROR(WriteRemoteBinding(dir, binding));
  Result<CatchUpReport> r = CatchUp(**store, log, binding.stream, a.batch);
  if (!r.ok()) {
    if (!newest.ok() && info.dimension == 0 && a.dimension == 0 &&
        r.status().IsInvalidArgument() &&
        r.status().message().find("dimension") != std::string::npos) {
      return r.status().WithContext(
          stream + " does not record its store's vector dimension (a stream made before "
          "amem recorded it), so the clone took " + std::to_string(kDefaultDimension) +
          ": clone again with --dimension N, its vectors' size");
    }
    return r.status();
  }
  *report = *r;
  return Status::OK();
}

// Exit 4 when DIR exists, 3 when the stream does not, 5 when the snapshot is not
// the published one, 6 when the stream cannot be reached. All or nothing: the clone
// is built in DIR.clone-tmp-<pid> and renamed to DIR when complete; on any error,
// or when killed, DIR is not made (a later clone removes what a killed one left).
Status RunClone(Context& ctx, const CloneArgs& a) {
  Result<RemoteBinding> binding = ParseRemote(a.servers, a.stream, 3);
  if (!binding.ok()) return ctx.UsageError(binding.status().message());
  if (a.batch < 1) return ctx.UsageError("--batch: at least 1 revision");
  if (a.dimension > kMaxDimension) {
    return ctx.UsageError("--dimension: 1.." + std::to_string(kMaxDimension));
  }
  // DIR/ names DIR: the clone is built beside it.
  std::string dir = a.dir;
  while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
  RemoveStaleClones(dir);
  std::error_code ec;
  if (std::filesystem::exists(dir, ec) || std::filesystem::is_symlink(dir, ec)) {
    return Status::InvalidArgument(dir + " exists: amem clone makes a new store in a "
                                   "directory that does not exist yet");
  }
  Result<std::unique_ptr<RevisionLog>> log = OpenRevisionLog(*binding, a.access.Get());
  if (!log.ok()) return log.status();
  Result<LogInfo> info = (*log)->Open(/*create=*/false);
  if (!info.ok()) return info.status();
  if (info->replicas > 0) binding->replicas = info->replicas;
  const std::string work = dir + kCloneTempInfix + std::to_string(::getpid());
  std::filesystem::remove_all(work, ec);
  if (!std::filesystem::create_directories(work, ec) || ec) {
    return Status::IOError("cannot make " + work + ": " + ec.message());
  }
  std::optional<PublishedSnapshot> snap;
  CatchUpReport r;
  Status built = BuildClone(**log, *binding, *info, a, work, &snap, &r);
  if (built.ok()) {
    CloneTestDieAt("applied");
    built = PutCloneInPlace(work + "/store", dir);
    CloneTestDieAt("renamed");
  }
  std::filesystem::remove_all(work, ec);
  if (!built.ok()) return built;
  const std::string bucket = binding->snapshot_bucket();
  if (ctx.json()) {
    Json doc = RemoteBindingJson(*binding);
    doc["dir"] = dir;
    doc["snapshot"] = snap ? Json{{"name", snap->name},
                                  {"rev", snap->rev},
                                  {"bytes", snap->bytes},
                                  {"sha256", snap->sha256}}
                           : Json(nullptr);
    doc["applied"] = r.to - r.from;
    doc["rev"] = r.to;
    ctx.SetJsonOutput(doc);
  } else {
    ctx.Out() += snap ? "fetched snapshot " + snap->name + " (" + std::to_string(snap->bytes) +
                            " bytes, SHA-256 verified) from bucket " + bucket +
                            "; imported it at revision " + std::to_string(snap->rev) + "\n"
                      : "no snapshot published in bucket " + bucket +
                            ": replaying the whole stream from revision 1\n";
    ctx.Out() += "cloned stream " + binding->stream + " into " + dir + ": applied " +
                 std::to_string(r.to - r.from) + " revisions from the stream; the store is at "
                 "rev " + std::to_string(r.to) + " and bound to it\n";
  }
  return Status::OK();
}

void AddBatchFlag(CLI::App* cmd, size_t* batch) {
  cmd->add_option("--batch", *batch,
                  "Revisions applied per write transaction (default " +
                      std::to_string(kCatchUpBatch) + ")")
      ->type_name("N");
}

}  // namespace

void AddRemoteCommands(CLI::App& app, Context& ctx) {
  CLI::App* remote = ctx.AddCommand(
      app, "remote",
      "Bind the store to a NATS JetStream stream of its revisions (docs/REPLICATION.md).",
      "amem remote add nats://127.0.0.1:4222 --stream team\n  amem remote show --json");
  remote->require_subcommand(1);
  {
    auto a = std::make_shared<AddArgs>();
    CLI::App* cmd = ctx.AddCommand(
        *remote, "add",
        "Bind to a stream (created when missing); the store's history must be the stream's.",
        "amem remote add nats://a:4222,nats://b:4222 --stream team --replicas 3");
    cmd->add_option("SERVERS", a->servers, "nats://HOST:PORT[,nats://HOST:PORT...]")
        ->required();
    cmd->add_option("--stream", a->stream, "The stream's name (subject amem.NAME.rev)")
        ->required()
        ->type_name("NAME");
    cmd->add_option("--replicas", a->replicas, "Replicas of a stream this creates (default 3)")
        ->type_name("N");
    AddAccessFlags(cmd, &a->access);
    ctx.SetAction(cmd, [&ctx, a] { return RunRemoteAdd(ctx, *a); });
  }
  {
    CLI::App* cmd = ctx.AddCommand(*remote, "show", "Print the binding and the stream's subject.",
                                   "amem remote show --json");
    ctx.SetAction(cmd, [&ctx] { return RunRemoteShow(ctx); });
  }
  {
    CLI::App* cmd = ctx.AddCommand(*remote, "remove",
                                   "Drop the binding (the stream is kept); writes stay local.",
                                   "amem remote remove");
    ctx.SetAction(cmd, [&ctx] { return RunRemoteRemove(ctx); });
  }
  {
    auto a = std::make_shared<SyncArgs>();
    CLI::App* cmd = ctx.AddCommand(
        app, "sync", "Apply the bound stream's revisions the store lacks, once.",
        "amem sync --json");
    AddAccessFlags(cmd, &a->access);
    AddBatchFlag(cmd, &a->batch);
    ctx.SetAction(cmd, [&ctx, a] { return RunSync(ctx, *a, /*follow=*/false); });
  }
  {
    auto a = std::make_shared<SyncArgs>();
    CLI::App* cmd = ctx.AddCommand(
        app, "follow",
        "Keep applying the bound stream's revisions until SIGTERM or SIGINT (exit 0).",
        "amem follow --interval-ms 100");
    AddAccessFlags(cmd, &a->access);
    AddBatchFlag(cmd, &a->batch);
    cmd->add_option("--interval-ms", a->interval_ms,
                    "Pause between looks at the stream (default 200)")
        ->type_name("MS");
    ctx.SetAction(cmd, [&ctx, a] { return RunSync(ctx, *a, /*follow=*/true); });
  }
  {
    auto a = std::make_shared<PublishSnapshotArgs>();
    CLI::App* cmd = ctx.AddCommand(
        app, "publish-snapshot",
        "Put the store's export at a revision (default: its latest) into the bound stream's "
        "snapshot bucket (JetStream object store), named by revision and SHA-256, for amem "
        "clone.",
        "amem publish-snapshot --json\namem publish-snapshot --at 90000 --keep 3");
    cmd->add_option("--at", a->at, "The revision (default: the store's latest)")
        ->type_name("REV");
    cmd->add_option("--keep", a->keep,
                    "Then delete the bucket's snapshots but the N of the highest revisions "
                    "(and the one published)")
        ->type_name("N");
    AddAccessFlags(cmd, &a->access);
    ctx.SetAction(cmd, [&ctx, a] { return RunPublishSnapshot(ctx, *a); });
  }
  {
    auto a = std::make_shared<CloneArgs>();
    CLI::App* cmd = ctx.AddCommand(
        app, "clone",
        "Make a new replica in DIR (which must not exist): the stream's newest snapshot, "
        "its SHA-256 checked, imported at its revision, then the stream's later revisions; "
        "bound like remote add. --as-of reads before the snapshot's revision are refused. "
        "With no snapshot published, the whole stream is replayed. All or nothing: built "
        "in DIR.clone-tmp-PID, renamed to DIR when complete.",
        "amem clone nats://a:4222,nats://b:4222 --stream team /var/lib/amem/team");
    cmd->add_option("SERVERS", a->servers, "nats://HOST:PORT[,nats://HOST:PORT...]")
        ->required();
    PathArgument(cmd->add_option("DIR", a->dir, "The new store's directory"))->required();
    cmd->add_option("--stream", a->stream, "The stream's name")->required()->type_name("NAME");
    cmd->add_option("--dimension", a->dimension,
                    "Vector dimension, for a stream that does not record it and has no "
                    "snapshot (default: the snapshot's, else the stream's, else 128)")
        ->type_name("N");
    AddBatchFlag(cmd, &a->batch);
    AddAccessFlags(cmd, &a->access);
    ctx.SetAction(cmd, [&ctx, a] { return RunClone(ctx, *a); });
  }
  {
    auto a = std::make_shared<VerifyReplicaArgs>();
    CLI::App* cmd = ctx.AddCommand(
        app, "verify-replica",
        "Compare the store's export digest at a revision with the one published for the "
        "bound stream (exit 1: they differ; 3: none published).",
        "amem verify-replica --at 1200 --publish");
    cmd->add_option("--at", a->at, "The revision (default: the store's latest)")
        ->type_name("REV");
    cmd->add_flag("--publish", a->publish,
                  "Publish the store's digest first when none is published for it");
    AddAccessFlags(cmd, &a->access);
    ctx.SetAction(cmd, [&ctx, a] { return RunVerifyReplica(ctx, *a); });
  }
}

}  // namespace amem::cli
