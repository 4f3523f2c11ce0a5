// Sorting by a hash in about linear time: items whose 64-bit key is uniformly
// distributed (a hash) are counted into buckets of a few dozen by the key's top bits,
// then each bucket is sorted on its own, in cache. Used where only equal keys need to
// meet (grouping by hash), on millions of items.
#ifndef AMEM_COMMON_HASH_SORT_H_
#define AMEM_COMMON_HASH_SORT_H_

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace amem {

// Sorts `items` by `less`, which must order by key_of(item) first (ascending) and may
// break ties any way. The result is the same as std::sort's for a strict weak order.
template <typename T, typename KeyOf, typename Less>
void SortByHash(std::vector<T>* items, KeyOf&& key_of, Less&& less) {
  constexpr size_t kBucketItems = 32;
  constexpr int kMaxBits = 22;
  int bits = 0;
  while (bits < kMaxBits && (kBucketItems << bits) < items->size()) ++bits;
  if (bits == 0) {
    std::sort(items->begin(), items->end(), less);
    return;
  }
  const size_t buckets = size_t{1} << bits;
  auto bucket_of = [&](const T& item) { return static_cast<size_t>(key_of(item) >> (64 - bits)); };
  std::vector<uint32_t> start(buckets + 1, 0);
  for (const T& item : *items) ++start[bucket_of(item) + 1];
  for (size_t b = 0; b < buckets; ++b) start[b + 1] += start[b];
  std::vector<T> sorted(items->size());
  {
    std::vector<uint32_t> fill(start.begin(), start.end() - 1);
    for (const T& item : *items) sorted[fill[bucket_of(item)]++] = item;
  }
  for (size_t b = 0; b < buckets; ++b) {
    if (start[b + 1] - start[b] > 1) {
      std::sort(sorted.begin() + start[b], sorted.begin() + start[b + 1], less);
    }
  }
  items->swap(sorted);
}

}  // namespace amem

#endif  // AMEM_COMMON_HASH_SORT_H_
