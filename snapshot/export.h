// Export (store -> .amem) and import (.amem -> empty store): library functions the
// CLI wires to `amem export OUT [--as-of REV | --at TS]` and `amem import FILE`.
#ifndef AMEM_SNAPSHOT_EXPORT_H_
#define AMEM_SNAPSHOT_EXPORT_H_

#include <cstdint>
#include <optional>
#include <string>

#include "common/status.h"
#include "snapshot/writer.h"
#include "store/store.h"

namespace amem::snapshot {

struct ExportOptions {
  ReadView view;  // latest, or as of a revision / timestamp
  WriterOptions writer;
  // What the progress line (common/progress.h) is called.
  std::string progress = "amem export";
};

struct ExportResult {
  uint64_t revision = 0;  // the revision the view resolved to
  int64_t revision_ts = 0;
  uint32_t nodes = 0;  // stubs included
  uint32_t stubs = 0;
  uint32_t edges = 0;
  uint32_t kv = 0;
  uint64_t bytes = 0;  // file size
};

// Writes the store's state as of options.view to `path` atomically (a temp file
// of its own, fsync, rename, fsync of the directory; WriteFileAtomic): a crash
// leaves the previous file. First removes the temp files of `path` that a killed
// export left (RemoveStaleTempFilesOf: their process is gone).
Result<ExportResult> ExportSnapshot(const Store& store, const std::string& path,
                                    const ExportOptions& options = {});

struct ImportResult {
  uint64_t revision = 0;  // the store's revision after the import
  uint32_t nodes = 0;     // stubs are not imported (their edges stay dangling)
  uint32_t edges = 0;
  uint32_t kv = 0;
};

struct ImportOptions {
  // The revision the store is at after the import, the snapshot's (a replica's
  // base, amem clone); 1 when the file's source is not known.
  uint64_t revision = 1;
  // Its commit time; unset: the newest timestamp of the file's records, else (no
  // record has one) the file's Info newest_ts, 0: never the clock, so importing one
  // file twice gives the same store.
  std::optional<int64_t> revision_ts;
};

// Loads a verified snapshot into `store`, which must be empty (revision 0) and
// have the file's dimension. The file must carry amem's extension blocks (keys).
// Export -> import -> export gives identical bytes. The file holds no history:
// the import is one transaction that leaves the store at options.revision
// (Store::ImportBase), every record at its own created and updated times, and the
// store's history starting there (reads of earlier revisions are refused).
Result<ImportResult> ImportSnapshot(const std::string& path, Store* store,
                                   const ImportOptions& options = {});

}  // namespace amem::snapshot

#endif  // AMEM_SNAPSHOT_EXPORT_H_
