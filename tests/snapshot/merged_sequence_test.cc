#include "snapshot/merged_sequence.h"

#include <catch2/catch.hpp>

#include <random>
#include <vector>

using amem::snapshot::MergedSequence;

namespace {

// The merged sequence spelled out: each entry is (delta?, index).
std::vector<std::pair<bool, uint32_t>> BruteForce(uint32_t n,
                                                  const std::vector<MergedSequence::Range>& removed,
                                                  const std::vector<MergedSequence::Block>& blocks) {
  std::vector<bool> gone(n, false);
  for (const auto& r : removed) {
    for (uint32_t b = r.begin; b < r.end; ++b) gone[b] = true;
  }
  std::vector<std::pair<bool, uint32_t>> out;
  size_t k = 0;
  uint32_t d = 0;
  for (uint32_t b = 0; b <= n; ++b) {
    for (; k < blocks.size() && blocks[k].gap == b; ++k) {
      for (uint32_t x = 0; x < blocks[k].length; ++x) out.push_back({true, d++});
    }
    if (b < n && !gone[b]) out.push_back({false, b});
  }
  return out;
}

}  // namespace

TEST_CASE("merged sequence maps both ways like the spelled-out sequence", "[snapshot][delta]") {
  std::mt19937 rng(7);
  auto pick = [&](uint32_t n) { return std::uniform_int_distribution<uint32_t>(0, n)(rng); };
  for (int trial = 0; trial < 400; ++trial) {
    uint32_t n = pick(40);
    std::vector<MergedSequence::Range> removed;
    for (uint32_t b = 0; b < n;) {
      uint32_t skip = pick(6), len = pick(3);
      b += skip;
      if (b >= n) break;
      uint32_t e = std::min(n, b + len);
      removed.push_back({b, e});
      b = e + 1;
    }
    std::vector<MergedSequence::Block> blocks;
    uint32_t gap = 0;
    for (uint32_t k = pick(6); k > 0; --k) {
      gap = std::min(n, gap + pick(10));
      blocks.push_back({gap, pick(3)});
    }
    auto want = BruteForce(n, removed, blocks);
    auto seq = MergedSequence::Make(n, removed, blocks);
    REQUIRE(seq.ok());
    REQUIRE(seq->size() == want.size());
    for (uint32_t m = 0; m < want.size(); ++m) {
      auto item = seq->At(m);
      CHECK(item.delta == want[m].first);
      CHECK(item.index == want[m].second);
      if (want[m].first) {
        CHECK(seq->OfDelta(want[m].second) == m);
      } else {
        CHECK(seq->OfBase(want[m].second) == m);
        CHECK_FALSE(seq->IsRemoved(want[m].second));
      }
    }
    for (const auto& r : removed) {
      for (uint32_t b = r.begin; b < r.end; ++b) CHECK(seq->IsRemoved(b));
    }
    // The walker over ascending runs that restart, as a posting list's fields do,
    // and with repeats.
    MergedSequence::BaseWalker walk(*seq);
    for (int run = 0; run < 3 && n > 0; ++run) {
      for (uint32_t b = pick(n - 1); b < n; b += pick(2)) {
        INFO("trial " << trial << ", run " << run << ", base " << b);
        CHECK(walk.Map(b) == (seq->IsRemoved(b) ? MergedSequence::BaseWalker::kRemoved : seq->OfBase(b)));
      }
    }
    // DeltaRunEnd(d): the end of the delta positions that follow d with d's offset,
    // from a kept hint (ascending d, with repeats, restarting) and from none.
    uint32_t total = 0;
    for (const auto& b : blocks) total += b.length;
    size_t hint = 0;
    for (int run = 0; run < 3 && total > 0; ++run) {
      for (uint32_t d = pick(total - 1); d < total; d += pick(2)) {
        uint32_t end = d + 1;
        while (end < total && seq->OfDelta(end) - end == seq->OfDelta(d) - d) ++end;
        INFO("trial " << trial << ", delta " << d);
        CHECK(seq->DeltaRunEnd(d, &hint) == end);
        size_t fresh = 0;
        CHECK(seq->DeltaRunEnd(d, &fresh) == end);
      }
    }
    // BaseLowerBound(m) splits the kept base positions at merged position m.
    for (uint32_t m = 0; m <= want.size(); ++m) {
      const uint32_t bound = seq->BaseLowerBound(m);
      INFO("trial " << trial << ", merged " << m << ", bound " << bound);
      REQUIRE(bound <= n);
      for (uint32_t b = 0; b < n; ++b) {
        if (!seq->IsRemoved(b)) CHECK((b < bound) == (seq->OfBase(b) < m));
      }
    }
  }
}

TEST_CASE("merged sequence refuses overlapping ranges and falling gaps", "[snapshot][delta]") {
  CHECK_FALSE(MergedSequence::Make(10, {{2, 5}, {4, 6}}, {}).ok());
  CHECK_FALSE(MergedSequence::Make(10, {{2, 11}}, {}).ok());
  CHECK_FALSE(MergedSequence::Make(10, {}, {{5, 1}, {4, 1}}).ok());
  CHECK_FALSE(MergedSequence::Make(10, {}, {{11, 1}}).ok());
  auto empty = MergedSequence::Make(0, {}, {{0, 2}});
  REQUIRE(empty.ok());
  CHECK(empty->size() == 2);
  CHECK(empty->At(1).delta);
  CHECK(empty->OfDelta(1) == 1);
}
