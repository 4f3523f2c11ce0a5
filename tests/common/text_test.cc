#include <catch2/catch.hpp>
#include <cmath>

#include "common/hash.h"
#include "common/model.h"
#include "common/status.h"
#include "common/tokenizer.h"
#include "common/utf8.h"

using namespace amem;

TEST_CASE("Tokenizer follows the documented rules", "[common][tokenizer]") {
  using V = std::vector<std::string>;
  CHECK(Tokenize("The Cache is NOT enabled, x=42!") == V{"cache", "not", "enabled", "42"});
  CHECK(Tokenize("store::PutNode(key_id)") == V{"store", "putnode", "key", "id"});
  CHECK(Tokenize("naïve café") == V{"naïve", "café"});  // UTF-8 stays inside words
  CHECK(Tokenize("a b c I") == V{});                       // shorter than 2 bytes
  CHECK(Tokenize("") == V{});
  CHECK(Tokenize("no know node") == V{"no", "know", "node"});
  for (auto w : StopWords()) CHECK(Tokenize(w).empty());
}

TEST_CASE("Stop words are exactly the listed ones", "[common][tokenizer]") {
  for (auto w : StopWords()) CHECK(IsStopWord(w));
  for (std::string_view near : {"a", "am", "ax", "thee", "th", "tho", "hiss", "theirs", "i",
                                "itself", "wit", "zz", "\xc3\xa9t", "9to", ""}) {
    CAPTURE(near);
    CHECK_FALSE(IsStopWord(near));
  }
}

TEST_CASE("Hashed embedding is normalised and deterministic", "[common][tokenizer]") {
  auto a = HashEmbed("the cache is enabled", 128);
  auto b = HashEmbed("the cache is enabled", 128);
  CHECK(a == b);
  double n = 0;
  for (float f : a) n += f * f;
  CHECK(std::abs(n - 1.0) < 1e-5);
  auto empty = HashEmbed("", 16);
  for (float f : empty) CHECK(f == 0.0f);
}

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

TEST_CASE("Ids, types and relations", "[common][model]") {
  uint64_t id = NodeIdForKey("file:src/a.cc");
  uint64_t back;
  REQUIRE(ParseHexId(FormatHexId(id), &back));
  CHECK(back == id);
  CHECK_FALSE(ParseHexId("xyz", &back));
  CHECK_FALSE(ParseHexId("0123456789abcdeg", &back));
  CHECK(ParseNodeType("constraint") == NodeType::kConstraint);
  CHECK(ParseNodeType("procedure") == NodeType::kSkill);
  CHECK_FALSE(ParseNodeType("bogus"));
  CHECK(ParseBuiltinRelation("derived_from") == kDerivedFrom);
  CHECK(std::string(BuiltinRelationName(kSupersedes)) == "supersedes");
  CHECK(BuiltinRelationName(16) == nullptr);
  CHECK(IsValidRelationName("blocks_on"));
  CHECK_FALSE(IsValidRelationName("Blocks"));
  CHECK_FALSE(IsValidRelationName(""));
  Status s = Status::Corruption("edge block 7");
  CHECK(s.ToString() == "Corruption: edge block 7");
  CHECK(s.WithContext("file.amem").ToString() == "Corruption: file.amem: edge block 7");
}
