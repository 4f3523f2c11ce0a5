#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdint>
#include <utility>
#include <vector>

#include "common/hash_sort.h"

using namespace amem;

TEST_CASE("SortByHash sorts like std::sort, ties by the second order", "[common][hash_sort]") {
  uint64_t state = 12345;
  auto next = [&] {  // splitmix64
    uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  };
  // Sizes below and above one bucket; hashes repeat (ties), some are 0 and ~0.
  for (size_t n : {0, 1, 2, 31, 33, 1000, 100000}) {
    INFO("n " << n);
    std::vector<std::pair<uint64_t, uint32_t>> items;
    for (size_t i = 0; i < n; ++i) {
      uint64_t h = i % 7 == 0 && !items.empty() ? items[next() % items.size()].first : next();
      if (i == 3) h = 0;
      if (i == 4) h = ~uint64_t{0};
      items.emplace_back(h, static_cast<uint32_t>(next() % 1000));
    }
    auto expect = items;
    std::sort(expect.begin(), expect.end());
    SortByHash(&items, [](const auto& p) { return p.first; }, std::less<>());
    CHECK(items == expect);
  }
}
