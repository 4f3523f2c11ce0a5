// Store::Rep and the helpers shared by store.cc (open, reads), apply.cc (writes)
// and maintenance.cc (stats, compaction). Internal to store/.
#ifndef AMEM_STORE_INTERNAL_STORE_REP_H_
#define AMEM_STORE_INTERNAL_STORE_REP_H_

#include <algorithm>
#include <atomic>
#include <functional>
#include <memory>
#include <shared_mutex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/hash.h"
#include "store/internal/lmdb_env.h"
#include "store/internal/records.h"
#include "store/store.h"
#include "store/internal/telemetry.h"

namespace amem {

namespace store_internal {

// meta keys (STORE.md §4.7).
inline constexpr std::string_view kMetaFormat = "format";
inline constexpr std::string_view kMetaDimension = "dimension";
inline constexpr std::string_view kMetaRevision = "rev";
inline constexpr std::string_view kMetaRevisionTs = "rev_ts";
inline constexpr std::string_view kMetaFloor = "floor";
inline constexpr std::string_view kMetaNextRelation = "next_rel";
inline constexpr std::string_view kMetaRelationById = "rel:";      // + id byte
inline constexpr std::string_view kMetaRelationByName = "relname:";  // + name
inline constexpr std::string_view kMetaTombstones = "tombstones";  // node + edge tombstones
inline constexpr std::string_view kMetaBase = "base";  // imported at this revision (§4.7)
// The format this build writes, and the oldest it reads. Format 1 logged every
// field of every entry (STORE.md §4.5); a format-1 store is upgraded in place by
// its first write, after which older builds refuse it.
inline constexpr uint32_t kStoreFormatVersion = 2;
inline constexpr uint32_t kOldestReadableStoreFormat = 1;

// Compaction thresholds (STORE.md §5).
inline constexpr uint64_t kCompactListMinDead = 64;  // rewrite a list with this many
inline constexpr double kCompactListDeadRatio = 0.25;  // ... or this share dead
inline constexpr uint64_t kWarnMinTombstones = 100;
inline constexpr double kWarnTombstoneRatio = 0.2;

// The tombstone-accumulation warning (STORE.md §5) for `tombstones` node and edge
// tombstones among `records` node and edge records; empty below the threshold.
std::string TombstoneWarningText(uint64_t tombstones, uint64_t records);
// Node and edge tombstones: meta "tombstones", or counted (a scan of n and e) in a
// store written before that counter existed.
Status CountTombstones(MDB_txn* txn, const Dbs& dbs, uint64_t* tombstones);
// Adds `delta` to meta "tombstones" in a write transaction (writing the counted
// total, after this transaction's writes, when the key is absent).
Status AddTombstones(MDB_txn* txn, const Dbs& dbs, int64_t delta);

// The first revision > `since` whose changes the store holds is since + 1 unless
// history before it is gone: compacted (meta floor F: revisions >= F are kept) or
// never here (meta base B, a store imported at B: revisions > B). OK when the
// changes after `since` are all here, else InvalidArgument starting with
// HistoryGoneText and ending with `what`.
Status CheckHistorySince(MDB_txn* txn, const Dbs& dbs, uint64_t since, const std::string& what);
// "history before revision F was compacted", or for an imported store "the store
// was imported from a snapshot of revision B; history before it is not in this
// store" (STORE.md §4.7).
std::string HistoryGoneText(MDB_txn* txn, const Dbs& dbs);

// A resolved ReadView.
struct At {
  uint64_t rev = 0;
  bool latest = true;
  bool Sees(uint64_t version_rev) const { return latest || version_rev <= rev; }
};

uint64_t GetMetaU64(MDB_txn* txn, const Dbs& dbs, std::string_view key, uint64_t dflt);
void PutMetaU64(MDB_txn* txn, const Dbs& dbs, std::string_view key, uint64_t v);

// The version of one entity visible at `at`: the current record in `main` if it
// is visible, else the hist entry that was live then. false: none (not yet
// created, or removed). *value lives until the txn ends or writes.
Status VersionAt(MDB_txn* txn, const Dbs& dbs, MDB_dbi main, char tag,
                 std::string_view entity, const At& at, std::string_view* value,
                 bool* found);

// Decodes the log value (STORE.md §4.5) of revision `rev`: *ts gets its commit
// timestamp, then fn(entry, rel_name) is called for each entry in order. rel_name
// is an edge's relation name (from the entry, or by id through `names`, a cache
// indexed by id that callers keep across revisions), empty for other kinds.
Status DecodeLogValue(MDB_txn* txn, const Dbs& dbs, uint64_t rev, std::string_view value,
                      int64_t* ts, std::vector<std::string>* names,
                      const std::function<Status(const LogEntry&, const std::string&)>& fn);

// Relation name or decimal id -> id; InvalidArgument naming it if unknown.
Result<RelationId> LookupRelationTxn(MDB_txn* txn, const Dbs& dbs, std::string_view name);
// Name of a known id; Corruption if an edge uses an id the table lacks.
Result<std::string> RelationNameTxn(MDB_txn* txn, const Dbs& dbs, RelationId id);

Status UnknownRelation(std::string_view name);

// Views of decoded values (they live as long as the values' bytes), and the
// records as returned by the API, from views or from decoded values.
NodeView ToNodeView(uint64_t id, const NodeValue& v);
EdgeView ToEdgeView(uint64_t src, RelationId rel, uint64_t dst, std::string_view rel_name,
                    const EdgeValue& v);
NodeRecord ToNodeRecord(const NodeView& v);
EdgeRecord ToEdgeRecord(const EdgeView& v);
KvRecord ToKvRecord(const KvView& v);
NodeRecord ToNodeRecord(uint64_t id, const NodeValue& v);
EdgeRecord ToEdgeRecord(std::string_view edge_key, std::string rel_name, const EdgeValue& v);
KvRecord ToKvRecord(std::string_view kv_key, const KvValue& v);

// Calls fn(entity_key, value) for every entity of `main` whose key starts with
// `prefix`, with the version visible at `at`, in key order; tombstones included
// (fn checks), entities without a version at `at` skipped. Latest views scan
// `main`; older views also consult the hist section `tag`.
template <typename Fn>
Status ForEachAt(MDB_txn* txn, const Dbs& dbs, MDB_dbi main, char tag,
                 std::string_view prefix, const At& at, Fn&& fn);

// Relation id -> name for every relation known at `at`, built-in and custom
// (a past view scans the log after at.rev for later definitions, STORE.md §4.7).
Status LoadRelations(MDB_txn* txn, const Dbs& dbs, const At& at,
                     std::vector<std::pair<RelationId, std::string>>* out);

template <typename Fn>
Status ForEachAt(MDB_txn* txn, const Dbs& dbs, MDB_dbi main, char tag,
                 std::string_view prefix, const At& at, Fn&& fn) {
  auto has_prefix = [&](std::string_view k, size_t skip) {
    return k.size() >= skip + prefix.size() && k.substr(skip, prefix.size()) == prefix;
  };
  auto seek = [&](Cursor& c, std::string_view start) {
    return start.empty() ? c.First() : c.SeekRange(start);
  };
  if (at.latest) {
    Cursor c(txn, main);
    for (bool ok = seek(c, prefix); ok && has_prefix(c.key(), 0); ok = c.Next()) {
      AMEM_RETURN_IF_ERROR(fn(c.key(), c.value()));
    }
    return Status::OK();
  }
  std::vector<std::string> entities;
  {
    Cursor c(txn, main);
    for (bool ok = seek(c, prefix); ok && has_prefix(c.key(), 0); ok = c.Next()) {
      entities.emplace_back(c.key());
    }
  }
  size_t from_main = entities.size();
  {
    std::string start(1, tag);
    start.append(prefix);
    Cursor c(txn, dbs.hist);
    for (bool ok = c.SeekRange(start); ok && !c.key().empty() && c.key()[0] == tag &&
                                       has_prefix(c.key(), 1);
         ok = c.Next()) {
      if (c.key().size() < 1 + kRevSuffixSize) {
        return Status::Corruption("hist key too short");
      }
      std::string_view entity = c.key().substr(1, c.key().size() - 1 - kRevSuffixSize);
      if (entities.size() > from_main && entities.back() == entity) continue;
      entities.emplace_back(entity);
    }
  }
  std::inplace_merge(entities.begin(), entities.begin() + from_main, entities.end());
  entities.erase(std::unique(entities.begin(), entities.end()), entities.end());
  for (const std::string& entity : entities) {
    std::string_view value;
    bool found = false;
    AMEM_RETURN_IF_ERROR(VersionAt(txn, dbs, main, tag, entity, at, &value, &found));
    if (found) AMEM_RETURN_IF_ERROR(fn(entity, value));
  }
  return Status::OK();
}

// One LMDB environment per directory per process: LMDB forbids opening an
// environment twice in one process (closing either would drop the other's
// locks), so Stores opened on the same directory share it. Never shared across
// fork: a child opening the directory gets its own.
struct SharedEnv {
  lmdb::env env{nullptr};
  Dbs dbs;
  uint32_t dimension = kDefaultDimension;
  int pid = 0;
  // Opened with MDB_RDONLY (StoreOptions::read_only, or fallen back to): Run
  // refuses write transactions before asking LMDB.
  bool read_only = false;
  // Held shared by every transaction, exclusively while the map is resized:
  // mdb_env_set_mapsize needs no transaction active in this process.
  std::shared_mutex resize_mu;
  // Bytes of the data file known to be allocated on disk (ReserveDisk).
  std::atomic<uint64_t> reserved{0};
  // The end of the zeros this process wrote past the used size (ZeroAhead), and
  // whether it gave up on them (a filesystem that cannot, a failed write).
  std::atomic<uint64_t> zeroed{0};
  std::atomic<bool> zero_ahead_off{false};
};

// With MDB_WRITEMAP the data file is a sparse file the size of the map and a write
// transaction stores its new pages straight into the mapping: on a full disk the
// first store into a hole raises SIGBUS, killing the process. So before a write,
// the pages it may take (the used size, plus `hint` bytes, plus a quarter of the
// used size and at least 4 MiB of headroom) are allocated for real with
// posix_fallocate. A full disk then fails here, as IOError, before anything is
// written. Cheap when nothing new is needed (one env_info).
Status ReserveDisk(SharedEnv* shared, uint64_t hint);
// A durable commit's fdatasync also writes the file's metadata (the extent map)
// when its pages are the first data written into their blocks: posix_fallocate leaves blocks
// unwritten (ext4, xfs), and the first write into one converts it. Single-operation
// commits mostly write new pages just past the used size, so each would pay that.
// Called by a write transaction before it writes anything: when fewer than
// kZeroAheadLow bytes past the used size have been written (by this process),
// writes zeros up to kZeroAhead past it (within the reserved, allocated part and
// the map), with O_DIRECT, so that they neither wait in the page cache for a
// commit's fdatasync nor leave large folios there for the commits' 4 KiB writes.
// Those pages belong to no revision and only the writer, which holds the lock,
// touches them; this transaction's own pages overwrite the zeros. (O_DIRECT
// assumes that nothing writes the data file but LMDB's writer: a page dirtied
// in the page cache during the direct write would fail the next fdatasync.)
// Best effort: a failure turns it off for the process, leaving the commits as
// they were. Only for durable stores (without MDB_NOSYNC or MDB_WRITEMAP) on
// ext4 and xfs (ZeroAheadFilesystem), where it was measured.
inline constexpr uint64_t kZeroAhead = uint64_t{4} << 20;
inline constexpr uint64_t kZeroAheadLow = uint64_t{2} << 20;
void ZeroAhead(SharedEnv* shared);
// Whether the file `fd` is on a filesystem ZeroAhead writes zeros on (ext4, xfs).
bool ZeroAheadFilesystem(int fd);
// The parts of [from, to) of the file `fd` that the filesystem has never written
// (holes and unwritten extents, FIEMAP), in order, adjacent ones merged; false
// when the filesystem cannot say.
bool UnwrittenRanges(int fd, uint64_t from, uint64_t to,
                     std::vector<std::pair<uint64_t, uint64_t>>* ranges);
// The data file's used size (the last commit's pages) and the map's size; false
// when LMDB cannot say.
bool EnvSize(MDB_env* env, uint64_t* used, uint64_t* map_size);
// The `hint` for a batch: its values about three times over (record, change log,
// indexes) plus 1 KiB of B-tree overhead per operation.
uint64_t DiskReserveFor(const Batch& batch);

// The revision `rev` as ReadHistory gives it, read inside `txn` (history.cc).
Status ReadLoggedRevision(const Store::Rep& rep, MDB_txn* txn, uint64_t rev,
                          LoggedRevision* out);

}  // namespace store_internal

struct Store::Rep {
  std::string path;
  StoreOptions options;
  std::shared_ptr<store_internal::SharedEnv> shared;
  store_internal::Dbs dbs;  // copies of shared's: dbi handles are env-wide
  uint32_t dimension = kDefaultDimension;
  store_internal::Telemetry telemetry{""};
  std::shared_ptr<const CommitHook> commit_hook;  // Store::SetCommitHook

  // Runs write(published) -> Status, the whole of one write, under commit_hook:
  // again after catch_up while the hook's publish says Aborted. `write` calls
  // published(rev) inside its transaction once the revision is written; without
  // a hook that is a no-op.
  using PublishFn = std::function<Status(MDB_txn*, uint64_t)>;
  Status WriteHooked(const std::function<Status(const PublishFn&)>& write);

  MDB_env* env() const { return shared->env.handle(); }

  uint64_t HashKey(std::string_view key) const {
    return options.TEST_key_hash ? options.TEST_key_hash(key) : NodeIdForKey(key);
  }

  // Runs fn(MDB_txn*) -> Status in a write (or read) transaction, committing a
  // write when fn returns OK. MDB_MAP_FULL grows the map and reruns fn;
  // MDB_MAP_RESIZED adopts another process's size and reruns it. Any other
  // lmdb::error becomes a Status.
  // `reserve`: bytes the write may add to the data file beyond the default
  // headroom (ReserveDisk), e.g. a batch's payload.
  template <typename Fn>
  Status Write(Fn&& fn, bool commit = true, uint64_t reserve = 0);
  template <typename Fn>
  Status Read(Fn&& fn) const;
  // Grows the map, in steps of its current size, until the used size plus
  // `bytes` fits (no-op when it does): a write that fills the map is rerun from
  // its start, which for one large transaction (ApplyStream) repeats most of its
  // work. Advisory: when the address space or (MDB_WRITEMAP) the file's length
  // cannot be had, the map stays as it is. The map is address space (with
  // MDB_WRITEMAP, a sparse file's size); disk is reserved as the write goes
  // (ReserveDisk).
  Status GrowMapFor(uint64_t bytes) const;

  // ReadView -> revision; InvalidArgument for the future or compacted history.
  Status Resolve(MDB_txn* txn, const ReadView& view, store_internal::At* at) const;

  // The write path (apply.cc). *effective counts the operations that changed
  // something (deleting an absent item does not); 0 commits no revision. With
  // `outer`, the batch is written inside that write transaction (ApplyRevisions),
  // which the caller commits, and no telemetry is sent.
  Result<uint64_t> Apply(const Batch& batch, const WriteOptions& options, size_t* effective,
                         MDB_txn* outer = nullptr);
  // Applies a batch of one delete; NotFound naming `what` when there was nothing
  // live to delete (Store::DeleteNode, DeleteEdge, DeleteKv).
  Result<uint64_t> ApplyDelete(const Batch& batch, const WriteOptions& options,
                               const std::string& what);

  // Sends events for reads (op "read" or "query"), attributed to the record read
  // (scope, run, task) where there is one; no-op when telemetry is off.
  void ReadEvent(std::string_view op, uint64_t memory_id, std::string_view type,
                 std::string_view scope = {}, std::string_view run = {},
                 std::string_view task = {}) const;

 private:
  enum class Retry { kNone, kGrow, kAdopt };
  template <typename Fn>
  Status Run(unsigned flags, bool commit, uint64_t reserve, Fn&& fn) const;
  Status Remap(Retry why) const;
};

template <typename Fn>
Status Store::Rep::Run(unsigned flags, bool commit, uint64_t reserve, Fn&& fn) const {
  for (;;) {
    Retry retry = Retry::kNone;
    {
      std::shared_lock lock(shared->resize_mu);
      if (!(flags & MDB_RDONLY) && (shared->read_only || options.read_only)) {
        return Status::IOError("the store at " + path +
                                    " is open read-only (a read-only file system, no write "
                                    "permission, or --read-only); nothing was written");
      }
      if (!(flags & MDB_RDONLY)) {
        AMEM_RETURN_IF_ERROR(store_internal::ReserveDisk(shared.get(), reserve));
      }
      try {
        auto txn = store_internal::Txn::Begin(env(), flags);
        if (!(flags & MDB_RDONLY)) store_internal::ZeroAhead(shared.get());
        Status s = fn(txn.handle());
        if (!s.ok()) return s;
        if (commit) txn.commit();
        return Status::OK();
      } catch (const lmdb::map_full_error&) {
        retry = Retry::kGrow;
      } catch (const lmdb::error& e) {
        if (e.code() != MDB_MAP_RESIZED) return store_internal::FromLmdb(e);
        retry = Retry::kAdopt;
      }
    }
    AMEM_RETURN_IF_ERROR(Remap(retry));
  }
}

template <typename Fn>
Status Store::Rep::Write(Fn&& fn, bool commit, uint64_t reserve) {
  return Run(0, commit, reserve, std::forward<Fn>(fn));
}

template <typename Fn>
Status Store::Rep::Read(Fn&& fn) const {
  return Run(MDB_RDONLY, true, 0, std::forward<Fn>(fn));
}

}  // namespace amem

#endif  // AMEM_STORE_INTERNAL_STORE_REP_H_
