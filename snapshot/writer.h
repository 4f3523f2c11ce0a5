// snapshot::BuildSnapshot compiles a StoreState into the bytes of an .amem file
// (docs/FORMAT.md); WriteFileAtomic puts them on disk so that no reader ever maps a
// half-written file. The output depends only on the logical state: the order of
// state.nodes / edges / kv does not matter, and the same state gives the same bytes
// on every machine (with the same liblz4 frame encoder).
#ifndef AMEM_SNAPSHOT_WRITER_H_
#define AMEM_SNAPSHOT_WRITER_H_

#include <string>
#include <string_view>

#include "common/status.h"
#include "store/store.h"

namespace amem::snapshot {

struct WriterOptions {
  bool term_index = true;  // TermIndex 0x05 and DocLengths 0x06
  bool extensions = true;  // amem blocks 0x10..0x1C (keys, ids, attributes, CSR, kv)
  bool checksum = true;    // checksum block 0x1F
  bool compress = true;    // content as one LZ4 frame (flags bit 2); else stored raw
};

// InvalidArgument if the state cannot be written: a node type, relation, weight,
// confidence or vector that the model forbids, duplicate keys or edges, or a
// section beyond the format's 32-bit limits.
Result<std::string> BuildSnapshot(const StoreState& state, const WriterOptions& options = {});

// Writes `data` to a temp file of its own (TempPathFor(path), created with
// O_EXCL), fsyncs it, renames it over `path` and fsyncs the directory. A crash at
// any point leaves either the old file or the new one; concurrent calls for one
// path never touch each other's temp file (the last rename wins). On failure the
// temp file is removed; a killed process leaves it behind (`<path>.tmp.*`).
Status WriteFileAtomic(const std::string& path, std::string_view data);

// "<path>.tmp.<pid>.<16 hex digits>": a fresh temp name next to `path`.
inline constexpr char kTempInfix[] = ".tmp.";
std::string TempPathFor(const std::string& path);

}  // namespace amem::snapshot

#endif  // AMEM_SNAPSHOT_WRITER_H_
