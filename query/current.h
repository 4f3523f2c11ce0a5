// The store's current snapshot (DESIGN.md §6): queries without --snapshot run on
// `<store dir>/current.amem`, re-exported only when the store has moved on.
//
// Files beside the LMDB environment:
//   current.amem   the snapshot of revision R
//   current.rev    "R\n", written after current.amem is in place
//   current.lock   flock()ed while one process checks and re-exports, so that
//                  concurrent queries export once and never record a revision
//                  that does not match the file
//   snapshots/rev-R.amem   snapshots of past revisions (--as-of / --at), cached;
//                  a past revision never changes. At most kMaxCachedSnapshots
//                  are kept: a use marks one as recent (its mtime), and adding
//                  one removes the least recently used beyond the limit, except
//                  any used in the last kSnapshotGraceSeconds (another process
//                  may be about to open it)
// Every file is streamed to a temporary name of its own, fsynced and renamed into
// place, so a reader never maps half a file.
#ifndef AMEM_QUERY_CURRENT_H_
#define AMEM_QUERY_CURRENT_H_

#include <cstddef>
#include <cstdint>
#include <string>

#include "common/status.h"
#include "store/store.h"

namespace amem::query {

inline constexpr size_t kMaxCachedSnapshots = 4;
inline constexpr int kSnapshotGraceSeconds = 10;

struct SnapshotFile {
  std::string path;
  uint64_t revision = 0;
  bool exported = false;  // this call wrote it
};

// The path of a snapshot of the store in `store_dir` as of `view` (latest by
// default), exporting it if it is missing or stale. NotFound if there is no store.
Result<SnapshotFile> EnsureSnapshot(const std::string& store_dir, const ReadView& view = {});
// Same with an already opened store.
Result<SnapshotFile> EnsureSnapshot(const Store& store, const ReadView& view = {});

}  // namespace amem::query

#endif  // AMEM_QUERY_CURRENT_H_
