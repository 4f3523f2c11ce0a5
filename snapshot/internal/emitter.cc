#include "snapshot/internal/emitter.h"

#include <algorithm>
#include <cassert>

namespace amem::snapshot {

Emitter::Emitter(ByteSink* sink, bool background)
    : sink_(sink), buffer_(new char[kBufferSize]) {
  if (background) {
    spare_.reset(new char[kBufferSize]);
    thread_ = std::thread([this] { Work(); });
  }
}

Emitter::~Emitter() {
  if (!thread_.joinable()) return;
  {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [this] { return !busy_; });
    stop_ = true;
  }
  cv_.notify_all();
  thread_.join();
}

void Emitter::AppendLarge(std::string_view bytes) {
  // Big pieces (the content frame, the postings) go to the sink as they are,
  // without a copy through the buffer. In background mode the call waits until
  // the sink has them: the caller may free them as soon as it returns.
  Drain();
  if (bytes.size() >= kBufferSize / 2) {
    if (thread_.joinable()) {
      HandOff(bytes);
      WaitIdle();
    } else {
      Forward(bytes);
    }
  } else {
    std::memcpy(buffer_.get(), bytes.data(), bytes.size());
    used_ = bytes.size();
  }
  offset_ += bytes.size();
}

void Emitter::AppendStable(std::string_view bytes) {
  if (!thread_.joinable() || bytes.size() < kBufferSize / 2) {
    Append(bytes);
    return;
  }
  Drain();
  HandOff(bytes);  // the next hand-off waits until the sink has it
  offset_ += bytes.size();
}

void Emitter::AppendZeros(uint64_t n) {
  static constexpr char kZeros[4096] = {};
  while (n > 0) {
    const uint64_t k = std::min<uint64_t>(n, sizeof(kZeros));
    Append(std::string_view(kZeros, k));
    n -= k;
  }
}

void Emitter::BeginBlock(BlockTag tag, uint64_t body_length) {
  PutFixed32(static_cast<uint32_t>(tag));
  PutFixed32(static_cast<uint32_t>(AlignUp(body_length, kBlockAlignment)));
  block_end_ = offset_ + body_length;
}

void Emitter::EndBlock() {
  assert(offset_ == block_end_);
  AppendZeros(AlignUp(offset_, kBlockAlignment) - offset_);
}

uint64_t Emitter::Digest() {
  Drain();
  WaitIdle();
  return hasher_.Digest();
}

void Emitter::HashPages(uint32_t page_size) {
  assert(offset_ == 0 && page_size > 0);
  page_size_ = page_size;
  page_.reset(new char[page_size]);
  page_fill_ = 0;
}

std::vector<uint64_t> Emitter::TakePageHashes() {
  Drain();
  WaitIdle();
  if (page_fill_ > 0) page_hashes_.push_back(Hash64(page_.get(), page_fill_, 0));
  page_size_ = 0;
  page_fill_ = 0;
  return std::move(page_hashes_);
}

// Whole pages of a large piece are hashed where they lie; the rest is gathered.
void Emitter::HashPagesOf(std::string_view bytes) {
  while (!bytes.empty()) {
    if (page_fill_ == 0 && bytes.size() >= page_size_) {
      page_hashes_.push_back(Hash64(bytes.data(), page_size_, 0));
      bytes.remove_prefix(page_size_);
      continue;
    }
    const size_t k = std::min<size_t>(page_size_ - page_fill_, bytes.size());
    std::memcpy(page_.get() + page_fill_, bytes.data(), k);
    page_fill_ += k;
    bytes.remove_prefix(k);
    if (page_fill_ == page_size_) {
      page_hashes_.push_back(Hash64(page_.get(), page_size_, 0));
      page_fill_ = 0;
    }
  }
}

Status Emitter::Flush() {
  Drain();
  WaitIdle();
  return status_;
}

void Emitter::Drain() {
  if (used_ == 0) return;
  if (thread_.joinable()) {
    HandOff(std::string_view(buffer_.get(), used_));
    buffer_.swap(spare_);  // HandOff waited until the spare had been written
  } else {
    Forward(std::string_view(buffer_.get(), used_));
  }
  used_ = 0;
}

void Emitter::HandOff(std::string_view bytes) {
  {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [this] { return !busy_; });
    pending_ = bytes;
    busy_ = true;
  }
  cv_.notify_all();
}

void Emitter::WaitIdle() {
  if (!thread_.joinable()) return;
  std::unique_lock<std::mutex> lock(mu_);
  cv_.wait(lock, [this] { return !busy_; });
}

void Emitter::Work() {
  for (;;) {
    std::string_view bytes;
    {
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait(lock, [this] { return busy_ || stop_; });
      if (!busy_) return;  // stopped, nothing pending
      bytes = pending_;
    }
    Forward(bytes);
    {
      std::lock_guard<std::mutex> lock(mu_);
      busy_ = false;
    }
    cv_.notify_all();
  }
}

void Emitter::Forward(std::string_view bytes) {
  if (bytes.empty()) return;
  hasher_.Update(bytes);
  if (page_size_ > 0) HashPagesOf(bytes);
  if (status_.ok()) status_ = sink_->Append(bytes);
}

}  // namespace amem::snapshot
