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
