// The cognitive query commands through the real binary: a store, its current
// snapshot, --json, exit codes and consolidate --execute.
#include <catch2/catch.hpp>

#include "tests/cli/amem_runner.h"

using amem::testing::RunResult;
using amem::testing::TempStore;

namespace {

const char* kBeliefs = R"({"op":"node","key":"fact:cache","type":"fact","content":"the cache is enabled","confidence":0.9}
{"op":"node","key":"fact:cache-not","type":"fact","content":"the cache is not enabled","confidence":0.4}
{"op":"node","key":"fact:know","type":"fact","content":"we know the node cache"}
{"op":"node","key":"fact:a","type":"fact","content":"reads are served from the page cache"}
{"op":"node","key":"fact:b","type":"fact","content":"the snapshot is memory mapped"}
{"op":"node","key":"inference:fast","type":"inference","content":"queries are fast","confidence":0.95}
{"op":"node","key":"decision:per-turn","type":"decision","content":"query on every turn","confidence":0.8}
{"op":"edge","src":"fact:cache","rel":"supports","dst":"inference:fast"}
{"op":"edge","src":"fact:a","rel":"supports","dst":"inference:fast"}
{"op":"edge","src":"fact:b","rel":"supports","dst":"inference:fast"}
{"op":"edge","src":"decision:per-turn","rel":"caused_by","dst":"inference:fast"}
{"op":"edge","src":"fact:know","rel":"related_to","dst":"fact:a"}
)";

}  // namespace

TEST_CASE("cognitive commands run on the store's current snapshot", "[query][cli]") {
  TempStore s;
  REQUIRE(s.Run({"ingest", "-", "--ts", "1700000000", "--run", "run-1"}, kBeliefs).exit_code ==
          0);

  RunResult r = s.Run({"revise", "fact:cache", "--json"});
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  auto j = r.json();
  CHECK(j["query"] == "revise");
  CHECK(j["affected_count"] == 1);  // inference:fast keeps two supports
  r = s.Run({"revise", "--hypothesis", "the cache is NOT enabled", "--json"});
  REQUIRE(r.exit_code == 0);
  CHECK(r.json()["retracted"][0]["key"] == "fact:cache");

  r = s.Run({"gaps", "--json"});
  REQUIRE(r.exit_code == 0);
  CHECK(r.json()["query"] == "gaps");
  r = s.Run({"analogy", "decision:per-turn", "--limit", "2", "--json"});
  REQUIRE(r.exit_code == 0);
  CHECK(r.json()["analogies"].size() == 2);
  r = s.Run({"drift"});
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.find("label: run-1") != std::string::npos);

  // Dry run, execute, then nothing left to change.
  r = s.Run({"consolidate", "--json"});
  REQUIRE(r.exit_code == 0);
  j = r.json();
  CHECK(j["dry_run"] == true);
  CHECK(j["contradiction_count"] == 1);
  CHECK(j["promotion_count"] == 1);
  r = s.Run({"consolidate", "--execute", "--ts", "1700000100", "--json"});
  REQUIRE(r.exit_code == 0);
  j = r.json();
  CHECK(j["applied"]["contradicts_written"] == 1);
  CHECK(j["applied"]["promoted"] == 1);
  r = s.Run({"consolidate", "--json"});
  REQUIRE(r.exit_code == 0);
  j = r.json();
  CHECK(j["contradiction_count"] == 0);
  CHECK(j["promotion_count"] == 0);
  CHECK(j["duplicate_count"] == 0);
  r = s.Run({"get-node", "inference:fast", "--json"});
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.find("\"fact\"") != std::string::npos);
}

TEST_CASE("consolidate --execute turns copies into one star of supersedes edges",
          "[query][cli]") {
  TempStore s;
  const char* copies = R"({"op":"node","key":"fact:w1","type":"fact","content":"the writer holds one lock","confidence":0.5}
{"op":"node","key":"fact:w2","type":"fact","content":"The writer holds one lock.","confidence":0.9}
{"op":"node","key":"fact:w3","type":"fact","content":"the writer holds ONE lock","confidence":0.7}
{"op":"node","key":"fact:w4","type":"fact","content":"the writer holds one lock!","confidence":0.6}
)";
  REQUIRE(s.Run({"ingest", "-", "--ts", "1700000000"}, copies).exit_code == 0);
  RunResult r = s.Run({"consolidate", "--execute", "--ts", "1700000100", "--json"});
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  auto j = r.json();
  CHECK(j["duplicate_count"] == 3);
  CHECK(j["duplicate_cluster_count"] == 1);
  for (const auto& row : j["duplicates"]) CHECK(row["keep"]["key"] == "fact:w2");
  CHECK(j["applied"]["supersedes_written"] == 3);
  // A star, not a chain: no "unstable knowledge", and nothing left to do.
  r = s.Run({"gaps", "--json"});
  REQUIRE(r.exit_code == 0);
  CHECK(r.json()["counts"]["unstable_knowledge"] == 0);
  r = s.Run({"consolidate", "--json"});
  REQUIRE(r.exit_code == 0);
  CHECK(r.json()["duplicate_count"] == 0);
  CHECK(r.json()["duplicate_cluster_count"] == 0);
}

TEST_CASE("cognitive commands reject bad input with one line and a distinct code",
          "[query][cli]") {
  TempStore s;
  REQUIRE(s.Run({"ingest", "-"}, kBeliefs).exit_code == 0);
  RunResult r = s.Run({"revise", "fact:nope"});
  CHECK(r.exit_code == 3);  // not found
  CHECK(r.err_lines() == 1);
  CHECK(r.out.empty());
  r = s.Run({"revise"});  // neither NODE nor --hypothesis
  CHECK(r.exit_code == 2);
  r = s.Run({"analogy", "fact:a", "--text", "cache"});
  CHECK(r.exit_code == 2);
  r = s.Run({"gaps", "--threshold", "2"});
  CHECK(r.exit_code == 2);  // outside the parameter's range (tools/io/query_table.h)
  CHECK(r.err.find("--threshold") != std::string::npos);
  r = s.Run({"consolidate", "--dedup-threshold", "0"});
  CHECK(r.exit_code == 2);
  r = s.Run({"consolidate", "--execute", "--snapshot", s.dir() / "x.amem"});
  CHECK(r.exit_code == 2);
  r = s.Run({"drift", "--snapshot", s.dir() / "missing.amem"});
  CHECK(r.exit_code == 6);  // I/O error
  CHECK(r.err_lines() == 1);
}
