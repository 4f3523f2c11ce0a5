// snapshot::WriteSnapshot compiles a StoreState (or its views) into the bytes of an .amem file
// (docs/FORMAT.md) and streams them to a ByteSink; WriteFileAtomic puts them on disk
// so that no reader ever maps a half-written file. The output depends only on the
// logical state: the order of state.nodes / edges / kv does not matter, and the
// same state gives the same bytes on every machine (with the same liblz4 frame
// encoder).
#ifndef AMEM_SNAPSHOT_WRITER_H_
#define AMEM_SNAPSHOT_WRITER_H_

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include "common/files.h"
#include "common/status.h"
#include "store/store.h"

namespace amem::snapshot {

struct WriterOptions {
  bool term_index = true;  // TermIndex 0x05 and DocLengths 0x06
  bool extensions = true;  // amem blocks 0x10..0x1C (keys, ids, attributes, CSR, kv)
  bool embeddings = true;  // built-in embeddings 0x1D (with term_index only)
  // The memory server's entity search 0x07 (with extensions only), written when
  // the state holds an entity (a live `entity:` node; snapshot/entity_search.h).
  bool entity_search = true;
  // Its odd labels 0x08 (with entity_search only): the entities search_nodes
  // checks when no text of the file holds a query (docs/FORMAT.md §8.24).
  bool entity_labels = true;
  bool checksum = true;    // checksum block 0x1F
  // Page checksums block 0x1E (written with the checksum block only): what lets a
  // reader check each page it reads on first use (docs/FORMAT.md §8.22).
  bool page_checksums = true;
  bool compress = true;    // content as one LZ4 frame (flags bit 2); else stored raw
  // 2 or more: the term index is built on a second thread beside the rest of the
  // file. The bytes are the same for any count.
  uint32_t threads = 2;
};

// Receives a file's bytes once, in order.
class ByteSink {
 public:
  virtual ~ByteSink() = default;
  // Called once, before the first Append, with the exact number of bytes to come.
  virtual void Reserve(uint64_t total) {}
  virtual Status Append(std::string_view bytes) = 0;
};

// Appends to a string, growing it once to the size the writer announces.
class StringSink : public ByteSink {
 public:
  explicit StringSink(std::string* out) : out_(out) {}
  void Reserve(uint64_t total) override;
  Status Append(std::string_view bytes) override {
    out_->append(bytes);
    return Status::OK();
  }

 private:
  std::string* out_;
};

// Counts the bytes and keeps none (the writer's work without a file: benchmarks,
// and tests of how far a stream got).
class CountingSink : public ByteSink {
 public:
  Status Append(std::string_view bytes) override {
    bytes_ += bytes.size();
    return Status::OK();
  }
  uint64_t bytes() const { return bytes_; }

 private:
  uint64_t bytes_ = 0;
};

// What a written snapshot holds (the header's counts) and its size.
struct SnapshotSummary {
  uint32_t nodes = 0;  // stubs included
  uint32_t stubs = 0;
  uint32_t edges = 0;
  uint64_t bytes = 0;
};

// Streams the file to `sink`, never holding all of it in memory. InvalidArgument
// if the state cannot be written: a node type, relation, weight, confidence or
// vector that the model forbids, duplicate keys or edges, or a section beyond the
// format's 32-bit limits. Otherwise the first error of the sink, if any. All of
// these are found before anything reaches the sink but one: a vector's floats are
// checked for finiteness as they are copied, so on "vector not finite" part of
// the file may have reached the sink, and the caller must discard it (as
// WriteFileAtomic and BuildSnapshot do).
Result<SnapshotSummary> WriteSnapshot(const StoreStateView& state, const WriterOptions& options,
                                      ByteSink* sink);
// The same, freeing the state's node and edge vectors (nodes, edges, edge_refs)
// as soon as the writer has taken what it needs from them: at 1M nodes, 160 MB
// of NodeViews that would otherwise sit under the writer's own peak. The views'
// bytes must stay valid until it returns (Store::VisitState: the transaction).
Result<SnapshotSummary> WriteSnapshot(StoreStateView&& state, const WriterOptions& options,
                                      ByteSink* sink);
// The same for an owned state (through ViewOf).
Result<SnapshotSummary> WriteSnapshot(const StoreState& state, const WriterOptions& options,
                                      ByteSink* sink);

// The whole file in memory: WriteSnapshot into a string.
Result<std::string> BuildSnapshot(const StoreState& state, const WriterOptions& options = {});

// Writes a file to a temp file of its own (TempPathFor(path), created with
// O_EXCL), fsyncs it, renames it over `path` and fsyncs the directory. A crash at
// any point leaves either the old file or the new one; concurrent calls for one
// path never touch each other's temp file (the last rename wins). On failure the
// temp file is removed; a killed process leaves it behind (`<path>.tmp.*`).
// `produce` appends the bytes to the sink it is given; its error aborts the write.
// kCache skips both fsyncs: for derived files that are checked when read (a
// crash may leave the old file, the new one, or one that fails its check).
// (AtomicFile, common/files.h, does the work.)
Status WriteFileAtomic(const std::string& path, const std::function<Status(ByteSink*)>& produce,
                       Durability durability = Durability::kSynced);
// The same for bytes already in memory.
Status WriteFileAtomic(const std::string& path, std::string_view data,
                       Durability durability = Durability::kSynced);

}  // namespace amem::snapshot

#endif  // AMEM_SNAPSHOT_WRITER_H_
