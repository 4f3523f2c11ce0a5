#include "snapshot/merged_sequence.h"

#include <algorithm>
#include <string>

namespace amem::snapshot {

Result<MergedSequence> MergedSequence::Make(uint32_t base_count, std::vector<Range> removed,
                                            std::vector<Block> inserted) {
  MergedSequence s;
  s.base_count_ = base_count;
  // Empty ranges remove nothing (and may sit anywhere, even inside another).
  std::erase_if(removed, [](const Range& r) { return r.begin == r.end; });
  std::sort(removed.begin(), removed.end(),
            [](const Range& a, const Range& b) { return a.begin < b.begin; });
  uint32_t removed_total = 0;
  for (size_t k = 0; k < removed.size(); ++k) {
    const Range& r = removed[k];
    if (r.begin > r.end || r.end > base_count || (k > 0 && r.begin < removed[k - 1].end)) {
      return Status::InvalidArgument("merged sequence: removed range " + std::to_string(r.begin) +
                                     ".." + std::to_string(r.end) + " is out of order or range");
    }
    s.removed_.push_back(r);
    s.removed_before_.push_back(removed_total);
    removed_total += r.end - r.begin;
  }
  uint32_t delta_total = 0;
  for (size_t k = 0; k < inserted.size(); ++k) {
    const Block& b = inserted[k];
    if (b.gap > base_count || (k > 0 && b.gap < inserted[k - 1].gap)) {
      return Status::InvalidArgument("merged sequence: block gaps must be ascending and in range");
    }
    s.block_start_.push_back(delta_total);
    delta_total += b.length;
  }
  s.block_start_.push_back(delta_total);
  s.blocks_ = std::move(inserted);
  // Blocks with no kept base position between them (at one gap, or with only
  // removed ones between their gaps) are consecutive in the merged numbering too:
  // their delta positions have one offset.
  s.run_end_.resize(s.blocks_.size());
  auto offset = [&s](size_t k) { return s.blocks_[k].gap - s.RemovedBelow(s.blocks_[k].gap); };
  for (size_t k = s.blocks_.size(); k-- > 0;) {
    const bool joined = k + 1 < s.blocks_.size() && offset(k + 1) == offset(k);
    s.run_end_[k] = joined ? s.run_end_[k + 1] : s.block_start_[k + 1];
  }
  s.size_ = base_count - removed_total + delta_total;

  // Walk base positions, cutting at removed ranges and block gaps.
  uint32_t merged = 0, pos = 0;
  size_t r = 0, b = 0;
  auto base_run = [&](uint32_t until) {
    if (until > pos) {
      s.runs_.push_back({merged, false, pos});
      merged += until - pos;
      pos = until;
    }
  };
  while (pos < base_count || b < s.blocks_.size()) {
    uint32_t next_gap = b < s.blocks_.size() ? s.blocks_[b].gap : base_count + 1;
    uint32_t next_cut = r < s.removed_.size() ? s.removed_[r].begin : base_count;
    if (next_gap <= next_cut && next_gap <= base_count) {
      base_run(next_gap);
      if (s.blocks_[b].length > 0) {
        s.runs_.push_back({merged, true, s.block_start_[b]});
        merged += s.blocks_[b].length;
      }
      ++b;
    } else if (r < s.removed_.size()) {
      base_run(next_cut);
      pos = s.removed_[r].end;
      ++r;
    } else {
      base_run(base_count);
    }
  }
  return s;
}

MergedSequence::Item MergedSequence::At(uint32_t merged) const {
  auto it = std::upper_bound(runs_.begin(), runs_.end(), merged,
                             [](uint32_t m, const Run& run) { return m < run.merged_start; });
  const Run& run = *(it - 1);
  return {run.delta, run.first + (merged - run.merged_start)};
}

uint32_t MergedSequence::BaseLowerBound(uint32_t merged) const {
  if (merged >= size_) return base_count_;
  const Item it = At(merged);
  if (!it.delta) return it.index;
  // A delta position: its block goes before base position `gap`, after every kept
  // position below it (those from the gap on up to the next kept one are removed).
  auto blk = std::upper_bound(block_start_.begin(), block_start_.end() - 1, it.index);
  return blocks_[static_cast<size_t>(blk - block_start_.begin()) - 1].gap;
}

uint32_t MergedSequence::RemovedBelow(uint32_t b) const {
  auto it = std::upper_bound(removed_.begin(), removed_.end(), b,
                             [](uint32_t x, const Range& r) { return x < r.begin; });
  if (it == removed_.begin()) return 0;
  size_t k = static_cast<size_t>(it - removed_.begin()) - 1;
  return removed_before_[k] + (std::min(b, removed_[k].end) - removed_[k].begin);
}

bool MergedSequence::IsRemoved(uint32_t b) const {
  auto it = std::upper_bound(removed_.begin(), removed_.end(), b,
                             [](uint32_t x, const Range& r) { return x < r.begin; });
  return it != removed_.begin() && b < (it - 1)->end;
}

uint32_t MergedSequence::OfBase(uint32_t b) const {
  // Delta positions of every block with gap <= b come first.
  auto it = std::upper_bound(blocks_.begin(), blocks_.end(), b,
                             [](uint32_t x, const Block& blk) { return x < blk.gap; });
  uint32_t before = block_start_[static_cast<size_t>(it - blocks_.begin())];
  return b - RemovedBelow(b) + before;
}

uint32_t MergedSequence::DeltaRunEnd(uint32_t d, size_t* block) const {
  size_t k = *block < blocks_.size() && block_start_[*block] <= d ? *block : 0;
  constexpr size_t kStep = 8;  // past this many blocks ahead, a binary search
  if (k + kStep < blocks_.size() && block_start_[k + kStep] <= d) {
    k = static_cast<size_t>(std::upper_bound(block_start_.begin() + static_cast<std::ptrdiff_t>(k),
                                             block_start_.end() - 1, d) -
                            block_start_.begin()) - 1;
  }
  while (block_start_[k + 1] <= d) ++k;  // the blocks left, empty ones included
  *block = k;
  return run_end_[k];
}

uint32_t MergedSequence::OfDelta(uint32_t d) const {
  auto it = std::upper_bound(block_start_.begin(), block_start_.end() - 1, d);
  size_t k = static_cast<size_t>(it - block_start_.begin()) - 1;
  uint32_t gap = blocks_[k].gap;
  return gap - RemovedBelow(gap) + d;
}

}  // namespace amem::snapshot
