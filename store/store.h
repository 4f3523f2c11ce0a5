// amem::Store — the LMDB-backed graph memory (docs/DESIGN.md §2-3, docs/STORE.md).
//
// A Store is one LMDB environment (a directory). Every committed write transaction
// gets the next revision (u64, from 1) and a commit timestamp; every read can be
// made on the latest state or as of a revision or a timestamp. Writes are
// append-first: an update moves the previous version to history, a delete writes a
// tombstone. Several processes may open and write one store at once.
//
// Thread safety: a Store may be used from several threads; each call runs in its
// own LMDB transaction. Records returned own their bytes. Stores opened on one
// directory in one process share its LMDB environment; never use a Store in a
// child after fork (open the directory again there).
#ifndef AMEM_STORE_STORE_H_
#define AMEM_STORE_STORE_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "common/model.h"
#include "common/status.h"

namespace amem {

struct StoreOptions {
  // Used only when the store is created; an existing store keeps its dimension.
  uint32_t dimension = kDefaultDimension;
  bool create_if_missing = true;
  // false: commits are not fsynced (MDB_NOSYNC). A crash may lose the latest commits
  // but never corrupts the store.
  bool durable = true;
  // true: MDB_WRITEMAP, for a process that writes large transactions (amem
  // ingest): dirty pages live in the file mapping, not in malloc'd copies that
  // the commit writes out, so a bulk write takes less memory and time. false (the
  // default): commits write their pages with pwrite and sync them alone, where
  // MDB_WRITEMAP would msync the whole map, so a durable single-operation commit
  // costs what its pages cost (docs/STORE.md §7). durable = false always maps
  // (nothing is synced). Processes may differ; the first open of a directory in
  // a process decides for that process.
  bool write_map = false;
  // Append JSON Lines telemetry events here (docs/DESIGN.md §3); empty: off.
  std::string telemetry_path;
  // Open for reads only (LMDB's MDB_RDONLY, docs/STORE.md §7): every write is
  // IOError ("... is open read-only ...; nothing was written"), nothing is created.
  bool read_only = false;
  // Open read-only by itself when the store cannot be opened for writing: a
  // read-only file system (EROFS) or no write permission (EACCES). A store that
  // does not exist is not created then (NotFound).
  bool read_only_if_needed = false;

  // Test hooks. TEST_key_hash replaces NodeIdForKey (to force id collisions);
  // TEST_map_size sets the initial LMDB map size in bytes (0: 1 GiB) to exercise
  // map growth.
  uint64_t (*TEST_key_hash)(std::string_view key) = nullptr;
  size_t TEST_map_size = 0;
};

// Where a read looks. Latest, or the state after the last commit at or before a
// revision or a timestamp. A view before the oldest kept history is NotFound-free:
// it is an InvalidArgument error naming the oldest readable revision. A revision
// after the latest one is InvalidArgument too; a time after the latest commit
// reads the latest state.
struct ReadView {
  enum class Kind : uint8_t { kLatest, kRevision, kTimestamp };
  Kind kind = Kind::kLatest;
  uint64_t revision = 0;
  int64_t timestamp = 0;

  static ReadView Latest() { return {}; }
  static ReadView AtRevision(uint64_t rev) { return {Kind::kRevision, rev, 0}; }
  static ReadView AtTime(int64_t ts) { return {Kind::kTimestamp, 0, ts}; }
};

// How far past the clock a write's ts (Unix seconds) may be: a day of clock skew
// between machines. A later ts is refused (InvalidArgument): one write stamped in
// milliseconds by mistake would otherwise move every later revision's commit time
// (which never goes back) into the far future.
inline constexpr int64_t kMaxFutureTsSeconds = 86400;

// Attribution for a write. Fields left empty/unset fall back to the batch's
// WriteOptions; ts falls back to the clock. Every ts must be at most
// kMaxFutureTsSeconds past the clock.
struct WriteOptions {
  std::optional<int64_t> ts;
  std::string run;
  std::string task;
  std::string scope;
  // Optimistic concurrency (docs/STORE.md §7): when set, the write happens only if
  // the store's latest revision is still this one when the write transaction
  // starts; otherwise the call returns Aborted and writes nothing. Read as of
  // revision R, build the batch from what you read, apply it with
  // expected_revision = R, and on Aborted read again and rebuild.
  std::optional<uint64_t> expected_revision;
};

struct NodeInput {
  std::string key;  // canonical key, 1..kMaxKeyBytes bytes of UTF-8
  NodeType type = NodeType::kEntity;
  std::string content;     // UTF-8, <= kMaxContentBytes
  std::string meta = "{}";  // JSON object whose values are all strings
  float confidence = 1.0f;  // finite, 0..1
  std::vector<float> vector;  // empty: none; else exactly dimension() finite floats
  // Per-operation overrides of WriteOptions (ingest lines may carry them).
  std::optional<int64_t> ts;
  std::optional<std::string> run, task, scope;
};

struct EdgeInput {
  std::string src;  // node keys; a node need not exist (counted and logged)
  std::string rel;  // built-in name, defined custom name, or decimal id
  std::string dst;
  float weight = 1.0f;         // finite
  std::string payload = "{}";  // any JSON value, <= kMaxPayloadBytes
  std::optional<int64_t> ts;
  std::optional<std::string> run, task;
};

struct KvInput {
  std::string scope, ns, key;  // 1..kMaxNameBytes each
  std::string value;           // <= kMaxKvValueBytes
  std::optional<int64_t> ts;
  std::optional<std::string> run, task;
};

// What an operation does (Batch::Op) or did (Change).
enum class OpKind : uint8_t {
  kPutNode, kDeleteNode, kPutEdge, kDeleteEdge, kPutKv, kDeleteKv, kDefineRelation
};

// Many operations applied in one transaction, all or nothing. Validation happens
// when the batch is applied; the first bad operation fails the whole batch with
// InvalidArgument naming its 0-based position in ops() ("op 17: ..."). Deleting
// an absent item is a no-op; a batch that changes nothing commits no revision.
class Batch {
 public:
  // One queued operation. The kind says which member of `input` is used:
  //   kPutNode: NodeInput          kDeleteNode: NodeInput (key only)
  //   kPutEdge: EdgeInput          kDeleteEdge: EdgeInput (src, rel, dst only)
  //   kPutKv: KvInput              kDeleteKv: KvInput (scope, ns, key only)
  //   kDefineRelation: EdgeInput whose `rel` is the name
  struct Op {
    using Kind = OpKind;
    Kind kind = Kind::kPutNode;
    std::variant<NodeInput, EdgeInput, KvInput> input;

    const NodeInput& node() const { return std::get<NodeInput>(input); }
    const EdgeInput& edge() const { return std::get<EdgeInput>(input); }
    const KvInput& kv() const { return std::get<KvInput>(input); }
  };

  Batch();
  ~Batch();
  Batch(Batch&&) noexcept;
  Batch& operator=(Batch&&) noexcept;
  // A copy of every operation (a stream that may be read again keeps its pieces).
  Batch(const Batch&);
  Batch& operator=(const Batch&);

  void PutNode(NodeInput node);
  void DeleteNode(std::string key);
  void PutEdge(EdgeInput edge);
  void DeleteEdge(std::string src, std::string rel, std::string dst);
  void PutKv(KvInput kv);
  void DeleteKv(std::string scope, std::string ns, std::string key);
  // Interns a custom relation (id >= 64) if it is not yet known; idempotent.
  // Edges may only use built-in or defined relations.
  void DefineRelation(std::string name);
  // The same with per-operation attribution: a delete names its item by the
  // identifying fields (node key; edge src, rel, dst; kv scope, ns, key) and takes
  // ts, run, task (and, for nodes, scope) from the input; a relation's name is the
  // edge's rel. Other fields are ignored.
  void DeleteNode(NodeInput node);
  void DeleteEdge(EdgeInput edge);
  void DeleteKv(KvInput kv);
  void DefineRelation(EdgeInput relation);

  size_t size() const;
  bool empty() const { return size() == 0; }
  // Removes the operations, keeping the room they took.
  void Clear();
  // Room for `n` operations without growing (in huge pages when it is large:
  // a piece of 65,536 operations takes ~20 MB, which growing by doubling would
  // first-touch twice, 4 KiB at a time).
  void Reserve(size_t n);
  // Moves `other`'s operations to the end of this batch, in order; `other` ends empty.
  void Append(Batch&& other);
  const std::vector<Op>& ops() const;

 private:
  std::vector<Op> ops_;
};

// The batches of one revision, delivered a piece at a time so that a large write
// (amem ingest of a big file) never holds all its operations in memory.
// Store::ApplyStream reads it inside its write transaction.
class BatchStream {
 public:
  virtual ~BatchStream() = default;
  // Starts again from the first piece: a transaction that must be rerun (the map
  // grew) reads the stream again.
  virtual Status Rewind() = 0;
  // Replaces *piece with the next operations; false when the stream has ended.
  // An error aborts the whole write.
  virtual Result<bool> Next(Batch* piece) = 0;
  // About how many bytes the stream's operations will add to the store, within a
  // factor of three (0: unknown). ApplyStream grows the map to hold three times
  // that before it starts, where a full map would rerun the whole write; a low
  // guess costs that rerun, and a map that cannot grow as much stays as it is.
  virtual uint64_t SizeHint() const { return 0; }

  // Work a stream that reads ahead on threads of its own (io::ReadAheadStream)
  // may do there on each piece, after reading it and before Next returns it:
  // ApplyStream sets it for the length of the call (validating and hashing the
  // piece's operations, which then leave its write thread) and unsets it (an
  // empty function) before it returns; a stream stops calling it before
  // SetPieceWork returns. PieceWorkResult is what the work made for the piece
  // Next returned last (null: none, and ApplyStream does it itself). The
  // default: no work.
  using PieceWork = std::function<std::shared_ptr<void>(const Batch&)>;
  virtual void SetPieceWork(PieceWork work) { (void)work; }
  virtual std::shared_ptr<void> PieceWorkResult() { return nullptr; }
};

struct NodeRecord {
  uint64_t id = 0;
  std::string key;
  NodeType type = NodeType::kEntity;
  std::string content;
  std::string meta = "{}";  // canonical JSON text (sorted keys, no spaces)
  float confidence = 1.0f;
  std::string scope, run, task;
  int64_t created_ts = 0;
  int64_t updated_ts = 0;
  uint64_t rev = 0;  // revision of the last write
  std::vector<float> vector;  // empty: none
};

struct EdgeRecord {
  uint64_t src = 0, dst = 0;  // node ids
  std::string src_key, dst_key;  // always filled, even when the node is missing
  RelationId rel = 0;
  std::string rel_name;
  float weight = 1.0f;
  std::string payload = "{}";  // canonical JSON text
  std::string run, task;
  int64_t created_ts = 0;
  int64_t updated_ts = 0;
  uint64_t rev = 0;
};

struct KvRecord {
  std::string scope, ns, key;
  std::string value;
  std::string run, task;
  int64_t ts = 0;
  uint64_t rev = 0;
  bool deleted = false;  // only in KvHistory: a delete
};

// One entry of diff_since: what a revision changed.
struct Change {
  using Kind = OpKind;
  uint64_t rev = 0;
  int64_t ts = 0;     // the revision's commit timestamp
  Kind kind = Kind::kPutNode;
  bool overwrite = false;  // a put that replaced a live version
  // kPutEdge only: the endpoint was not a live node when the edge was written.
  bool src_missing = false, dst_missing = false;
  // kPutNode/kDeleteNode: key. Edges: src_key, rel_name, dst_key. Kv: scope, ns, key.
  std::string key, src_key, rel_name, dst_key, scope, ns;
  std::string run, task;
};
const char* ChangeKindName(Change::Kind kind);

// One committed revision as the batch that re-creates it (Store::ReadHistory,
// `amem log`, docs/LOG.md): the revision's operations in commit order, each with
// its own ts, run and task (and scope, for nodes) set to what the store recorded.
// Applying `batch` with WriteOptions{.ts = ts} to the state as of rev - 1 writes
// the same records and the same change log entries. A put followed by a delete of
// the same item in one revision carries only what the delete kept (node type).
struct LoggedRevision {
  uint64_t rev = 0;
  int64_t ts = 0;  // commit timestamp
  Batch batch;
};

// Where an imported store's history starts (Store::ImportBase, Store::Base).
struct StoreBase {
  uint64_t rev = 0;  // 0: not imported
  int64_t ts = 0;
};

// What a store bound to an ordered log (docs/REPLICATION.md) runs around each of its
// own writes (Store::SetCommitHook). Every write that commits a revision (Apply and
// the calls built on it, ApplyStream; not ApplyRevisions, which applies revisions
// that are in the log already) calls `publish` inside its write transaction, after
// the revision is written and before it commits, with the revision as ReadHistory
// will give it. OK commits it. Aborted means the log has moved past this store:
// nothing is committed, `catch_up` runs outside any transaction (it applies the
// missing revisions with ApplyRevisions) and the write is tried again from its
// start, so it is validated against the newer state, up to `max_attempts` times.
// Any other error fails the write with it and nothing is committed. A revision
// `publish` accepted whose local commit then failed is not published again: the
// write fails, saying so, and the next catch_up applies it from the log. `active`,
// when set, is asked before each write: false writes locally, without the hook
// (a store that follows its binding file and is unbound at that moment).
struct CommitHook {
  std::function<Status(const LoggedRevision&)> publish;
  std::function<Status()> catch_up;
  std::function<bool()> active;
  int max_attempts = 64;
};

// The whole live state as of a view, for the snapshot exporter. Nodes are sorted by
// key; edges by (src_key, rel, dst_key); kv by (scope, ns, key). Edges whose
// endpoints are not live nodes are included (their keys are in the record).
struct StoreState {
  uint32_t dimension = kDefaultDimension;
  uint64_t revision = 0;  // the revision the view resolved to
  int64_t revision_ts = 0;
  std::vector<std::pair<RelationId, std::string>> relations;  // all known, by id
  std::vector<NodeRecord> nodes;
  std::vector<EdgeRecord> edges;
  std::vector<KvRecord> kv;
};

// The same state as views, for a caller that consumes it inside the read
// (Store::VisitState; the exporter). Every string_view, and vector_bytes, points
// into the read transaction's mapped pages (kv keys and relation names into
// storage the StoreStateView owns): valid only until the visitor returns. Never
// keep a view, or a copy of one, past that; copy what must outlive it.
struct NodeView {
  uint64_t id = 0;
  std::string_view key;
  NodeType type = NodeType::kEntity;
  std::string_view content;
  std::string_view meta = "{}";
  float confidence = 1.0f;
  std::string_view scope, run, task;
  int64_t created_ts = 0;
  int64_t updated_ts = 0;
  uint64_t rev = 0;
  // The vector as 4-byte little-endian floats, unaligned; empty: none.
  std::string_view vector_bytes;
};

struct EdgeView {
  uint64_t src = 0, dst = 0;
  std::string_view src_key, dst_key;
  RelationId rel = 0;
  std::string_view rel_name;
  float weight = 1.0f;
  std::string_view payload = "{}";
  std::string_view run, task;
  int64_t created_ts = 0;
  int64_t updated_ts = 0;
  uint64_t rev = 0;
  // The endpoints' positions in StoreStateView::nodes, when known:
  // nodes[src_node].key == src_key. kUnknownNode: not given (a dangling
  // endpoint, or a view not made by the store); look the key up.
  static constexpr uint32_t kUnknownNode = UINT32_MAX;
  uint32_t src_node = kUnknownNode, dst_node = kUnknownNode;
};

// An edge as VisitState gives it with VisitOptions::edge_refs: its value's bytes
// in the read transaction's pages, decoded on demand (DecodeEdgeRef), for a
// consumer that cannot afford an EdgeView per edge (the exporter: 160 bytes
// each, 480 MB at 3M edges, against 24 here). The value was checked when the
// state was read.
struct EdgeRef {
  const char* value = nullptr;
  uint32_t value_size = 0;
  // As EdgeView::src_node and dst_node.
  uint32_t src_node = EdgeView::kUnknownNode, dst_node = EdgeView::kUnknownNode;
  RelationId rel = 0;
};

// The edge's fields as an EdgeView, but for src, dst (the ids, 0 here) and
// rel_name (empty): what the record's value holds, and rel, src_node, dst_node.
EdgeView DecodeEdgeRef(const EdgeRef& ref);

struct KvView {
  std::string_view scope, ns, key;
  std::string_view value;
  std::string_view run, task;
  int64_t ts = 0;
  uint64_t rev = 0;
};

// StoreState's fields as views (see NodeView). Nodes are sorted by key and kv by
// (scope, ns, key), as in StoreState; edges come in the store's order, by (src
// id, rel, dst id): the edges of one source together, but not sorted by key.
struct StoreStateView {
  uint32_t dimension = kDefaultDimension;
  uint64_t revision = 0;
  int64_t revision_ts = 0;
  std::vector<std::pair<RelationId, std::string>> relations;  // all known, by id
  std::vector<NodeView> nodes;
  std::vector<EdgeView> edges;
  // Instead of `edges`, with VisitOptions::edge_refs (edges is then empty); same order.
  std::vector<EdgeRef> edge_refs;
  std::vector<KvView> kv;
  std::string arena;  // owned bytes some views point into (kv keys of a past view)
};

// Views of an owned state: they live as long as `state` is not changed.
StoreStateView ViewOf(const StoreState& state);

struct StoreStats {
  uint64_t revision = 0;
  int64_t revision_ts = 0;
  uint64_t oldest_readable_revision = 1;  // after history was dropped
  uint32_t dimension = kDefaultDimension;
  uint64_t live_nodes = 0, deleted_nodes = 0;
  uint64_t live_edges = 0, deleted_edges = 0;
  uint64_t kv_entries = 0;
  uint64_t history_entries = 0;
  uint64_t adjacency_entries = 0, dead_adjacency_entries = 0;
  uint64_t dangling_edges = 0;  // live edges with a missing endpoint
  uint64_t custom_relations = 0;
  uint64_t map_size = 0, used_bytes = 0;
  bool compaction_recommended = false;
  std::vector<std::string> warnings;
};

struct CompactOptions {
  bool dry_run = false;
  // Drop history before this revision (0: keep all). As-of reads before it then
  // fail with InvalidArgument.
  uint64_t drop_history_before = 0;
};

struct CompactReport {
  uint64_t lists_rewritten = 0;
  uint64_t adjacency_entries_removed = 0;
  uint64_t tombstones_removed = 0;
  uint64_t history_entries_removed = 0;
  bool dry_run = false;
  uint64_t oldest_readable_revision = 1;  // after this compaction
  std::vector<std::string> warnings;      // Stats().warnings afterwards
};

// The store format this build writes, and the oldest it reads (docs/STORE.md):
// a store of an older readable format is upgraded by its first write.
uint32_t StoreFormatVersion();
uint32_t OldestReadableStoreFormat();

// Errors. Every call returns a Status (or Result) and never throws. The classes:
//   InvalidArgument  bad input, named ("op K: field ..."); nothing was written
//   NotFound         the node, edge or kv entry (or the store) does not exist
//   Aborted          WriteOptions::expected_revision differs from the store's
//                    revision: another writer committed first; nothing was written
//   Corruption       a record, index or meta value is damaged (docs/STORE.md §6)
//   NotSupported     a store of a format this build cannot read
//   IOError          the file system failed (e.g. a full disk); the store stays at
//                    its last commit
// A write that fails, with any class, leaves the store exactly as it was.
class Store {
 public:
  // Opens (creating when allowed) the store in directory `dir`. Errors:
  // InvalidArgument for a dimension outside 1..kMaxDimension; NotFound when there
  // is no store at `dir` and options.create_if_missing is false (nothing is
  // created); NotSupported for a store format outside
  // OldestReadableStoreFormat()..StoreFormatVersion(); Corruption for a damaged
  // meta database; IOError when `dir` cannot be created or LMDB cannot open it.
  // Opening the same directory again in a process shares its environment.
  static Result<std::unique_ptr<Store>> Open(const std::string& dir,
                                             const StoreOptions& options = {});
  ~Store();
  Store(const Store&) = delete;
  Store& operator=(const Store&) = delete;

  // ---- writes: each is one transaction, returns the committed revision ----
  // Errors: InvalidArgument naming the first bad operation ("op K: ...": an
  // unknown relation or type, a field out of range, invalid UTF-8, a key id
  // collision, a ts more than a day ahead of the clock); Aborted when
  // options.expected_revision is set and differs from the store's revision;
  // IOError when the disk is full or the map cannot grow. Nothing is written on
  // any error.
  // An empty batch commits nothing and returns the current revision (Aborted when
  // options.expected_revision is set and differs from it).
  Result<uint64_t> Apply(const Batch& batch, const WriteOptions& options = {});
  // Applies every piece of `stream` as one revision in one write transaction, all
  // or nothing, with the result Apply would give for all the pieces as one batch.
  // A bad operation fails as "op K: ..." with K counted in the piece that held it
  // (the stream's last). Memory: one piece, plus per operation its change-log
  // entry and, for an edge, 32 bytes until the commit (docs/STORE.md §5).
  Result<uint64_t> ApplyStream(BatchStream* stream, const WriteOptions& options = {});
  Result<uint64_t> PutNode(NodeInput node, const WriteOptions& options = {});
  Result<uint64_t> DeleteNode(std::string_view key, const WriteOptions& options = {});
  Result<uint64_t> PutEdge(EdgeInput edge, const WriteOptions& options = {});
  Result<uint64_t> DeleteEdge(std::string_view src, std::string_view rel,
                              std::string_view dst, const WriteOptions& options = {});
  Result<uint64_t> PutKv(KvInput kv, const WriteOptions& options = {});
  // NotFound when there is no live entry to delete (as DeleteNode, DeleteEdge).
  Result<uint64_t> DeleteKv(std::string_view scope, std::string_view ns, std::string_view key,
                            const WriteOptions& options = {});

  // ---- reads: NotFound when absent or deleted as of the view ----
  Result<NodeRecord> GetNode(std::string_view key, const ReadView& view = {}) const;
  Result<NodeRecord> GetNodeById(uint64_t id, const ReadView& view = {}) const;
  // `arg` is a key, or 16 hex digits naming an id (a key wins if both exist).
  Result<NodeRecord> ResolveNode(std::string_view arg, const ReadView& view = {}) const;
  Result<EdgeRecord> GetEdge(std::string_view src, std::string_view rel,
                             std::string_view dst, const ReadView& view = {}) const;
  // Live edges leaving / entering a node (given by key), in (rel, other id) order;
  // `rel` empty: all relations. An unknown relation name is InvalidArgument.
  Result<std::vector<EdgeRecord>> Out(std::string_view key, std::string_view rel = {},
                                      const ReadView& view = {}) const;
  Result<std::vector<EdgeRecord>> In(std::string_view key, std::string_view rel = {},
                                     const ReadView& view = {}) const;

  Result<KvRecord> GetKv(std::string_view scope, std::string_view ns, std::string_view key,
                         const ReadView& view = {}) const;
  Result<std::vector<KvRecord>> ListKv(std::string_view scope, std::string_view ns,
                                       const ReadView& view = {}) const;
  // Every version, oldest first, deletes included.
  Result<std::vector<KvRecord>> KvHistory(std::string_view scope, std::string_view ns,
                                          std::string_view key) const;

  // diff_since: changes in revisions > rev (or with commit ts > ts), in order.
  Result<std::vector<Change>> ChangesSinceRevision(uint64_t rev) const;
  // The same changes one at a time, without holding them all: stops at the first
  // error fn returns, and returns it. When the read is retried (another process
  // grew the map), fn sees a prefix of the changes again: it must not mind.
  Status ForEachChangeSinceRevision(uint64_t rev,
                                    const std::function<Status(const Change&)>& fn) const;
  Result<std::vector<Change>> ChangesSinceTime(int64_t ts) const;

  // Calls fn for every revision in (since, until] in order (until 0 or past the
  // latest: up to the latest), all read in one read transaction; stops at the
  // first error fn returns. InvalidArgument when history
  // before since + 1 was compacted.
  Status ReadHistory(uint64_t since, uint64_t until,
                     const std::function<Status(const LoggedRevision&)>& fn) const;
  // Applies revisions that continue this store (the first is revision() + 1, each
  // the next) keeping their numbers and commit timestamps, all in one write
  // transaction: all or nothing. Each must re-create its revision exactly: every
  // operation changes something and commit timestamps never go back. Errors are
  // prefixed "revision R: " (then "op K: " as Apply); a revision that does not
  // continue the store is InvalidArgument. Returns the last revision.
  //
  // With `publish` (amem replay into a bound store), each revision is handed to it
  // after it is written, as ReadHistory will give it, and before the next; an error
  // fails the whole call and nothing is committed, though the revisions `publish`
  // accepted before stay wherever it put them (the log: catching up applies them).
  // The commit hook is never run (these revisions keep their numbers).
  Result<uint64_t> ApplyRevisions(
      const std::vector<LoggedRevision>& revisions,
      const std::function<Status(const LoggedRevision&)>& publish = nullptr);
  // Bootstraps an empty store (revision 0) as revision `rev` with commit time `ts`
  // (amem import, amem clone; docs/STORE.md §4.7 "base"): `batches` are applied in
  // order in one write transaction, every record they write getting revision
  // `rev`, and the store's history starts there. Views before `rev` and
  // ReadHistory/ChangesSinceRevision from before it are InvalidArgument ("the store
  // was imported from a snapshot of revision R; ..."); revision `rev` itself has
  // no changes in the log, so ReadHistory starts after it. Errors as Apply;
  // InvalidArgument for a store that is not empty. Returns `rev`.
  Result<uint64_t> ImportBase(const std::vector<Batch>& batches, uint64_t rev, int64_t ts);
  // The revision the store was imported at (0: its history starts at revision 1)
  // and that revision's commit time (0 when its log value was compacted away).
  Result<StoreBase> Base() const;
  // Runs `hook` around every later write of this Store object (CommitHook); null
  // removes it. Not for a write running at the same time.
  void SetCommitHook(std::shared_ptr<const CommitHook> hook);

  Result<StoreState> ReadState(const ReadView& view = {}) const;
  // ReadState without copying: calls fn once with the state as views into the
  // read transaction, which stays open (holding its pages, and the process's map
  // resize lock shared) until fn returns. The views die with it (StoreStateView).
  // Returns fn's error, if any.
  struct VisitOptions {
    // The edges as StoreStateView::edge_refs instead of EdgeViews.
    bool edge_refs = false;
  };
  Status VisitState(const ReadView& view,
                    const std::function<Status(const StoreStateView&)>& fn) const {
    return VisitState(view, VisitOptions(), [&fn](StoreStateView& state) { return fn(state); });
  }
  // The same; fn may free the state's vectors as it goes (the exporter), their
  // views' bytes staying valid until it returns.
  Status VisitState(const ReadView& view, const VisitOptions& options,
                    const std::function<Status(StoreStateView&)>& fn) const;
  Result<StoreStats> Stats() const;
  // Grows this process's map of the store now, so that `bytes` more can be
  // committed before it must grow again. LMDB grows a map only while no
  // transaction of the process is open, so a write that needs it waits for
  // every read of the process to end: a thread about to hold a long read (a
  // background merge's export) calls this first. Without MDB_WRITEMAP the map is
  // address space only. OK when the map is large enough already.
  Status ReserveMap(uint64_t bytes) const;
  // The warning Stats() gives when tombstones have accumulated past the threshold
  // (docs/STORE.md §5), from a counter kept in meta: O(1), for writers to check
  // after deleting. Empty when below it.
  Result<std::string> TombstoneWarning() const;
  Result<CompactReport> Compact(const CompactOptions& options = {});

  // Relation name <-> id, including custom ones. InvalidArgument if unknown.
  Result<RelationId> LookupRelation(std::string_view name_or_id) const;
  // The revision a view resolves to (0 for an empty store or a time before rev 1).
  Result<uint64_t> ResolveRevision(const ReadView& view) const;

  uint32_t dimension() const;
  // The latest committed revision (reads the store; 0 for a new store).
  Result<uint64_t> revision() const;
  // What identifies revision `rev` of this store's history (docs/STORE.md §4.6):
  // two stores, or one store before and after a restore from a backup or being
  // recreated, give the same value for `rev` only if they hold the same commit
  // there (so the same state at every revision up to it). Never 0. A revision
  // after the latest, or one whose log was compacted away, is InvalidArgument.
  Result<uint64_t> RevisionIdentity(uint64_t rev) const;
  // Whether the store was opened read-only (asked for, or fallen back to).
  bool read_only() const;
  const std::string& path() const;

  // The implementation (store/internal/store_rep.h), named here so that store/'s own
  // helpers can take it; opaque everywhere else.
  struct Rep;

 private:
  explicit Store(std::unique_ptr<Rep> rep);
  std::unique_ptr<Rep> rep_;
};

}  // namespace amem

#endif  // AMEM_STORE_STORE_H_
