// StringList (docs/FORMAT.md §8, before the blocks): count u32, (count+1) x u32 offsets relative to
// the string bytes, then the bytes. Internal to snapshot/.
#ifndef AMEM_SNAPSHOT_INTERNAL_STRING_LIST_H_
#define AMEM_SNAPSHOT_INTERNAL_STRING_LIST_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/coding.h"
#include "common/status.h"
#include "snapshot/internal/emitter.h"

namespace amem::snapshot {

// The bytes of a StringList of get(item) for each item. InvalidArgument if the
// strings exceed 4 GiB.
template <typename Container, typename Fn>
Result<uint64_t> StringListLength(const Container& items, Fn&& get) {
  uint64_t total = 0;
  for (const auto& item : items) total += std::string_view(get(item)).size();
  if (total > UINT32_MAX || items.size() >= UINT32_MAX) {
    return Status::InvalidArgument("string list larger than 4 GiB");
  }
  return 4 + 4 * (static_cast<uint64_t>(items.size()) + 1) + total;
}

// Appends that StringList. REQUIRES: StringListLength(items, get) succeeded.
template <typename Container, typename Fn>
void PutStringList(Emitter* dst, const Container& items, Fn&& get) {
  dst->PutFixed32(static_cast<uint32_t>(items.size()));
  uint32_t off = 0;
  dst->PutFixed32(0);
  for (const auto& item : items) {
    off += static_cast<uint32_t>(std::string_view(get(item)).size());
    dst->PutFixed32(off);
  }
  // The strings are often views into records all over the store's map: the one
  // a few items ahead is fetched while this one is copied.
  constexpr size_t kLookahead = 8;
  for (size_t k = 0; k < items.size(); ++k) {
    if (k + kLookahead < items.size()) {
      __builtin_prefetch(std::string_view(get(items[k + kLookahead])).data());
    }
    dst->Append(std::string_view(get(items[k])));
  }
}

// A decoded view. Parse checks only that the offset table fits; Get checks each
// entry's offsets when it is read, so a damaged entry reads as "" and never
// escapes the block (Verify()'s checksum reports the damage).
class StringListView {
 public:
  // Consumes the list from *in. Corruption if the table or bytes do not fit.
  Status Parse(std::string_view* in);
  uint32_t size() const { return count_; }
  std::string_view Get(uint32_t k) const {
    std::string_view s;
    return TryGet(k, &s) ? s : std::string_view();
  }
  // False when k >= size() or entry k's offsets do not fit the bytes (damage).
  bool TryGet(uint32_t k, std::string_view* out) const {
    if (k >= count_) return false;
    uint32_t b = DecodeFixed32(offsets_ + 4 * k);
    uint32_t e = DecodeFixed32(offsets_ + 4 * (k + 1));
    if (b > e || e > bytes_len_) return false;
    *out = std::string_view(bytes_ + b, e - b);
    return true;
  }
  // Where entry k's two offsets lie (8 bytes), for a reader that checks the
  // bytes it reads. REQUIRES: k < size().
  const char* offsets_of(uint32_t k) const { return offsets_ + 4 * uint64_t{k}; }
  // The whole list's bytes: its count, offsets and strings.
  std::string_view whole() const {
    return offsets_ ? std::string_view(offsets_ - 4, bytes_ + bytes_len_ - (offsets_ - 4))
                    : std::string_view();
  }
  // Full check: offsets start at 0 and never decrease. O(count).
  bool Monotone() const;

 private:
  uint32_t count_ = 0;
  const char* offsets_ = nullptr;
  const char* bytes_ = nullptr;
  uint32_t bytes_len_ = 0;
};

}  // namespace amem::snapshot

#endif  // AMEM_SNAPSHOT_INTERNAL_STRING_LIST_H_
