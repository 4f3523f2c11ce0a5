// PopulateForWrite (common/huge_pages.h) is only a hint: it changes no byte of the
// range or of what shares its pages, whatever the range's alignment.
#include <catch2/catch.hpp>

#include <cstddef>
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

}  // namespace
}  // namespace amem
