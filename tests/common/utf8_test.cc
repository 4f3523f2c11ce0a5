#include <catch2/catch.hpp>
#include <cmath>

#include "common/hash.h"
#include "common/model.h"
#include "common/status.h"
#include "common/tokenizer.h"
#include "common/utf8.h"

using namespace amem;

TEST_CASE("UTF-8 validation and preview cut on boundaries", "[common][utf8]") {
  CHECK(IsValidUtf8("plain"));
  CHECK(IsValidUtf8("caf\xc3\xa9"));
  CHECK_FALSE(IsValidUtf8("\xc3"));              // truncated
  CHECK_FALSE(IsValidUtf8("\xc0\xaf"));          // overlong
  CHECK_FALSE(IsValidUtf8("\xed\xa0\x80"));      // surrogate
  CHECK_FALSE(IsValidUtf8("\xf4\x90\x80\x80"));  // > U+10FFFF
  // Long ASCII runs are checked eight bytes at a time: bad bytes after, between
  // and at the end of such runs are still found.
  CHECK(IsValidUtf8("0123456789abcdef caf\xc3\xa9 0123456789abcdef"));
  CHECK_FALSE(IsValidUtf8("0123456789abcdef\xff"));
  CHECK_FALSE(IsValidUtf8("01234567\x80" "89abcdefgh"));
  CHECK_FALSE(IsValidUtf8("0123456789abcdef\xc3"));
  CHECK_FALSE(IsValidUtf8("\xff"));
  CHECK(Utf8Prefix("caf\xc3\xa9", 4) == "caf");
  CHECK(Utf8Prefix("caf\xc3\xa9", 5) == "caf\xc3\xa9");
  CHECK(Preview("line1\nline2", 80) == "line1 line2");
  CHECK(Preview("abcdef", 3) == "abc\xe2\x80\xa6");
}
