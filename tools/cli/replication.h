// A store bound to an ordered, replicated log of its revisions (docs/REPLICATION.md):
// the binding kept in the store's directory, the revision log as an interface (the
// NATS JetStream implementation, tools/replication/, is linked into the amem
// executable only), catching up from the log, and the commit hook that publishes
// every local write to the log before it commits.
//
// A log message is one revision as `amem log` writes it (tools/io/history_log.h),
// and message sequence N holds revision N: the log holds this store's revisions and
// nothing else.
#ifndef AMEM_TOOLS_CLI_REPLICATION_H_
#define AMEM_TOOLS_CLI_REPLICATION_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/status.h"
#include "snapshot/export.h"
#include "store/store.h"

namespace amem::cli {

// The binding, stored as `remote.json` in the store's directory (docs/STORE.md).
// Credentials and TLS files are never part of it (RemoteAccess).
struct RemoteBinding {
  std::vector<std::string> servers;  // nats://HOST:PORT, at least one
  std::string stream;                // [A-Za-z0-9_-], 1..64 bytes
  int replicas = 3;                  // asked for when the stream was created
  std::string subject() const { return "amem." + stream + ".rev"; }
  // The key-value bucket of export digests (amem verify-replica), beside the stream.
  std::string digest_bucket() const { return "amem-" + stream + "-digests"; }
  // The object store of published snapshots (amem publish-snapshot, amem clone):
  // the JetStream stream OBJ_<bucket>.
  std::string snapshot_bucket() const { return "amem-" + stream + "-snapshots"; }
};
inline constexpr char kRemoteFile[] = "remote.json";

// NotFound when the store is not bound; Corruption for a damaged file.
Result<RemoteBinding> ReadRemoteBinding(const std::string& store_dir);
Status WriteRemoteBinding(const std::string& store_dir, const RemoteBinding& binding);
// The binding as remote.json holds it (and `amem remote show --json` prints it).
nlohmann::ordered_json RemoteBindingJson(const RemoteBinding& binding);
Status RemoveRemoteBinding(const std::string& store_dir);
// Parses "nats://H:P[,nats://H:P...]" and checks the stream name.
Result<RemoteBinding> ParseRemote(const std::string& servers, const std::string& stream,
                                  int replicas);

// How to reach the servers: from flags, else the environment (AMEM_NATS_CREDS,
// AMEM_NATS_TLS_CA, AMEM_NATS_TLS_CERT, AMEM_NATS_TLS_KEY, AMEM_NATS_TIMEOUT_MS).
struct RemoteAccess {
  std::string creds, tls_ca, tls_cert, tls_key;
  int64_t timeout_ms = 5000;
};
RemoteAccess RemoteAccessFromEnv();

// One snapshot in the binding's snapshot_bucket(): the store's export at `rev`,
// named rev-<rev>-<sha256>, its bytes in `chunks` messages of at most
// kSnapshotChunkBytes.
struct PublishedSnapshot {
  std::string name;
  uint64_t rev = 0;
  int64_t rev_ts = 0;    // the revision's commit time
  uint64_t bytes = 0;
  uint32_t chunks = 0;
  std::string sha256;    // 64 lower-case hex digits
  std::string nuid;      // names the chunks' subject
};
inline constexpr size_t kSnapshotChunkBytes = 128 * 1024;
std::string SnapshotObjectName(uint64_t rev, const std::string& sha256);

struct LogInfo {
  uint64_t first_seq = 0, last_seq = 0;  // last_seq 0: empty
  int replicas = 0;
  bool created = false;  // by this Open
  // The vector dimension of the store whose revisions the log holds, as the log
  // recorded it when it was created (StreamDescription); 0: it records none.
  uint32_t dimension = 0;
};

// The setting a new replica needs that the revisions do not carry (the store's
// vector dimension), as a stream's description holds it: "amem revisions of a store
// of vector dimension N" (plain text: libnats 3.4 does not escape the description
// in the JSON it sends). ParseStreamDescription: N, 0 for any other text.
inline constexpr char kStreamDescriptionPrefix[] =
    "amem revisions of a store of vector dimension ";
std::string StreamDescription(uint32_t dimension);
uint32_t ParseStreamDescription(const std::string& description);

// The ordered log of one bound store.
class RevisionLog {
 public:
  virtual ~RevisionLog() = default;
  // Finds the stream (creating it with `replicas`, its description recording
  // `dimension`, when create is set). NotFound when it does not exist and create is
  // not set; InvalidArgument when it exists but is not this binding's (another
  // subject).
  virtual Result<LogInfo> Open(bool create, uint32_t dimension = 0) = 0;
  // The message at `seq`; NotFound past the end.
  virtual Result<std::string> Get(uint64_t seq) = 0;
  // Calls fn with each message from `from` to `to` (both included, to >= from) in
  // order, and returns the first error fn returns; errors of its own name the
  // sequence. This one asks Get for each; a log may fetch many per request.
  virtual Status Read(uint64_t from, uint64_t to,
                      const std::function<Status(uint64_t seq, std::string record)>& fn);
  // Appends `record` if the log's last sequence is `expected_last`; returns the
  // new message's sequence. Aborted when the log's last sequence differs.
  virtual Result<uint64_t> Append(uint64_t expected_last, const std::string& record) = 0;
  // Appends without waiting for each answer (many revisions: `remote add`'s
  // history, a replay into a bound store). AppendNext sends `record` as sequence
  // expected_last + 1, expecting its predecessor; WaitAppended waits for the
  // answers to every AppendNext since the last wait and sets *last to the highest
  // sequence of those the log accepted in order from the first (unchanged when
  // none). OK when all were; else the first refusal: Aborted when the log had
  // moved on, IOError otherwise (also when one later than a refused or unanswered
  // one was accepted: the log may hold any of them). AppendNext fails only when it
  // did not send `record` (stop sending, then WaitAppended answers for those sent
  // before it). This class: Append, one at a time.
  virtual Status AppendNext(uint64_t expected_last, const std::string& record);
  virtual Status WaitAppended(uint64_t* last);
  // Export digests in the binding's digest_bucket(), the revision in decimal as the
  // key. GetDigest: NotFound when none was published for `rev` (or there is no
  // bucket). PublishDigest: stores `value` for `rev` unless a value is there
  // already (creating the bucket when missing), and returns the value the bucket
  // then holds for `rev`: `value` (*created set), or the one published before.
  virtual Result<std::string> GetDigest(uint64_t rev) = 0;
  virtual Result<std::string> PublishDigest(uint64_t rev, const std::string& value,
                                            bool* created) = 0;
  // Snapshots in the binding's snapshot_bucket() (JetStream's object store layout).
  // PutSnapshot: stores the file as the export of revision `rev` (creating the
  // bucket when missing) unless one of `rev` is there (*created false, the one
  // there returned; InvalidArgument when its digest differs). NewestSnapshot: the
  // one of the highest revision; NotFound when none. FetchSnapshot: writes its
  // bytes to `path`; Corruption (the file removed) when their size or SHA-256 is
  // not the published one. This class: NotSupported.
  virtual Result<PublishedSnapshot> PutSnapshot(const std::string& path, uint64_t rev,
                                                int64_t rev_ts, bool* created);
  virtual Result<PublishedSnapshot> NewestSnapshot();
  virtual Status FetchSnapshot(const PublishedSnapshot& snapshot, const std::string& path);
  // Every snapshot in the bucket (any order; NotFound when there is no bucket), and
  // the removal of one: its description, then its chunks (purged from the stream).
  virtual Result<std::vector<PublishedSnapshot>> Snapshots();
  virtual Status DeleteSnapshot(const PublishedSnapshot& snapshot);

 private:
  // AppendNext's answers, for WaitAppended (this class's way).
  Status next_error_;
  uint64_t next_last_ = 0;
  bool next_any_ = false;
};

// Up to this many revisions (or kAppendWindowBytes of records) are sent before their
// answers are awaited (RevisionLog::AppendNext).
inline constexpr size_t kAppendWindow = 1000;
inline constexpr size_t kAppendWindowBytes = 8 << 20;

// Deletes the log's snapshots but the `keep` (>= 1) of the highest revisions and
// `published` (the one just published, kept even when older). Returns the deleted
// ones, highest revision first.
Result<std::vector<PublishedSnapshot>> PruneSnapshots(RevisionLog& log, size_t keep,
                                                      const std::string& published);

using RevisionLogFactory = std::function<Result<std::unique_ptr<RevisionLog>>(
    const RemoteBinding&, const RemoteAccess&)>;
// A test hook of amem clone (tests/replication/clone_test.sh): SIGKILLs the process
// when $AMEM_REPLICATION_TEST_CLONE_DIE is `stage` ("chunk:N" after the download's
// Nth chunk, "imported", "applied", "renamed").
void CloneTestDieAt(const std::string& stage);

// Set by the amem executable when it was built with libnats (tools/main.cc).
void SetRevisionLogFactory(RevisionLogFactory factory);
// Without a factory: NotSupported saying how to get one.
Result<std::unique_ptr<RevisionLog>> OpenRevisionLog(const RemoteBinding& binding,
                                                     const RemoteAccess& access);

// The record of one revision (its `amem log` lines), and back: InvalidArgument
// naming the sequence when the message is not exactly revision `seq`.
std::string RevisionRecord(const LoggedRevision& revision);
Result<LoggedRevision> ParseRevisionRecord(const std::string& stream, uint64_t seq,
                                           const std::string& record);

struct CatchUpReport {
  uint64_t from = 0, to = 0;  // the store's revision before and after
  uint64_t log_last = 0;
};

// Applies the log's revisions after the store's, read with RevisionLog::Read and
// applied in write transactions of up to `batch` revisions (or kCatchUpBatchBytes of
// records) each, so a store killed meanwhile holds a prefix of the log and resumes
// from it. Refuses (InvalidArgument, nothing applied) a store ahead of the log or whose
// latest revision differs from the log's message at that sequence. Stops at the
// first message that is not the next revision, naming its sequence; the ones
// before it stay applied.
inline constexpr size_t kCatchUpBatch = 1000;
inline constexpr size_t kCatchUpBatchBytes = 8 << 20;
Result<CatchUpReport> CatchUp(Store& store, RevisionLog& log, const std::string& stream,
                              size_t batch = kCatchUpBatch);

// Whether the store's latest revision `local` is the log's message `local`: its
// record, or for the base of an imported store (which has none, Store::Base) the
// commit time. InvalidArgument saying the store diverged when not.
Status CheckSameRevision(const Store& store, RevisionLog& log, const std::string& stream,
                         uint64_t local);

// Compares the store's history with the log's (each revision's record with the
// message of its sequence, up to the shorter of the two) and appends the store's
// revisions the log lacks. InvalidArgument naming the first that differs.
// Returns the number of revisions appended.
Result<uint64_t> ReconcileHistory(Store& store, RevisionLog& log, const std::string& stream);

// The digest of the store's export at one revision (`amem export --as-of R`, which
// is byte-deterministic): XXH3-64 of the file's bytes and its size. Published as
// the JSON {"rev":R,"xxh3":"<16 hex>","bytes":N}.
struct ExportDigest {
  uint64_t rev = 0;
  uint64_t bytes = 0;
  std::string xxh3;  // 16 lower-case hex digits
  bool operator==(const ExportDigest& o) const {
    return rev == o.rev && bytes == o.bytes && xxh3 == o.xxh3;
  }
  std::string ToJson() const;
  // InvalidArgument naming the bucket's key when `value` is not one.
  static Result<ExportDigest> Parse(const std::string& bucket, uint64_t rev,
                                    const std::string& value);
};
// Exports the store as of `rev` to a new file in the temporary directory, named in
// *path (set even on error; the caller removes it).
Result<snapshot::ExportResult> ExportRevisionToTemp(const Store& store, uint64_t rev,
                                                   const std::string& progress,
                                                   std::string* path);
// Exports the store as of `rev` to a temporary file and digests it (the file is
// removed). InvalidArgument when the store is not at `rev` yet.
Result<ExportDigest> LocalExportDigest(const Store& store, uint64_t rev);

struct ReplicaCheck {
  ExportDigest local, published;
  bool published_now = false;  // by this call (publish set, and none was there)
  bool equal() const { return local == published; }
};
// Compares the store's export digest at `rev` with the one published for it in the
// log's digest bucket; with `publish`, publishes the store's first when none is
// there (a digest already there is compared, never replaced). NotFound when none
// is published and `publish` is not set.
Result<ReplicaCheck> CheckReplica(const Store& store, RevisionLog& log,
                                  const RemoteBinding& binding, uint64_t rev, bool publish);

// Sets the commit hook that follows `store_dir`'s binding (CommitHook): before each
// write of `store` it looks at remote.json (one stat; read again when it changed),
// and while the store is bound every write is published to its log first,
// connecting when the first such write comes. So a long-lived handle (amem mcp, the
// Python module's Store) publishes from the first write after `amem remote add`,
// and writes locally again after `amem remote remove`. Without a factory (an amem
// built without libnats) writes on a bound store fail, saying why; reads work.
// Corruption when remote.json is damaged now; one damaged later fails the writes.
Status InstallReplication(const std::string& store_dir, Store* store);

// Applies a parsed log (amem replay, the Python module's Store.replay) to the store
// in `store_dir`; revisions keep their numbers and commit times.
//   - Not bound: Store::ApplyRevisions, all or nothing.
//   - Bound: the store first catches up from the log. The log's revisions that the
//     store has already are skipped when each is the same record (InvalidArgument
//     naming the first that differs), so running a replay again resumes it. The
//     rest are applied in one write transaction, each published to the log
//     (expected-last-sequence its predecessor) before the next is applied.
//     Revision numbers are kept, so a stream that moved past the store meanwhile
//     (another writer came first) stops the replay (InvalidArgument). On any
//     failure the store holds what the log holds: it catches up to the revisions
//     published before the failure, and the error says which.
struct ReplayReport {
  uint64_t rev = 0;        // the store's revision afterwards
  uint64_t skipped = 0;    // bound: the log's revisions the store had already
  uint64_t published = 0;  // bound: revisions appended to the log
  std::string stream;      // bound: the stream's name; empty when not bound
};
Result<ReplayReport> ReplayRevisions(Store& store, const std::string& store_dir,
                                     const std::vector<LoggedRevision>& revisions);

}  // namespace amem::cli

#endif  // AMEM_TOOLS_CLI_REPLICATION_H_
