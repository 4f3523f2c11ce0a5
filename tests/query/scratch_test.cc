// NodeMap (query/internal/scratch.h): entries by epoch, and ExpectTouches, which
// maps the slots' pages at once, and ExpectWide, which asks for huge pages, change
// no entry.
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
  CHECK(map.capacity() == 2 * kNodes);  // the first allocation is what was asked
}

TEST_CASE("NodeMap over huge pages keeps its entries and forgets them on Reset", "[query][scratch]") {
  struct Wide {
    double dist;
    uint32_t parent;
  };
  NodeMap<Wide> map;
  constexpr uint32_t kNodes = 300000;  // 4.8 MB of slots: more than two huge pages
  map.Reset(kNodes);
  for (uint32_t i = 0; i < kNodes; i += 1000) CHECK(map.Insert(i, {0.5 * i, i}));  // small pages
  map.ExpectWide();
  map.ExpectWide();  // once per allocation
  for (uint32_t i = 1; i < kNodes; i += 999) map.Insert(i, {1.0, i + 1});  // huge ones
  for (uint32_t i = 0; i < kNodes; ++i) {
    const bool set = i % 1000 == 0 || (i >= 1 && (i - 1) % 999 == 0);
    REQUIRE(map.Has(i) == set);
    if (i % 1000 == 0) CHECK(map.Get(i).dist == 0.5 * i);
  }
  map.Reset(kNodes);
  CHECK_FALSE(map.Has(1));
  map.ExpectWide();
  CHECK(map.Insert(kNodes - 1, {2.0, 7}));
  CHECK(map.Get(kNodes - 1).parent == 7);
}

TEST_CASE("NodeMap grown by a node keeps room for the next writes' nodes",
          "[query][scratch]") {
  // A live view gains a node per write; a server's next query must not take (and
  // zero) every slot again.
  NodeMap<uint32_t> map;
  constexpr uint32_t kNodes = 80000;
  map.Reset(kNodes);
  CHECK(map.Insert(kNodes - 1, 1));
  map.Reset(kNodes + 1);
  const uint32_t grown = map.capacity();
  CHECK(grown >= kNodes + kNodes / 8);
  for (uint32_t n = kNodes + 2; n <= grown; n += 997) {
    map.Reset(n);
    REQUIRE(map.capacity() == grown);
    CHECK_FALSE(map.Has(kNodes - 1));
    CHECK_FALSE(map.Has(n - 1));
    CHECK(map.Insert(n - 1, n));
    CHECK(map.Get(n - 1) == n);
  }
  map.Reset(grown + 1);
  CHECK(map.capacity() >= grown + grown / 8);
  CHECK_FALSE(map.Has(grown - 1));
}

}  // namespace
}  // namespace amem::query
