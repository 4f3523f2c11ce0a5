// A store bound to an ordered, replicated log of its revisions (docs/REPLICATION.md):
// the binding kept in the store's directory, the revision log as an interface (the
// NATS JetStream implementation, tools/replication/, is linked into the amem
// executable only), catching up from the log, and the commit hook that publishes
// every local write to the log before it commits.
//
// A log message is one revision as `amem log` writes it (tools/cli/history_log.h),
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
#include "store/store.h"

namespace amem::cli {

// The binding, stored as `remote.json` in the store's directory (docs/STORE.md).
// Credentials and TLS files are never part of it (RemoteAccess).
struct RemoteBinding {
  std::vector<std::string> servers;  // nats://HOST:PORT, at least one
  std::string stream;                // [A-Za-z0-9_-], 1..64 bytes
  int replicas = 3;                  // asked for when the stream was created
  std::string subject() const { return "amem." + stream + ".rev"; }
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

struct LogInfo {
  uint64_t first_seq = 0, last_seq = 0;  // last_seq 0: empty
  int replicas = 0;
  bool created = false;  // by this Open
};

// The ordered log of one bound store.
class RevisionLog {
 public:
  virtual ~RevisionLog() = default;
  // Finds the stream (creating it with `replicas` when create is set). NotFound
  // when it does not exist and create is not set; InvalidArgument when it exists
  // but is not this binding's (another subject).
  virtual Result<LogInfo> Open(bool create) = 0;
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
};

using RevisionLogFactory = std::function<Result<std::unique_ptr<RevisionLog>>(
    const RemoteBinding&, const RemoteAccess&)>;
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

// Compares the store's history with the log's (each revision's record with the
// message of its sequence, up to the shorter of the two) and appends the store's
// revisions the log lacks. InvalidArgument naming the first that differs.
// Returns the number of revisions appended.
Result<uint64_t> ReconcileHistory(Store& store, RevisionLog& log, const std::string& stream);

// When `store_dir` holds a binding: sets the commit hook that publishes every write
// of `store` to the log first (CommitHook), connecting when the first write comes.
// Without a factory (an amem built without libnats) writes fail, saying why; reads
// work. A store that is not bound is left alone.
Status InstallReplication(const std::string& store_dir, Store* store);

}  // namespace amem::cli

#endif  // AMEM_TOOLS_CLI_REPLICATION_H_
