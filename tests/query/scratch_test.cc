// NodeMap (query/internal/scratch.h): entries by epoch, and ExpectTouches, which
// maps the slots' pages at once, changes no entry.
#include <catch2/catch.hpp>

#include <cstdint>

#include "query/internal/scratch.h"

namespace amem::query {
namespace {

TEST_CASE("NodeMap keeps its entries when told of many touches and forgets them on Reset",
          "[query][scratch]") {
  NodeMap<uint32_t> map;
  constexpr uint32_t kNodes = 100000;  // 800 KB of slots: many pages
  map.Reset(kNodes);
  for (uint32_t i = 0; i < kNodes; i += 7) CHECK(map.Insert(i, i * 3));
  map.ExpectTouches(kNodes);  // maps the pages; the entries stay
  map.ExpectTouches(kNodes);  // once per allocation
  for (uint32_t i = 0; i < kNodes; ++i) {
    if (i % 7 == 0) {
      REQUIRE(map.Has(i));
      CHECK(map.Get(i) == i * 3);
      CHECK_FALSE(map.Insert(i, 1));
    } else {
      REQUIRE_FALSE(map.Has(i));
    }
  }
  map.Reset(kNodes);
  CHECK_FALSE(map.Has(0));
  CHECK(map.Insert(0, 5));
  CHECK(map.Get(0) == 5);
  // A larger graph takes new slots, empty, and a few touches map nothing at once.
  map.Reset(2 * kNodes);
  map.ExpectTouches(3);
  CHECK_FALSE(map.Has(0));
  CHECK(map.Insert(2 * kNodes - 1, 9));
  CHECK(map.Get(2 * kNodes - 1) == 9);
}

}  // namespace
}  // namespace amem::query
