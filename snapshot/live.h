// The store's live snapshot (docs/STORE.md §10): queries without --snapshot read
// the state of the store as a base snapshot plus a delta segment (docs/FORMAT.md
// §11), so a query right after a write costs O(changes since the base), not a
// re-export of the store; in a long-lived process (LiveCache, amem mcp) O(that
// write), the view being a stack of deltas over views it keeps.
//
// Files beside the LMDB environment:
//   current.amem   the base: a full snapshot of revision B
//   current.rev    "B ID FP\n" (ID: Store::RevisionIdentity(B), FP: the XXH3 of
//                  current.amem's checksum block, each in 16 hex digits), written
//                  after current.amem is in place; a record whose FP is not the
//                  file's (a kill between the two) is written again with a new base
//   current.amdl   the delta from B to the newest revision a query has seen; a
//                  cache (temp file + rename, not fsynced: a torn or stale one
//                  fails its checksum or base check and is compiled again)
//   current.lock   flock()ed: exclusively while the base is checked and
//                  re-exported, shared while a reader reads current.rev and maps
//                  current.amem, so the two always belong together
//   snapshots/rev-R-ID.amem   full snapshots of revisions older than the base
//                  (--as-of / --at), an LRU cache bounded in files and bytes
//                  (LiveOptions); a process that mapped an evicted file
//                  still reads it, and one that missed it exports it again
// The base is rebuilt (a full export) when the delta touches more records than
// LiveOptions::merge_fraction of the base's (never below merge_records) or is
// larger than merge_bytes, when the history since the base was compacted away, and
// on `amem compact`; amem mcp merges on a thread of its own (background_merge),
// and a CLI query in a process of its own that outlives the query (spawn_merge:
// `amem merge-base`, detached), answering from base + delta meanwhile. Either
// merge exports the new base to a temp file without the lock, then renames it into
// place and records it under the lock; merge.lock, flock()ed, lets one merge run
// per store, and a merge that finds the base at the latest revision does nothing.
// The foreground still merges when there is no base, when the history since it
// was compacted away, and when the delta is past four times its bound and past a
// 25th of the base's records (compiling it would cost more than the export). Full files are streamed
// to a temporary name of their own, fsynced and renamed into place.
#ifndef AMEM_SNAPSHOT_LIVE_H_
#define AMEM_SNAPSHOT_LIVE_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "common/status.h"
#include "snapshot/reader.h"
#include "store/store.h"

namespace amem::snapshot {

inline constexpr size_t kMaxCachedSnapshots = 4;
// The most levels in LiveCache's stack of views (see there).
inline constexpr size_t kMaxLiveLevels = 3;
inline constexpr uint64_t kMaxCachedSnapshotBytes = uint64_t{2} << 30;  // 2 GiB

struct LiveOptions {
  // Rebuild the base when the delta of the latest state touches more records
  // (DeltaSummary::records: nodes, edges, in-list entries, kv entries, the removed
  // ones included) than this fraction of the base's nodes + edges + kv entries, and
  // more than merge_records; or when its file is larger than merge_bytes. The
  // bound is on cost, not bytes: a delete of most of the store is a small file that
  // costs its every reader a compile of every record it names. A delta record
  // costs tens of export records to compile in a fresh process.
  double merge_fraction = 0.01;
  uint64_t merge_records = 1000;
  uint64_t merge_bytes = uint64_t{64} << 20;
  // The caps of LiveCache's stack of views, in records (DeltaSummary::records):
  // the top level's, and a middle level's (or an eighth of the level below it,
  // whichever is more).
  uint64_t top_level_records = 64;
  uint64_t mid_level_records = 512;
  // Merge on a thread of this process instead of in the query's foreground
  // (amem mcp, with write_delta_file off): a query that finds the delta past its
  // bound answers from the views it has (LiveCache) and starts the merge, one at a
  // time per store (merge.lock); a query after it finished reads the new base.
  bool background_merge = false;
  // Compile level 0 of LiveCache's stack again on a thread of its own (amem mcp):
  // once level 1 holds half its cap, the thread compiles the delta since the
  // base to the latest revision (extending level 0's compiler, which it takes
  // for the while), opens its view and hands it to prepare_level; the first call
  // after it finished takes that view as level 0 and compiles the writes since
  // over it. Level 1 then has no cap of its own (it grows past it while the
  // thread runs), so no call pays the O(records since the base) compile of level
  // 0 except one that finds no stack (the first write after a base).
  bool background_fold = false;
  // Merge in a process of its own instead of in the query's foreground (a CLI
  // query, a one-shot process): a query that finds the delta of the latest state
  // past its bound, and under four times it (or under a 25th of the base's
  // records, whichever is more), answers from base + delta (compiled,
  // and cached in current.amdl as usual) and calls spawn_merge(store directory),
  // which starts MergeBase() in a detached process and returns at once; one merge
  // runs at a time per store (merge.lock). A spawn that fails merges in the
  // foreground. Null (the default): the foreground merges.
  std::function<Status(const std::string& store_dir)> spawn_merge;
  // AMEM_FOREGROUND_MERGE=1: spawn_merge is never called (tests and benchmarks
  // that want the merge done when the query returns).
  bool foreground_merge = false;
  // Bounds of snapshots/ (past revisions older than the base).
  size_t max_cached_snapshots = kMaxCachedSnapshots;
  uint64_t max_cached_bytes = kMaxCachedSnapshotBytes;
  // Never layer: re-export the whole store whenever it moved on (the path before
  // delta segments; benchmarks compare against it).
  bool full_export = false;
  // Cache a compiled delta of the latest state in current.amdl for the next
  // process. amem mcp keeps its view in memory and turns this off: a file
  // operation per write is a cost on a busy disk that only other processes repay.
  bool write_delta_file = true;
  // Check the base's (or a past snapshot's) records whole when it is mapped
  // (ReadOptions::check_records): what a long-lived reader (amem mcp) wants, once
  // per base, so that its queries read the records at full speed. A one-shot
  // process (a CLI query) leaves it off and checks what it reads.
  bool check_records = false;
  // A background merge's first-use work, done on its thread before the new base
  // is handed to the queries (amem mcp): warm_base runs Reader::Warm() on it (the
  // lazy checks and the content decompressed, docs/FORMAT.md §9), and
  // prepare_base, when set, is called with the merge's own Store handle, the new
  // base and its revision, for the caller to build what it keeps per base (amem
  // mcp's search graph, tools/mcp/graph_view.h). A base that fails Warm() is not
  // handed over: the next query maps the file itself and finds the damage where it
  // reads it.
  bool warm_base = false;
  std::function<void(const Store& store, const std::shared_ptr<const Reader>& base,
                     uint64_t revision)>
      prepare_base;
  // The same for a level 0 compiled off the calls' path (the writes a background
  // merge's thread compiled over its new base, or a background fold's level 0):
  // called on that thread with its Store handle and the level's view (base +
  // delta), before the view is handed to the calls, for the caller to build what
  // it keeps per view level.
  std::function<void(const Store& store, const std::shared_ptr<const Reader>& level)>
      prepare_level;
  // Write the memory server's entity search block (docs/FORMAT.md §8.23) into
  // the bases and past snapshots this view exports. Off, they are what amem wrote
  // before the block, and amem mcp builds its search in memory (tests cover that
  // path this way).
  bool entity_search = true;
  // And its odd labels block (§8.24). Off, the bases are what amem wrote before
  // it, and amem mcp scans their entities for those labels.
  bool entity_labels = true;
  // What the progress line of an export this view makes is called (amem ingest
  // compiling the base after its commit names itself).
  std::string progress = "amem export";
};
// The defaults, overridden by the environment: AMEM_SNAPSHOT_CACHE_FILES,
// AMEM_SNAPSHOT_CACHE_BYTES, AMEM_MERGE_FRACTION, AMEM_MERGE_RECORDS,
// AMEM_MERGE_BYTES, AMEM_FULL_EXPORT=1, AMEM_FOREGROUND_MERGE=1. A malformed value is InvalidArgument naming it.
Result<LiveOptions> LiveOptionsFromEnv();

// A read view of the store: the base alone, or base + delta (Reader::layered()).
struct LiveView {
  std::shared_ptr<const Reader> reader;
  uint64_t revision = 0;
  uint64_t base_revision = 0;
  bool exported = false;  // this call wrote a full snapshot (base or past revision)
  bool compiled = false;  // this call compiled a delta
  bool merged = false;    // this call rebuilt the base: the delta passed its bound
  // Set when a cache file this view needed could not be written (a full disk, a
  // read-only file system or store) and the answer was built in memory instead:
  // what the CLI prints on stderr.
  std::string note;
};

class DeltaCompiler;  // snapshot/delta.h

// One level of a LiveCache's stack of views of the latest state: `view` is the
// level below (the base for level 0) plus a delta to `revision`, compiled by
// `compiler` (kept, so that extending the level to a later revision reads from the
// store only what changed since).
struct LiveLevel {
  std::shared_ptr<const Reader> view;
  uint64_t revision = 0;
  uint64_t history = 0;  // Store::RevisionIdentity(revision)
  uint64_t records = 0;  // the delta's DeltaSummary::records (against the level below)
  std::shared_ptr<DeltaCompiler> compiler;
};

// What a long-lived process (amem mcp) keeps between queries: the mapped base and
// the last view, reused while the store and the base file are unchanged, and what
// compiling the latest state's delta read from the store, so that the delta after
// the next write reads only what that write changed (DeltaCompiler).
//
// Without LiveOptions::write_delta_file the views of the latest state are a stack
// (`levels`, at most kMaxLiveLevels): level 0 is the base plus the delta since it,
// each higher level the level below plus the delta of the revisions since that
// level's head. A write is compiled into the top level while it stays under
// LiveOptions::top_level_records records, else it folds the levels above some
// level k into k (k's delta compiled again to the new head against the level
// below k), at most mid_level_records or an eighth of the level below for a
// middle level, the merge bound for level 0. So a view after a write costs O(the
// top level), a fold of level k comes once per cap of the level above it, and no
// write compiles the whole delta since the base more often than once per eighth
// of it. With LiveOptions::background_fold no call compiles it: level 0 is
// compiled again on a thread (`fold`) while the level above it fills.
struct BackgroundMerge;  // snapshot/live.cc
struct BackgroundFold;   // snapshot/live.cc

// Drops what it is given on a thread of its own. The last reference to a base
// unmaps it, and at 1M nodes that is 150 ms or more for its 670 MB of mapped
// pages (with its decompressed content freed): no call should wait for that. One
// thread at a time; the destructor waits for it.
class Retirer {
 public:
  Retirer() = default;
  ~Retirer();
  Retirer(const Retirer&) = delete;
  Retirer& operator=(const Retirer&) = delete;
  void Retire(std::shared_ptr<const void> what);

 private:
  std::mutex mu_;
  std::thread thread_;
};

class LiveCache {
 public:
  LiveCache();
  ~LiveCache();  // waits for a background merge or fold it started
  // Waits for the background merge this cache started, if one runs (tests); the
  // next OpenLive takes its base.
  void WaitForMerge();
  // Waits for the background fold this cache started, if one runs (tests); the
  // next OpenLive of the latest state takes its level 0.
  void WaitForFold();
  LiveCache(const LiveCache&) = delete;
  LiveCache& operator=(const LiveCache&) = delete;
  std::mutex mu;
  std::shared_ptr<const Reader> base;
  std::string base_identity;  // device, inode, size and mtime of the mapped file
  uint64_t base_revision = 0;
  uint64_t base_history = 0;  // Store::RevisionIdentity(base_revision)
  std::shared_ptr<const Reader> view;
  uint64_t view_revision = 0;
  uint64_t view_history = 0;  // Store::RevisionIdentity(view_revision)
  std::shared_ptr<DeltaCompiler> compiler;  // against `base`; dropped with it
  std::vector<LiveLevel> levels;  // the stack of the latest state's views; dropped with `base`
  // The merge running on a thread of its own (LiveOptions::background_merge), or null.
  std::unique_ptr<BackgroundMerge> merge;
  // Level 0 being compiled again on a thread of its own (LiveOptions::background_fold), or null.
  std::unique_ptr<BackgroundFold> fold;
  // The views of a base replaced by another go here.
  Retirer retirer;
  // The last whole file read instead (a revision older than the base, or
  // LiveOptions::full_export), while that file stays the same.
  std::string file_identity;
  std::shared_ptr<const Reader> file_reader;
};

// The store's state as of `view` (latest by default) as a Reader. Exports the base
// when there is none, compiles (and for the latest state caches) the delta since
// it, merges when the delta passed the threshold. `cache` may be null.
Result<LiveView> OpenLive(const Store& store, const ReadView& view, const LiveOptions& options,
                          LiveCache* cache = nullptr);

// One merge of the base in this thread: what the process a CLI query starts
// (LiveOptions::spawn_merge, `amem merge-base`) runs. Takes merge.lock without
// waiting and does nothing when another process holds it or when current.rev
// already names a sound base at the latest revision; else exports the latest
// state to a temp file of this process (what a process killed in the export left
// is removed by the next export or merge), renames it into place and records it
// under current.lock, unless a base at least as new got there first. Killed at any
// point it leaves a pair that answers right (docs/STORE.md §10). True when it put
// a new base in.
Result<bool> MergeBase(const Store& store, const LiveOptions& options);

// Prints view.note, if any, on stderr as "<who>: <note>".
void PrintNote(const LiveView& view, const std::string& who);
// After a Corruption from the live view of `store` (OpenLive's own, or the
// view's ContentStatus() once a query read it; `view` null when OpenLive failed):
// the cache files it came from are bad, and the store, which they only cache, can
// make them again. Removes current.amdl, and current.amem with current.rev when
// the base fails Reader::Verify() or the failing delta was not read from
// current.amdl (compiled here, or unknown); a whole file read for a past revision
// with a sound base: snapshots/rev-R.amem. Under the exclusive lock so that no
// reader pairs a new rev file with the old base; empties `cache`. The next OpenLive
// compiles (or exports) them again. Returns the files removed, for the caller to
// say on stderr ("" when none was there).
Result<std::string> DiscardLiveCache(const Store& store, const LiveView* view,
                                     LiveCache* cache = nullptr);
// True for a status DiscardLiveCache is the answer to: a Corruption.
inline bool IsLiveCacheCorruption(const Status& s) { return s.IsCorruption(); }

struct SnapshotFile {
  std::string path;
  uint64_t revision = 0;
  bool exported = false;  // this call wrote it
};

// A full snapshot file of the store in `store_dir` as of `view` (latest by
// default), exported if it is missing or stale: current.amem for the latest state,
// snapshots/rev-R.amem for a past one. NotFound if there is no store.
Result<SnapshotFile> EnsureSnapshot(const std::string& store_dir, const ReadView& view = {});
// Same with an already opened store.
Result<SnapshotFile> EnsureSnapshot(const Store& store, const ReadView& view = {},
                                    const LiveOptions& options = {});

}  // namespace amem::snapshot

#endif  // AMEM_SNAPSHOT_LIVE_H_
