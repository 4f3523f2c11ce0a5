#include "snapshot/internal/string_list.h"

namespace amem::snapshot {

Status StringListView::Parse(std::string_view* in) {
  uint32_t count;
  if (!GetFixed32(in, &count)) return Status::Corruption("string list: truncated count");
  uint64_t table = (static_cast<uint64_t>(count) + 1) * 4;
  if (table > in->size()) return Status::Corruption("string list: offsets past end of block");
  const char* offsets = in->data();
  uint32_t total = DecodeFixed32(offsets + 4 * static_cast<uint64_t>(count));
  if (total > in->size() - table) return Status::Corruption("string list: bytes past end of block");
  count_ = count;
  offsets_ = offsets;
  bytes_ = offsets + table;
  bytes_len_ = total;
  in->remove_prefix(table + total);
  return Status::OK();
}

bool StringListView::Monotone() const {
  uint32_t prev = 0;
  if (DecodeFixed32(offsets_) != 0) return false;
  for (uint32_t k = 1; k <= count_; ++k) {
    uint32_t off = DecodeFixed32(offsets_ + 4 * k);
    if (off < prev) return false;
    prev = off;
  }
  return true;
}

}  // namespace amem::snapshot
