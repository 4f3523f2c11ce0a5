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
  CHECK(Tokenize("store::PutNode(key_id)") ==
        V{"store::putnode", "store", "putnode", "put", "node", "key_id", "key", "id"});
  CHECK(Tokenize("naïve café") == V{"naïve", "café"});  // UTF-8 stays inside words
  CHECK(Tokenize("a b c I") == V{});                       // shorter than 2 bytes
  CHECK(Tokenize("") == V{});
  CHECK(Tokenize("no know node") == V{"no", "know", "node"});
  for (auto w : StopWords()) CHECK(Tokenize(w).empty());
}

// Identifiers and the exact words they give (docs/QUERIES.md, shared tokenizer rules):
// the whole identifier first, then each run, then the run's parts.
TEST_CASE("Tokenizer splits identifiers and keeps them whole", "[common][tokenizer]") {
  using V = std::vector<std::string>;
  const std::pair<std::string_view, V> kCases[] = {
      // CamelCase and acronyms.
      {"WriteBatch", {"writebatch", "write", "batch"}},
      {"HashIndexBuilder", {"hashindexbuilder", "hash", "index", "builder"}},
      {"writeBatch", {"writebatch", "write", "batch"}},
      {"HTTPServer2", {"httpserver2", "http", "server"}},  // "2": one byte
      {"parseJSON", {"parsejson", "parse", "json"}},
      {"XMLHttpRequest", {"xmlhttprequest", "xml", "http", "request"}},
      {"URLs", {"urls"}},                                  // a plural, not "ur" + "ls"
      {"GetIDsFor", {"getidsfor", "get", "ids"}},          // "for": a stop word
      {"HTTPS", {"https"}},
      {"NOT", {"not"}},
      {"Cache", {"cache"}},                                // a capital first letter
      {"iPhone", {"iphone", "phone"}},                     // "i": one byte
      {"IsEnabled", {"isenabled", "enabled"}},             // "is": a stop word
      // Letters and digits.
      {"sha256", {"sha256", "sha", "256"}},
      {"utf8", {"utf8", "utf"}},
      {"v2", {"v2"}},
      {"x86_64", {"x86_64", "x86", "86", "64"}},
      {"Base64Encode", {"base64encode", "base", "64", "encode"}},
      {"42", {"42"}},
      // snake_case, kebab-case, ::, . and /.
      {"write_batch", {"write_batch", "write", "batch"}},
      {"max-depth", {"max-depth", "max", "depth"}},
      {"--max-depth", {"max-depth", "max", "depth"}},      // a leading dash joins nothing
      {"amem::Store::Apply", {"amem::store::apply", "amem", "store", "apply"}},
      {"amem::HashIndexBuilder",
       {"amem::hashindexbuilder", "amem", "hashindexbuilder", "hash", "index", "builder"}},
      {"records.cc", {"records.cc", "records", "cc"}},
      // Names: the pieces between `.` and `::`, when joined by `_` or `-`.
      {"write_batch.cc", {"write_batch.cc", "write_batch", "write", "batch", "cc"}},
      {"db::write_batch", {"db::write_batch", "db", "write_batch", "write", "batch"}},
      {"my-app.v2_beta.json",
       {"my-app.v2_beta.json", "my-app", "my", "app", "v2_beta", "v2", "beta", "json"}},
      {"file:store/internal/records.cc",
       {"file", "store", "internal", "records.cc", "records", "cc"}},  // `/`, `:` separate
      {"ptr->next", {"ptr", "next"}},                      // `-` before `>` joins nothing
      {"a::b", {"a::b"}},                                  // 1-byte runs, a whole word
      {"a:b a__b a..b", {}},                               // one `:`, doubled `_`, `.`
      {"__init__", {"init"}},
      {"is_the_one", {"is_the_one", "one"}},               // stop-word runs dropped
      {"end. Next", {"end", "next"}},                      // a space after `.`
      // UTF-8: bytes >= 0x80 are word bytes without case.
      {"naïveCafé", {"naïvecafé", "naïve", "café"}},
      {"Grüße_welt", {"grüße_welt", "grüße", "welt"}},
      {"日本語", {"日本語"}},
  };
  for (const auto& [text, words] : kCases) {
    CAPTURE(text);
    CHECK(Tokenize(text) == words);
  }
  // The whole identifier is capped; its runs still count.
  const std::string at_cap = std::string(30, 'a') + "::" + std::string(32, 'b');
  CHECK(Tokenize(at_cap).size() == 3);
  const std::string past_cap = std::string(31, 'a') + "::" + std::string(32, 'b');
  CHECK(Tokenize(past_cap) == V{std::string(31, 'a'), std::string(32, 'b')});
}

// The term index reserves room for (3n + 3) / 4 tokens of an n-byte text
// (snapshot/internal/term_index.cc): the densest texts stay within it.
TEST_CASE("Tokens never exceed three quarters of the bytes plus one", "[common][tokenizer]") {
  for (std::string_view text : {"abCd", "abCd_efGh", "abCd.efGh.ijKl", "ab_cd", "aB",
                                "abCdEfGh", "abCd efGh", "x1y2z3", "abCdE_fg", "abCd_efGh.ijKl_mnOp",
                                "ab_cd.ef_gh", "ab_cd::ef_gh::ij_kl", "abCd_efGh.ij"}) {
    CAPTURE(text);
    CHECK(Tokenize(text).size() <= (3 * text.size() + 3) / 4);
  }
  std::string dense;
  for (int k = 0; k < 1000; ++k) dense += "abCd_efGh.ijKl_mnOp ";
  CHECK(Tokenize(dense).size() <= (3 * dense.size() + 3) / 4);
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
