#include "query/internal/jaccard_join.h"

#include <algorithm>
#include <cmath>

#include "common/hash_sort.h"

namespace amem::query {

namespace {

// Rounding slack: prefix lengths and overlap bounds are rounded towards more
// candidates, never fewer.
constexpr double kSlack = 1e-9;
// Most keys per set and family; beyond, a family of fewer words per key is used.
constexpr uint64_t kMaxKeysPerSet = 128;
// Families (words per key) are told apart by the low bits of a key.
constexpr uint32_t kFamilyBits = 4;
constexpr uint32_t kMaxKeyWords = (1u << kFamilyBits) - 1;

// m(s): the fewest words a set of `size` words shares with a similar set (the
// header's bound), at least 1.
uint32_t MinOverlap(uint32_t size, double t) {
  double need = std::ceil(t * size - kSlack);
  return static_cast<uint32_t>(std::clamp<double>(need, 1, size));
}

// C(n, k), or more than `cap` when it exceeds cap.
uint64_t BinomialCapped(uint32_t n, uint32_t k, uint64_t cap) {
  uint64_t c = 1;
  for (uint32_t i = 1; i <= k; ++i) {
    c = c * (n - k + i) / i;  // exact: C(n - k + i, i)
    if (c > cap) return cap + 1;
  }
  return c;
}

// The words per key for pairs whose smaller set has `size` words.
uint32_t KeyWords(uint32_t size, double t, uint32_t most) {
  uint32_t m = MinOverlap(size, t);
  for (uint32_t l = std::min({most, m, kMaxKeyWords}); l > 1; --l) {
    if (BinomialCapped(size - m + l, l, kMaxKeysPerSet) <= kMaxKeysPerSet) return l;
  }
  return 1;
}

struct KeyEntry {
  uint64_t key;  // a hash of the key's words, the family in the low bits
  uint32_t set;
  uint32_t last;  // position of the key's last word in the set
};

// Appends the keys of `set` in family l: every l-subset of its first `prefix` words.
void AddKeys(uint32_t set, std::span<const uint32_t> words, uint32_t prefix, uint32_t l,
             std::vector<KeyEntry>* out) {
  uint32_t at[kMaxKeyWords];
  for (uint32_t i = 0; i < l; ++i) at[i] = i;
  while (true) {
    // A multiply-xorshift hash of the words, finished as splitmix64 does: the top
    // bits, which SortByHash buckets by, depend on every word.
    uint64_t h = l;
    for (uint32_t i = 0; i < l; ++i) {
      h = (h ^ words[at[i]]) * 0x9e3779b97f4a7c15ULL;
      h ^= h >> 32;
    }
    h = (h ^ (h >> 30)) * 0xbf58476d1ce4e5b9ULL;
    h = (h ^ (h >> 27)) * 0x94d049bb133111ebULL;
    h ^= h >> 31;
    out->push_back({(h << kFamilyBits) | l, set, at[l - 1]});
    // Next subset in lexicographic order of positions.
    uint32_t i = l;
    while (i > 0 && at[i - 1] == prefix - l + i - 1) --i;
    if (i == 0) return;
    ++at[i - 1];
    for (uint32_t j = i; j < l; ++j) at[j] = at[j - 1] + 1;
  }
}

}  // namespace

double WordJaccard(std::span<const uint32_t> a, std::span<const uint32_t> b) {
  if (a.empty() && b.empty()) return 0.0;
  size_t common = 0;
  for (size_t i = 0, j = 0; i < a.size() && j < b.size();) {
    if (a[i] < b[j]) {
      ++i;
    } else if (b[j] < a[i]) {
      ++j;
    } else {
      ++common, ++i, ++j;
    }
  }
  return static_cast<double>(common) / static_cast<double>(a.size() + b.size() - common);
}

std::vector<std::pair<uint32_t, uint32_t>> SimilarPairs(const WordSets& sets,
                                                        std::span<const uint32_t> members,
                                                        double t, uint32_t key_words) {
  key_words = std::max(key_words, 1u);
  // By set size: every family a partner of size m(s) .. s may choose (smaller
  // partners only: a larger one chooses by this set's size), as bits, and the number
  // of keys they give.
  struct SizePlan {
    uint32_t families = 0;  // 0 until known
    uint64_t keys = 0;
  };
  std::vector<SizePlan> plans;
  auto plan_of = [&](uint32_t s) -> const SizePlan& {
    if (plans.size() <= s) plans.resize(s + 1);
    SizePlan& p = plans[s];
    if (p.families == 0) {
      const uint32_t m = MinOverlap(s, t);
      for (uint32_t q = m; q <= s; ++q) p.families |= 1u << KeyWords(q, t, key_words);
      for (uint32_t l = 1; l <= kMaxKeyWords; ++l) {
        if (p.families >> l & 1) p.keys += BinomialCapped(std::min(s, s - m + l), l, UINT32_MAX);
      }
    }
    return p;
  };
  uint64_t keys = 0;
  for (uint32_t x : members) {
    if (sets.size(x) > 0) keys += plan_of(sets.size(x)).keys;
  }
  std::vector<KeyEntry> index;
  index.reserve(keys);
  constexpr size_t kAhead = 8;  // members whose words are fetched ahead of use
  for (size_t k = 0; k < members.size(); ++k) {
    if (k + kAhead < members.size()) {
      __builtin_prefetch(sets.words.data() + sets.offsets[members[k + kAhead]]);
    }
    const uint32_t x = members[k];
    const uint32_t s = sets.size(x);
    if (s == 0) continue;
    const uint32_t m = MinOverlap(s, t), families = plan_of(s).families;
    for (uint32_t l = 1; l <= kMaxKeyWords; ++l) {
      if (families >> l & 1) AddKeys(x, sets.of(x), std::min(s, s - m + l), l, &index);
    }
  }
  SortByHash(
      &index, [](const KeyEntry& e) { return e.key; },
      [](const KeyEntry& a, const KeyEntry& b) {
        return a.key != b.key ? a.key < b.key : a.set < b.set;
      });

  // Pairs sharing a key that pass the length filter and the positional bound.
  struct Member {
    uint32_t size, set, last;
  };
  std::vector<Member> bucket;
  std::vector<uint64_t> candidates;  // min << 32 | max
  for (size_t b = 0; b < index.size();) {
    size_t e = b + 1;
    while (e < index.size() && index[e].key == index[b].key) ++e;
    if (e - b > 1) {
      const auto l = static_cast<uint32_t>(index[b].key & kMaxKeyWords);
      bucket.clear();
      for (size_t k = b; k < e; ++k) {
        bucket.push_back({sets.size(index[k].set), index[k].set, index[k].last});
      }
      std::sort(bucket.begin(), bucket.end(), [](const Member& a, const Member& c) {
        return a.size != c.size ? a.size < c.size : a.set < c.set;
      });
      for (size_t i = 0; i < bucket.size(); ++i) {
        const Member& x = bucket[i];
        for (size_t j = i + 1; j < bucket.size(); ++j) {
          const Member& y = bucket[j];
          if (x.size < t * y.size - kSlack) break;  // and every larger y
          if (x.set == y.set) continue;  // a hash collision inside one set
          auto alpha = static_cast<int64_t>(std::ceil(t / (1 + t) * (x.size + y.size) - kSlack));
          int64_t bound = l + std::min(x.size - x.last - 1, y.size - y.last - 1);
          if (bound < alpha) continue;
          uint32_t lo = std::min(x.set, y.set), hi = std::max(x.set, y.set);
          candidates.push_back(uint64_t{lo} << 32 | hi);
        }
      }
    }
    b = e;
  }
  std::sort(candidates.begin(), candidates.end());
  candidates.erase(std::unique(candidates.begin(), candidates.end()), candidates.end());

  std::vector<std::pair<uint32_t, uint32_t>> out;
  for (uint64_t c : candidates) {
    auto x = static_cast<uint32_t>(c >> 32), y = static_cast<uint32_t>(c);
    if (WordJaccard(sets.of(x), sets.of(y)) >= t) out.emplace_back(x, y);
  }
  return out;
}

}  // namespace amem::query
