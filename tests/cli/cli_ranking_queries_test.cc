// amem similar | text-search | hybrid-search | centrality through the real binary:
// JSON output on the store's current snapshot, text output, exit codes for bad input.
#include <catch2/catch.hpp>

#include <string>

#include "tests/cli/amem_runner.h"

namespace amem::testing {
namespace {

const char* kLines =
    R"({"op":"node","key":"decision:lmdb","type":"decision","content":"Use LMDB for the store","vector":[1,0,0,0]}
{"op":"node","key":"fact:mmap","type":"fact","content":"LMDB reads are memory-mapped and fast","vector":[0.9,0.1,0,0]}
{"op":"node","key":"fact:sqlite","type":"fact","content":"SQLite has FTS5 for text search","vector":[0,1,0,0]}
{"op":"edge","src":"fact:mmap","rel":"supports","dst":"decision:lmdb"}
{"op":"edge","src":"fact:sqlite","rel":"related_to","dst":"decision:lmdb"}
)";

void Ingest(const TempStore& s) {
  RunResult r = s.Run({"ingest", "-", "--ts", "1700000000", "--run", "run-1"}, kLines);
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
}

TEST_CASE("amem ranking queries answer in JSON on the current snapshot", "[tools][ranking]") {
  TempStore s;
  Ingest(s);

  RunResult t = s.Run({"text-search", "lmdb", "store", "--json"});
  INFO(t.err);
  REQUIRE(t.exit_code == 0);
  nlohmann::json tj = t.json();
  REQUIRE(tj["query"] == "text-search");
  REQUIRE(tj["results"][0]["key"] == "decision:lmdb");
  REQUIRE(tj["results"][0]["matched_terms"] == nlohmann::json::array({"lmdb", "store"}));

  RunResult sim = s.Run({"similar", "decision:lmdb", "--json"});
  INFO(sim.err);
  REQUIRE(sim.exit_code == 0);
  REQUIRE(sim.json()["results"][0]["key"] == "fact:mmap");

  RunResult h = s.Run({"hybrid-search", "text", "search", "--vector", "[0,1,0,0]", "--json"});
  INFO(h.err);
  REQUIRE(h.exit_code == 0);
  REQUIRE(h.json()["results"][0]["key"] == "fact:sqlite");
  REQUIRE(h.json()["results"][0]["bm25_rank"] == 1);

  RunResult c = s.Run({"centrality", "--metric", "degree", "--json"});
  INFO(c.err);
  REQUIRE(c.exit_code == 0);
  REQUIRE(c.json()["results"][0]["key"] == "decision:lmdb");
  REQUIRE(c.json()["results"][0]["score"] == 1.0);

  RunResult text = s.Run({"centrality", "--limit", "1"});
  REQUIRE(text.exit_code == 0);
  REQUIRE(text.out.find("metric: pagerank") != std::string::npos);
  REQUIRE(text.out.find("decision:lmdb") != std::string::npos);
}

TEST_CASE("similar --text and hybrid-search compare texts in the built-in embedding's space",
          "[tools][ranking]") {
  TempStore s;
  Ingest(s);  // every node has a stored vector, unrelated to the built-in embedding
  for (const char* key : {"decision:lmdb", "fact:mmap", "fact:sqlite"}) {
    INFO(key);
    RunResult node = s.Run({"get-node", key, "--json"});
    REQUIRE(node.exit_code == 0);
    const std::string content = node.json()["content"];
    RunResult sim = s.Run({"similar", "--text", content, "--json"});
    INFO(sim.err);
    REQUIRE(sim.exit_code == 0);
    nlohmann::json j = sim.json();
    CHECK(j["basis"] == "built-in embedding");
    CHECK(j["embedded"] == j["scanned"]);
    REQUIRE(!j["results"].empty());
    CHECK(j["results"][0]["key"] == key);
    CHECK(j["results"][0]["similarity"].get<double>() == Approx(1.0));

    RunResult h = s.Run({"hybrid-search", content, "--json"});
    REQUIRE(h.exit_code == 0);
    CHECK(h.json()["vector_basis"] == "built-in embedding");
    CHECK(h.json()["results"][0]["key"] == key);
    CHECK(h.json()["results"][0]["vector_rank"] == 1);
  }
  // A caller's vector is compared with the stored vectors.
  RunResult v = s.Run({"similar", "--vector", "[0,1,0,0]", "--json"});
  REQUIRE(v.exit_code == 0);
  CHECK(v.json()["basis"] == "stored vectors");
  CHECK(v.json()["query_source"] == "vector");
  CHECK(v.json()["results"][0]["key"] == "fact:sqlite");
  RunResult text = s.Run({"similar", "--text", "SQLite has FTS5 for text search"});
  REQUIRE(text.exit_code == 0);
  CHECK(text.out.find("basis: built-in embedding\n") != std::string::npos);
}

TEST_CASE("amem ranking queries: bad input gets one error line and its exit code",
          "[tools][ranking]") {
  TempStore s;
  Ingest(s);
  struct Case {
    std::vector<std::string> args;
    int code;
  } cases[] = {
      {{"centrality", "--metric", "closeness"}, 2},
      {{"similar"}, 2},
      // Exactly one of NODE, --vector and --text, as MCP's similar asks.
      {{"similar", "decision:lmdb", "--text", "lmdb"}, 2},
      {{"similar", "--vector", "[0,1,0,0]", "--text", "lmdb"}, 2},
      {{"similar", "--vector", "[]"}, 4},
      {{"similar", "--vector", "[1e39, 0, 0, 0]"}, 4},
      {{"similar", "fact:nope"}, 3},
      {{"similar", "--vector", "[1,2]"}, 4},
      {{"similar", "--vector", "not json"}, 4},
      {{"text-search", "the", "of"}, 4},
      {{"centrality", "--rel", "no_such_rel"}, 4},
      {{"text-search", "lmdb", "--snapshot", s.dir().path() + "/missing.amem"}, 6},
  };
  for (const Case& c : cases) {
    RunResult r = s.Run(c.args);
    INFO(c.args[0] << " " << (c.args.size() > 1 ? c.args[1] : "") << ": " << r.err);
    REQUIRE(r.exit_code == c.code);
    REQUIRE(r.out.empty());
    REQUIRE(r.err_lines() == 1);
  }
  RunResult help = s.Run({"centrality", "--help"});
  REQUIRE(help.exit_code == 0);
  REQUIRE(help.out.find("--metric") != std::string::npos);
}

}  // namespace
}  // namespace amem::testing
