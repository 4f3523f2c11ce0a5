#include "snapshot/emitter.h"

#include <algorithm>
#include <cassert>

namespace amem::snapshot {

Emitter::Emitter(ByteSink* sink) : sink_(sink), buffer_(new char[kBufferSize]) {}

void Emitter::AppendLarge(std::string_view bytes) {
  // Big pieces (the content frame, the postings) go to the sink as they are,
  // without a copy through the buffer.
  Drain();
  if (bytes.size() >= kBufferSize / 2) {
    Forward(bytes);
  } else {
    std::memcpy(buffer_.get(), bytes.data(), bytes.size());
    used_ = bytes.size();
  }
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
  return hasher_.Digest();
}

Status Emitter::Flush() {
  Drain();
  return status_;
}

void Emitter::Drain() {
  Forward(std::string_view(buffer_.get(), used_));
  used_ = 0;
}

void Emitter::Forward(std::string_view bytes) {
  if (bytes.empty()) return;
  hasher_.Update(bytes);
  if (status_.ok()) status_ = sink_->Append(bytes);
}

}  // namespace amem::snapshot
