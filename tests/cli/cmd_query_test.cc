// The query subcommands as the query table (tools/io/query_table.h) makes them
// (tools/cli/cmd_query.cc): every parameter of the table is a flag or positional
// argument with its default in --help; the command line becomes the arguments MCP
// would send (lists comma-separated, words joined, vectors read as JSON); ranges and
// choices are checked before anything is opened; latest_only flags refuse older views.
#include <catch2/catch.hpp>

#include <filesystem>
#include <string>
#include <vector>

#include "tests/cli/amem_runner.h"
#include "tools/io/query_table.h"

namespace amem::testing {
namespace {

const char* kNotes =
    R"({"op":"node","key":"fact:a","type":"fact","content":"the cache is enabled","ts":100,"run":"r1"}
{"op":"node","key":"fact:b","type":"fact","content":"snapshots are mapped","ts":200,"run":"r2"}
{"op":"node","key":"decision:c","type":"decision","content":"keep the cache","ts":300,"run":"r3"}
{"op":"edge","src":"fact:a","rel":"supports","dst":"decision:c"}
)";

TEST_CASE("every table parameter is on its command's --help with its default",
          "[query][cli]") {
  TempStore s;
  REQUIRE(io::Queries().size() == 16);
  for (const io::QueryDef& def : io::Queries()) {
    RunResult r = s.Run({def.command, "--help"});
    INFO(def.command << "\n" << r.out);
    REQUIRE(r.exit_code == 0);
    for (const io::Param& p : def.params) {
      const std::string spelling = io::CliSpelling(p);
      if (p.scope == io::ParamScope::kMcpOnly) {
        CHECK(r.out.find(spelling + " ") == std::string::npos);
        continue;
      }
      CHECK(r.out.find(spelling) != std::string::npos);
      if (!p.default_text.empty()) {
        CHECK(r.out.find("(default " + p.default_text + ")") != std::string::npos);
      }
    }
    if (def.writes) CHECK(r.out.find("--ts") != std::string::npos);
  }
}

TEST_CASE("query flags become the table's arguments", "[query][cli]") {
  TempStore s;
  RequireOk(s.Run({"ingest", "-"}, kNotes));

  // --run takes a comma-separated list (as --type and --rel do), for every query.
  RunResult r = s.Run({"--json", "search", "--run", "r1,r3"});
  RequireOk(r);
  CHECK(r.json()["nodes"].size() == 2);
  r = s.Run({"--json", "text-search", "cache", "--run", "r1,r2"});
  RequireOk(r);
  CHECK(r.json()["results"].size() == 1);

  // Positional words are one query, as MCP's "query" string.
  r = s.Run({"--json", "text-search", "cache", "enabled", "--all"});
  RequireOk(r);
  REQUIRE(r.json()["results"].size() == 1);
  CHECK(r.json()["results"][0]["key"] == "fact:a");

  // context seeds from a question (MCP's question/question_seeds) with no SEED.
  r = s.Run({"--json", "context", "--question", "is the cache enabled", "--question-seeds", "1"});
  RequireOk(r);
  CHECK(r.json()["seeds"].size() == 1);
  r = s.Run({"context", "--question", "zebra"});
  RequireOk(r);
  CHECK(r.out.find("no memory contains the words of the question") != std::string::npos);
  r = s.Run({"context", "--question", "zebra", "--format", "json"});
  RequireOk(r);
  CHECK(nlohmann::json::parse(r.out)["nodes"].empty());
  // The budget holds whatever the question's length (JSON, where it is measured).
  std::string question = "cache";
  for (int i = 0; i < 200; ++i) question += " word" + std::to_string(i);
  for (const char* format : {"text", "json"}) {
    r = s.Run({"context", "--question", question, "--budget-tokens", "300", "--format", format});
    RequireOk(r);
    CHECK((r.out.size() + 3) / 4 <= 300);
  }

  // An empty value is not given ("" is no node): a text query.
  r = s.Run({"--json", "similar", "", "--text", "cache"});
  RequireOk(r);
  CHECK(r.json()["query_source"] == "text");
  // An empty scope is a value: the memories with none.
  r = s.Run({"--json", "search", "--scope", ""});
  RequireOk(r);
  CHECK(r.json()["nodes"].size() == 3);
  RequireError(s.Run({"context"}), 2, "context", "give SEED (memory keys), --question or both");
}

TEST_CASE("query flags outside the table's range or choices are usage errors",
          "[query][cli]") {
  TempStore s;
  RequireOk(s.Run({"ingest", "-"}, kNotes));
  const std::string before = s.Stats();
  RequireError(s.Run({"traverse", "fact:a", "--depth", "101"}), 2, "traverse", "--depth");
  RequireError(s.Run({"traverse", "fact:a", "--depth", "-1"}), 2, "traverse", "--depth");
  RequireError(s.Run({"traverse", "fact:a", "--limit", "x"}), 2, "traverse", "--limit");
  // A limit never wraps around (the Options' limits are 32-bit).
  RequireError(s.Run({"text-search", "cache", "--limit", "4294967296"}), 2, "text-search",
               "--limit");
  RequireError(s.Run({"similar", "--text", "cache", "--min-similarity", "2"}), 2, "similar",
               "--min-similarity");
  RequireError(s.Run({"centrality", "--metric", "closeness"}), 2, "centrality", "closeness");
  RequireError(s.Run({"context", "fact:a", "--format", "yaml"}), 2, "context", "yaml");
  RequireError(s.Run({"similar", "fact:a", "--text", "cache"}), 2, "similar",
               "give exactly one of NODE, --text or --vector");
  RequireError(s.Run({"similar", "--vector", "[1, 2"}), 4, "similar", "--vector");
  RequireError(s.Run({"revise"}), 2, "revise", "give either NODE or --hypothesis");
  // --execute writes: only on the latest state, refused before anything is read.
  RequireError(s.Run({"consolidate", "--execute", "--as-of", "1"}), 2, "consolidate",
               "--execute writes to the store's latest state");
  RequireError(s.Run({"consolidate", "--execute", "--snapshot", s.dir().Sub("none.amem")}), 2,
               "consolidate", "not with --snapshot");
  CHECK(s.Stats() == before);
}

TEST_CASE("a query missing its node/text/... is a usage error before anything is opened",
          "[query][cli]") {
  // The table's exactly_one/at_least_one rules are checked first: with no store
  // (and nothing created) the user learns what to give, not that the store is missing.
  TempDir dir;
  const std::string missing = dir.Sub("no-store");
  struct Case {
    std::vector<std::string> args;
    std::string message;
  };
  const Case cases[] = {
      {{"similar"}, "give exactly one of NODE, --text or --vector"},
      {{"similar", "fact:a", "--vector", "[1,2,3,4]"}, "give exactly one of NODE, --text or --vector"},
      {{"revise"}, "give either NODE or --hypothesis (exactly one)"},
      {{"revise", "fact:a", "--hypothesis", "x"}, "give either NODE or --hypothesis (exactly one)"},
      {{"analogy"}, "give either NODE or --text (exactly one)"},
      {{"context"}, "give SEED (memory keys), --question or both"},
      {{"context", "--snapshot", dir.Sub("none.amem")}, "give SEED (memory keys), --question or both"},
  };
  for (const Case& c : cases) {
    std::vector<std::string> args = c.args;
    RunResult r = Amem(missing, args);
    INFO(args[0] << ": " << r.err);
    CHECK(r.exit_code == 2);
    CHECK(r.err.find(c.message) != std::string::npos);
  }
  CHECK_FALSE(std::filesystem::exists(missing));
  // Given rightly, the same calls reach the store and report it missing (exit 3).
  RunResult r = Amem(missing, {"similar", "--text", "cache"});
  CHECK(r.exit_code == 3);
  CHECK(r.err.find("no store at") != std::string::npos);
  CHECK_FALSE(std::filesystem::exists(missing));
}

}  // namespace
}  // namespace amem::testing
