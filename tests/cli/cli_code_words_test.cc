// Code-aware words (common/tokenizer.h) through the real binary: text-search,
// hybrid-search and context --question find identifiers by their parts
// (`write batch` -> `WriteBatch`, `index builder` -> `HashIndexBuilder`), and the
// exact identifier ranks above memories that only hold its parts.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "tests/cli/amem_runner.h"

namespace amem::testing {
namespace {

const char* kLines =
    R"json({"op":"node","key":"symbol:amem::WriteBatch","type":"symbol","content":"class amem::WriteBatch"}
{"op":"node","key":"symbol:amem::HashIndexBuilder","type":"symbol","content":"class HashIndexBuilder\nvoid Add(std::string_view key)"}
{"op":"node","key":"file:store/write_batch.cc","type":"file","content":"store/write_batch.cc"}
{"op":"node","key":"fact:short","type":"fact","content":"Batch write."}
{"op":"node","key":"fact:prose","type":"fact","content":"Every write goes into a batch before the commit."}
{"op":"node","key":"fact:other","type":"fact","content":"Readers never block writers."}
)json";

void Ingest(const TempStore& s) {
  RunResult r = s.Run({"ingest", "-", "--ts", "1700000000", "--run", "run-1"}, kLines);
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
}

nlohmann::json OkJson(const TempStore& s, const std::vector<std::string>& args) {
  RunResult r = s.Run(args);
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  return r.json();
}

TEST_CASE("text-search finds identifiers by their words", "[tools][ranking][tokenizer]") {
  TempStore s(256);  // a dimension where the built-in embedding rarely collides
  Ingest(s);
  using V = std::vector<std::string>;

  nlohmann::json j = OkJson(s, {"text-search", "write", "batch", "--json"});
  CHECK(j["terms"] == nlohmann::json::array({"write", "batch"}));
  // Every memory holding both words, however they are spelled.
  CHECK(OkJson(s, {"text-search", "write", "batch", "--all", "--json"})["matched"] == 4);
  const V both = KeysOf(j["results"]);
  for (const char* key : {"symbol:amem::WriteBatch", "file:store/write_batch.cc", "fact:short",
                          "fact:prose"}) {
    INFO(key);
    CHECK(std::find(both.begin(), both.end(), key) != both.end());
  }

  j = OkJson(s, {"text-search", "index", "builder", "--json"});
  CHECK(KeysOf(j["results"]) == V{"symbol:amem::HashIndexBuilder"});

  // The identifier as written: its whole word is a term too, rarer than its parts,
  // so the memory holding it ranks first, above a shorter one with the parts only.
  j = OkJson(s, {"text-search", "WriteBatch", "--json"});
  CHECK(j["terms"] == nlohmann::json::array({"writebatch", "write", "batch"}));
  REQUIRE(j["results"].size() == 4);
  CHECK(j["results"][0]["key"] == "symbol:amem::WriteBatch");
  CHECK(j["results"][0]["matched_terms"] == nlohmann::json::array({"writebatch", "write", "batch"}));
  CHECK(j["results"][1]["key"] == "fact:short");
  j = OkJson(s, {"text-search", "write_batch", "--json"});
  CHECK(j["results"][0]["key"] == "file:store/write_batch.cc");
  j = OkJson(s, {"text-search", "amem::WriteBatch", "--json"});
  CHECK(j["results"][0]["key"] == "symbol:amem::WriteBatch");

  // The index and the scan path agree (the scan tokenizes every content again).
  for (const char* q : {"write batch", "WriteBatch", "index builder", "string_view key"}) {
    INFO(q);
    nlohmann::json indexed = OkJson(s, {"text-search", q, "--json"});
    nlohmann::json scanned = OkJson(s, {"text-search", q, "--scan", "--json"});
    CHECK(indexed["path"] == "index");
    CHECK(scanned["path"] == "scan");
    CHECK(indexed["results"] == scanned["results"]);
  }
}

TEST_CASE("hybrid-search and context --question find identifiers by their words",
          "[tools][ranking][tokenizer]") {
  TempStore s(256);  // a dimension where the built-in embedding rarely collides
  Ingest(s);
  nlohmann::json h = OkJson(s, {"hybrid-search", "index", "builder", "--json"});
  REQUIRE(!h["results"].empty());
  CHECK(h["results"][0]["key"] == "symbol:amem::HashIndexBuilder");
  CHECK(h["results"][0]["bm25_rank"] == 1);

  nlohmann::json c = OkJson(s, {"--json", "context", "--question", "how is the index builder used",
                              "--question-seeds", "1"});
  REQUIRE(c["seeds"].size() == 1);
  CHECK(c["seeds"][0] == "symbol:amem::HashIndexBuilder");
  c = OkJson(s, {"--json", "context", "--question", "write batch", "--question-seeds", "1"});
  REQUIRE(c["seeds"].size() == 1);
  CHECK(c["seeds"][0] == "fact:short");  // the shortest memory with both words
}

}  // namespace
}  // namespace amem::testing
