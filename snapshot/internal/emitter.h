// Emitter: the writer's output stage. Stages small appends in one buffer, hashes
// every byte (for the checksum block; by pages too, for the page checksums block,
// when asked) and forwards the bytes to a ByteSink in
// large pieces, so the writer streams a file without ever holding it. With a
// background thread, the sink is called (and the bytes hashed) there while the
// writer lays out the next bytes: two buffers take turns. The bytes are the same.
// Internal to snapshot/.
#ifndef AMEM_SNAPSHOT_INTERNAL_EMITTER_H_
#define AMEM_SNAPSHOT_INTERNAL_EMITTER_H_

#include <condition_variable>
#include <cstdint>
#include <cstring>
#include <memory>
#include <mutex>
#include <string_view>
#include <thread>
#include <vector>

#include "common/coding.h"
#include "common/hash.h"
#include "common/status.h"
#include "snapshot/format.h"
#include "snapshot/writer.h"

namespace amem::snapshot {

class Emitter {
 public:
  // `background`: the sink is called from a thread of the Emitter's own, one
  // call at a time, in order.
  explicit Emitter(ByteSink* sink, bool background = false);
  ~Emitter();
  Emitter(const Emitter&) = delete;
  Emitter& operator=(const Emitter&) = delete;

  // Errors are sticky (leveldb's TableBuilder): the sink's first error is kept in
  // status() and later appends are dropped.
  void Append(std::string_view bytes) {
    if (bytes.size() <= kBufferSize - used_) {
      if (bytes.empty()) return;  // data() may be null, which memcpy must not see
      std::memcpy(buffer_.get() + used_, bytes.data(), bytes.size());
      used_ += bytes.size();
      offset_ += bytes.size();
    } else {
      AppendLarge(bytes);
    }
  }
  // Append() for bytes that stay valid and unchanged until Flush() or, when the
  // emitter is dropped without one (an error mid-stream), its destruction: in
  // background mode a big piece is handed to the thread without waiting for the
  // sink to take it, so the next bytes are laid out meanwhile.
  void AppendStable(std::string_view bytes);
  void AppendZeros(uint64_t n);
  void PutFixed32(uint32_t v) {
    char b[4];
    EncodeFixed32(b, v);
    Append(std::string_view(b, sizeof(b)));
  }
  void PutFixed64(uint64_t v) {
    char b[8];
    EncodeFixed64(b, v);
    Append(std::string_view(b, sizeof(b)));
  }

  // Block header (tag, padded length); EndBlock() pads the body to
  // kBlockAlignment. REQUIRES: exactly body_length bytes appended in between.
  void BeginBlock(BlockTag tag, uint64_t body_length);
  void EndBlock();

  uint64_t offset() const { return offset_; }  // bytes appended so far
  // XXH3-64 of every byte appended so far (flushes the staged bytes).
  uint64_t Digest();
  // Also hashes the bytes by pages of `page_size` (XXH3-64, seed 0, of each), from
  // offset 0. REQUIRES: nothing appended yet.
  void HashPages(uint32_t page_size);
  // The page hashes so far, the last partial page's included, and stops hashing
  // by pages (flushes the staged bytes).
  std::vector<uint64_t> TakePageHashes();
  // Hands the staged bytes to the sink and waits until it has them; returns
  // status().
  Status Flush();
  // The sink's first error; complete after Flush() or Digest().
  const Status& status() const { return status_; }

 private:
  static constexpr size_t kBufferSize = size_t{1} << 20;
  void AppendLarge(std::string_view bytes);
  void Drain();  // the staged bytes to the sink
  void Forward(std::string_view bytes);
  // Background mode: hands `bytes` to the thread once it is idle.
  void HandOff(std::string_view bytes);
  void WaitIdle();
  void Work();  // the background thread's loop
  void HashPagesOf(std::string_view bytes);

  ByteSink* sink_;
  std::unique_ptr<char[]> buffer_;
  std::unique_ptr<char[]> spare_;  // background mode: the buffer being written
  size_t used_ = 0;
  uint64_t offset_ = 0;
  uint64_t block_end_ = 0;  // where the open block's body ends
  Hasher64 hasher_;  // background mode: the thread's while busy_
  Status status_;    // likewise
  // HashPages: the finished pages' hashes and the bytes of the page being filled
  // (likewise the thread's while busy_).
  uint32_t page_size_ = 0;
  std::vector<uint64_t> page_hashes_;
  std::unique_ptr<char[]> page_;
  size_t page_fill_ = 0;
  // Background mode. busy_ holds from a hand-off until the sink has returned.
  std::thread thread_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::string_view pending_;
  bool busy_ = false;
  bool stop_ = false;
};

}  // namespace amem::snapshot

#endif  // AMEM_SNAPSHOT_INTERNAL_EMITTER_H_
