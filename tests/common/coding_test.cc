#include "common/coding.h"

#include <catch2/catch.hpp>
#include <cmath>
#include <limits>

using namespace amem;

TEST_CASE("Fixed-width little-endian round trips", "[common][coding]") {
  std::string buf;
  PutFixed16(&buf, 0xbeef);
  PutFixed32(&buf, 0xdeadbeef);
  PutFixed64(&buf, 0x0123456789abcdefULL);
  PutFloat(&buf, -1.5f);
  REQUIRE(buf.size() == 18);
  CHECK(static_cast<unsigned char>(buf[0]) == 0xef);  // little-endian on disk
  std::string_view in = buf;
  uint16_t a; uint32_t b; uint64_t c; float d;
  REQUIRE(GetFixed16(&in, &a));
  REQUIRE(GetFixed32(&in, &b));
  REQUIRE(GetFixed64(&in, &c));
  REQUIRE(GetFloat(&in, &d));
  CHECK(a == 0xbeef);
  CHECK(b == 0xdeadbeef);
  CHECK(c == 0x0123456789abcdefULL);
  CHECK(d == -1.5f);
  CHECK(in.empty());
  CHECK_FALSE(GetFixed32(&in, &b));
}

TEST_CASE("Big-endian keys sort numerically", "[common][coding]") {
  std::string a, b;
  PutBig64(&a, 255);
  PutBig64(&b, 256);
  CHECK(a < b);
  std::string_view in = b;
  uint64_t v;
  REQUIRE(GetBig64(&in, &v));
  CHECK(v == 256);
}

TEST_CASE("Varints round trip around every power of two", "[common][coding]") {
  std::vector<uint64_t> values = {0, 1, std::numeric_limits<uint64_t>::max()};
  for (int k = 1; k < 64; ++k) {
    uint64_t p = 1ULL << k;
    values.insert(values.end(), {p - 1, p, p + 1});
  }
  std::string buf;
  for (uint64_t v : values) PutVarint64(&buf, v);
  std::string_view in = buf;
  for (uint64_t v : values) {
    uint64_t got;
    REQUIRE(GetVarint64(&in, &got));
    CHECK(got == v);
  }
  CHECK(in.empty());
  for (uint64_t v : values) CHECK(VarintLength(v) == [&] { std::string s; PutVarint64(&s, v); return static_cast<int>(s.size()); }());
}

TEST_CASE("Signed varints round trip", "[common][coding]") {
  for (int64_t v : {int64_t{0}, int64_t{-1}, int64_t{1}, std::numeric_limits<int64_t>::min(),
                    std::numeric_limits<int64_t>::max(), int64_t{-1700000000}}) {
    std::string buf;
    PutVarsint64(&buf, v);
    std::string_view in = buf;
    int64_t got;
    REQUIRE(GetVarsint64(&in, &got));
    CHECK(got == v);
  }
}

TEST_CASE("Every truncation of a varint or prefixed string fails", "[common][coding]") {
  std::string buf;
  PutVarint64(&buf, std::numeric_limits<uint64_t>::max());
  for (size_t n = 0; n < buf.size(); ++n) {
    std::string_view in(buf.data(), n);
    uint64_t v;
    CHECK_FALSE(GetVarint64(&in, &v));
  }
  std::string s;
  PutLengthPrefixed(&s, "hello world");
  for (size_t n = 0; n < s.size(); ++n) {
    std::string_view in(s.data(), n);
    std::string_view v;
    CHECK_FALSE(GetLengthPrefixed(&in, &v));
  }
  std::string_view in = s;
  std::string_view v;
  REQUIRE(GetLengthPrefixed(&in, &v));
  CHECK(v == "hello world");
}

TEST_CASE("Overlong varints are rejected", "[common][coding]") {
  std::string bad(11, '\x80');
  std::string_view in = bad;
  uint64_t v;
  CHECK_FALSE(GetVarint64(&in, &v));
  std::string too_big = "\xff\xff\xff\xff\xff\xff\xff\xff\xff\x02";
  in = too_big;
  CHECK_FALSE(GetVarint64(&in, &v));
  std::string big32;
  PutVarint64(&big32, 1ULL << 32);
  in = big32;
  uint32_t v32;
  CHECK_FALSE(GetVarint32(&in, &v32));
}
