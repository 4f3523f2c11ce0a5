// MergedSequence: the numbering of a base sequence (nodes, edges, in-list entries,
// kv entries of a base .amem file) after a delta removed some ranges of it and
// inserted blocks of its own (docs/FORMAT.md §11.2). A merged view of base + delta
// numbers everything exactly as a full export at the head revision does; this
// class maps between those merged positions and (base position | delta position)
// in O(log changes), without touching the base's data.
//
// Removed ranges must be disjoint; inserted blocks are given in merged order with
// non-decreasing gaps (a block goes before base position `gap`, after every
// earlier block with the same gap). Thread safety: immutable after construction.
#ifndef AMEM_SNAPSHOT_MERGED_SEQUENCE_H_
#define AMEM_SNAPSHOT_MERGED_SEQUENCE_H_

#include <algorithm>
#include <cstdint>
#include <utility>
#include <vector>

#include "common/status.h"

namespace amem::snapshot {

class MergedSequence {
 public:
  struct Range {
    uint32_t begin = 0, end = 0;  // base positions [begin, end)
  };
  struct Block {
    uint32_t gap = 0;     // base position it goes before (base_count: at the end)
    uint32_t length = 0;  // delta positions, consecutive across blocks
  };
  // What a merged position holds.
  struct Item {
    bool delta = false;  // a delta position, else a base position
    uint32_t index = 0;
  };

  MergedSequence() = default;
  // InvalidArgument if the ranges overlap or leave [0, base_count), or the gaps
  // decrease or pass base_count.
  static Result<MergedSequence> Make(uint32_t base_count, std::vector<Range> removed,
                                     std::vector<Block> inserted);

  uint32_t size() const { return size_; }
  uint32_t base_count() const { return base_count_; }
  // REQUIRES: merged < size().
  Item At(uint32_t merged) const;
  // REQUIRES: b < base_count() and b not removed.
  uint32_t OfBase(uint32_t b) const;
  // REQUIRES: d < the total length of the inserted blocks.
  uint32_t OfDelta(uint32_t d) const;
  // The end of the delta positions that follow d with no kept base position
  // between them (inserted at d's gap, or at gaps with only removed positions
  // between): the largest e with OfDelta(x) = OfDelta(d) + (x - d) for every x in
  // [d, e). `*block` is a block index the
  // caller keeps between calls (0 at first): from it the search goes forward, so
  // calls with non-decreasing d cost O(1) amortized (O(log changes) for a far
  // jump). REQUIRES as OfDelta.
  uint32_t DeltaRunEnd(uint32_t d, size_t* block) const;
  bool IsRemoved(uint32_t b) const;
  // Base positions in [begin, end) that are not removed. REQUIRES: begin <= end <=
  // base_count().
  uint32_t KeptIn(uint32_t begin, uint32_t end) const {
    return (end - begin) - (RemovedBelow(end) - RemovedBelow(begin));
  }
  // The removed ranges, ascending.
  const std::vector<Range>& removed() const { return removed_; }
  // The first base position that is not before merged position `merged`: every
  // kept base position below it is numbered below `merged`, every one from it on
  // at `merged` or later (base_count() when none is). O(log changes); a posting
  // cursor's seek (Reader::postings_cursor).
  uint32_t BaseLowerBound(uint32_t merged) const;

  // Maps base positions given in non-decreasing order, as a sorted posting list
  // or in-list holds them, in O(1) amortized each: O(positions + changes) for a
  // whole list instead of two binary searches a position. A smaller position
  // than the last starts the walk over (the next field of a posting list).
  // The sequence must outlive the walker.
  class BaseWalker {
   public:
    static constexpr uint32_t kRemoved = UINT32_MAX;
    explicit BaseWalker(const MergedSequence& s) : s_(s) {}
    // OfBase(b), or kRemoved when IsRemoved(b). REQUIRES: b < base_count().
    uint32_t Map(uint32_t b) {
      if (b < last_) r_ = blk_ = removed_ = 0;
      last_ = b;
      for (; r_ < s_.removed_.size() && s_.removed_[r_].end <= b; ++r_) {
        removed_ += s_.removed_[r_].end - s_.removed_[r_].begin;
      }
      if (r_ < s_.removed_.size() && s_.removed_[r_].begin <= b) return kRemoved;
      while (blk_ < s_.blocks_.size() && s_.blocks_[blk_].gap <= b) ++blk_;
      return b - removed_ + s_.block_start_[blk_];
    }

    // After a Map(b) that kept b: the end of the stretch of base positions from b
    // that map with b's offset, Map(x) = Map(b) + (x - b) for every x in
    // [b, KeptUntil()) (none is removed, no block goes between them).
    uint32_t KeptUntil() const {
      uint32_t until = s_.base_count_;
      if (r_ < s_.removed_.size()) until = std::min(until, s_.removed_[r_].begin);
      if (blk_ < s_.blocks_.size()) until = std::min(until, s_.blocks_[blk_].gap);
      return until;
    }

   private:
    const MergedSequence& s_;
    size_t r_ = 0, blk_ = 0;  // the first removed range ending past, block with a gap past, b
    uint32_t removed_ = 0;    // positions in the ranges before r_
    uint32_t last_ = 0;
  };

 private:
  // Removed base positions strictly below b.
  uint32_t RemovedBelow(uint32_t b) const;

  uint32_t base_count_ = 0, size_ = 0;
  std::vector<Range> removed_;          // sorted, disjoint
  std::vector<uint32_t> removed_before_;  // removed positions in ranges before k
  std::vector<Block> blocks_;
  std::vector<uint32_t> block_start_;   // first delta position of block k; + total
  std::vector<uint32_t> run_end_;       // DeltaRunEnd of block k's positions
  // The merged sequence as runs: [merged_start, next start) holds base or delta
  // positions from `first` on.
  struct Run {
    uint32_t merged_start;
    bool delta;
    uint32_t first;
  };
  std::vector<Run> runs_;
};

}  // namespace amem::snapshot

#endif  // AMEM_SNAPSHOT_MERGED_SEQUENCE_H_
