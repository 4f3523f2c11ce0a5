// PopulateForWrite (common/huge_pages.h) is only a hint: it changes no byte of the
// range or of what shares its pages, whatever the range's alignment.
// AllocZeroedTable hands out zeroed, writable memory of the size asked, on a huge
// page boundary when it is one huge page or more; AdviseHugePages changes no byte.
#include <catch2/catch.hpp>

#include <cstddef>
#include <cstdint>
#include <string>

#include "common/huge_pages.h"

namespace amem {
namespace {

TEST_CASE("PopulateForWrite changes no byte, in the range or beside it", "[common][huge_pages]") {
  std::string bytes(3 * 4096 + 100, '\0');
  for (size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<char>(i * 7 + 1);
  const std::string before = bytes;
  PopulateForWrite(bytes.data() + 13, 4096 + 5);  // unaligned at both ends
  PopulateForWrite(bytes.data() + 5000, 0);
  PopulateForWrite(bytes.data(), bytes.size());
  CHECK(bytes == before);
  bytes[4097] = 'x';  // still writable
  CHECK(bytes[4097] == 'x');
}

TEST_CASE("RoundDownToPage and RoundUpToPage keep multiples and round the rest", "[common][huge_pages]") {
  CHECK(RoundDownToPage(0, kSmallPage) == 0);
  CHECK(RoundUpToPage(0, kSmallPage) == 0);
  CHECK(RoundDownToPage(4095, kSmallPage) == 0);
  CHECK(RoundUpToPage(1, kSmallPage) == 4096);
  CHECK(RoundUpToPage(4096, kSmallPage) == 4096);
  CHECK(RoundDownToPage(4097, kSmallPage) == 4096);
  CHECK(RoundUpToPage(4097, kSmallPage) == 8192);
  CHECK(RoundUpToPage(kHugePage + 1, kHugePage) == 2 * kHugePage);
  CHECK(RoundDownToPage(3 * kHugePage - 1, kHugePage) == 2 * kHugePage);
}

TEST_CASE("AllocZeroedTable: zeroed, writable, huge-page aligned from 2 MiB up", "[common][huge_pages]") {
  for (size_t bytes : {size_t{1}, size_t{4096} + 3, kHugePage - 1, kHugePage, 3 * kHugePage + 12345}) {
    INFO(bytes);
    auto* p = static_cast<unsigned char*>(AllocZeroedTable(bytes));
    REQUIRE(p != nullptr);
    if (bytes >= kHugePage) CHECK(reinterpret_cast<uintptr_t>(p) % kHugePage == 0);
    size_t nonzero = 0;
    for (size_t i = 0; i < bytes; i += 997) nonzero += p[i] != 0;
    CHECK(p[bytes - 1] == 0);
    CHECK(nonzero == 0);
    for (size_t i = 0; i < bytes; i += 4096) p[i] = static_cast<unsigned char>(i / 4096 + 1);
    p[bytes - 1] = 0xAB;
    CHECK(p[bytes - 1] == 0xAB);
    if (bytes > 4096) CHECK(p[4096] == 2);
    AdviseHugePages(p, bytes);  // a hint: no byte changes
    CHECK(p[bytes - 1] == 0xAB);
    if (bytes > 4096) CHECK(p[4096] == 2);
    FreeZeroedTable(p, bytes);
  }
  FreeZeroedTable(nullptr, kHugePage);  // as free(nullptr)
}

}  // namespace
}  // namespace amem
