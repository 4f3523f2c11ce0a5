// --query-log and amem replay-queries as processes
// (docs/LOG.md).
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "tests/store/random_history.h"
#include "tests/cli/amem_runner.h"
#include "tests/test_paths.h"

namespace amem::testing {
namespace {

using nlohmann::json;

// Runs MCP tool calls against the store, as a client would, recording to `log`.
void McpSession(const TempStore& s, const std::string& log, const std::vector<json>& calls) {
  std::string input =
      R"({"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":)"
      R"("2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}})" "\n"
      R"({"jsonrpc":"2.0","method":"notifications/initialized"})"
      "\n";
  int id = 1;
  for (const json& c : calls) {
    json req = {{"jsonrpc", "2.0"}, {"id", id++}, {"method", "tools/call"}, {"params", c}};
    input += req.dump() + "\n";
  }
  RunResult r = RunProgram(AMEM_BINARY, {"--store", s.store(), "--query-log", log, "mcp", "--tools", "all"},
                           input, {}, "");
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  for (const std::string& line : Lines(r.out)) {
    json j = json::parse(line);
    CHECK_FALSE(j.contains("error"));
    if (j.contains("result") && j["result"].contains("isError")) {
      CHECK(j["result"]["isError"] == false);
    }
  }
}

TEST_CASE("replay cli: recorded CLI and MCP sessions replay; a change names its queries",
          "[replay][tools]") {
  TempStore s;
  IngestDemo(s);
  const std::string log = s.dir() / "queries.jsonl";
  auto ask = [&](std::vector<std::string> args) {
    std::vector<std::string> full{"--store", s.store(), "--query-log", log};
    full.insert(full.end(), args.begin(), args.end());
    RunResult r = RunProgram(AMEM_BINARY, full, "", {}, "");
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
  };
  // Writes and failures leave nothing.
  REQUIRE(s.Run({"--query-log", log, "put-node", "scratch:x", "--type", "fact"}).exit_code == 0);
  REQUIRE(s.Run({"--query-log", log, "traverse", "no:such-node"}).exit_code == 3);
  REQUIRE(s.Run({"--query-log", log, "kv-list", "amem", "constraints"}).exit_code == 0);
  McpSession(s, log,
             {{{"name", "put_memory"},
               {"arguments", {{"key", "scratch:y"}, {"type", "fact"}, {"content", "x"}}}}});
  CHECK_FALSE(std::filesystem::exists(log));

  ask({"text-search", "snapshot", "cache", "--limit", "3"});
  ask({"traverse", "module:store", "--depth", "1"});
  ask({"context", "file:store/store.cc", "--depth", "1", "--budget-tokens", "300"});
  ask({"resolve", "fact:build-system", "--json"});
  ask({"impact", "fact:lmdb-one-writer"});
  ask({"search", "--type", "decision"});
  McpSession(s, log,
             {{{"name", "text_search"}, {"arguments", {{"query", "snapshot cache"}}}},
              {{"name", "traverse"}, {"arguments", {{"node", "module:store"}, {"depth", 1}}}},
              {{"name", "find_memories"}, {"arguments", {{"types", {"decision"}}}}},
              {{"name", "context"}, {"arguments", {{"seeds", {"file:store/store.cc"}}}}}});
  const std::vector<std::string> recorded = Lines(ReadFile(log));
  REQUIRE(recorded.size() == 10);
  json first = json::parse(recorded[0]);
  CHECK(first["source"] == "cli");
  CHECK(first["query"] == "text-search");
  CHECK(first["args"] == json({"snapshot", "cache", "--limit", "3"}));
  CHECK(first["revision"] == 5);
  CHECK(first["digest"].get<std::string>().size() == 16);
  json mcp = json::parse(recorded[8]);
  CHECK(mcp["source"] == "mcp");
  CHECK(mcp["query"] == "find_memories");
  CHECK(mcp["args"] == json({{"types", {"decision"}}}));
  CHECK(mcp["revision"] == 5);

  // The same memory: every answer is the same.
  REQUIRE(s.Run({"export", s.dir() / "a.amem"}).exit_code == 0);
  RunResult same = s.Run({"replay-queries", log, "--snapshot", s.dir() / "a.amem", "--json"});
  INFO(same.err);
  REQUIRE(same.exit_code == 0);
  CHECK(same.json()["same"] == 10);
  RunResult self = s.Run({"replay-queries", log, "--snapshot", s.dir() / "a.amem", "--against",
                          s.dir() / "a.amem"});
  CHECK(self.exit_code == 0);
  CHECK(self.out.find("10 queries: 10 same, 0 changed") != std::string::npos);

  // One changed node: exactly the queries whose answers contain it changed.
  REQUIRE(s.Run({"put-node", "decision:reject-unknown-fields", "--type", "decision",
                 "--content", "Ingest rejects unknown fields; the snapshot cache too."})
              .exit_code == 0);
  REQUIRE(s.Run({"export", s.dir() / "b.amem"}).exit_code == 0);
  RunResult diff = s.Run({"replay-queries", log, "--snapshot", s.dir() / "a.amem", "--against",
                          s.dir() / "b.amem", "--json"});
  INFO(diff.out);
  REQUIRE(diff.exit_code == 1);
  std::vector<std::string> changed;
  const json report = diff.json();
  for (const json& q : report["queries"]) {
    if (q["status"] == "changed") changed.push_back(q["source"].get<std::string>() + " " +
                                                    q["query"].get<std::string>());
  }
  CHECK(changed == std::vector<std::string>{"cli text-search", "cli search", "mcp text_search",
                                            "mcp find_memories"});
  RunResult text = s.Run({"replay-queries", log, "--snapshot", s.dir() / "b.amem"});
  CHECK(text.exit_code == 1);
  CHECK(text.out.find("10 queries: 6 same, 4 changed (against the recorded digests)") !=
        std::string::npos);
}

}  // namespace
}  // namespace amem::testing

namespace amem::testing {
namespace {

// The README's "Benchmark harnesses" recipe shows tools/harness_recipe.sh's real
// output, indented by 4 spaces between the harness-recipe markers. To update after
// an intended change: run the script in an empty directory and paste its output.

TEST_CASE("replay cli: the README's harness recipe output is the script's", "[replay][tools]") {
  TempDir dir;
  const std::string root = AMEM_SOURCE_DIR;
  RunResult r = RunProgram("/bin/bash", {root + "/tools/harness_recipe.sh", AMEM_BINARY}, "",
                           {}, dir.path());
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(r.err.empty());
  const std::string readme = ReadFile(root + "/README.md");
  const std::string begin = "<!-- harness-recipe:begin -->\n";
  const size_t start = readme.find(begin);
  const size_t end = readme.find("<!-- harness-recipe:end -->");
  REQUIRE(start != std::string::npos);
  REQUIRE(end != std::string::npos);
  std::string shown;
  for (const std::string& line : Lines(readme.substr(start + begin.size(),
                                                     end - start - begin.size()))) {
    shown += (line.rfind("    ", 0) == 0 ? line.substr(4) : line) + "\n";
  }
  auto trimmed = [](std::string s) {
    s.erase(0, s.find_first_not_of('\n'));
    s.erase(s.find_last_not_of('\n') + 1);
    return s;
  };
  CHECK(trimmed(shown) == trimmed(r.out));
}

}  // namespace
}  // namespace amem::testing

#include "tools/io/query_log.h"

namespace amem::testing {
namespace {

TEST_CASE("replay cli: answers compare without index and revision", "[replay][tools]") {
  using io::OrderedJson;
  OrderedJson a = OrderedJson::parse(
      R"({"revision":3,"results":[{"index":7,"key":"k","score":1.5,"edge":{"index":2}}]})");
  OrderedJson b = OrderedJson::parse(
      R"({"revision":9,"results":[{"index":1,"key":"k","score":1.5,"edge":{"index":5}}]})");
  CHECK(io::ComparableAnswer(a).dump() == R"({"results":[{"key":"k","score":1.5,"edge":{}}]})");
  CHECK(io::AnswerDigest(a) == io::AnswerDigest(b));
  b["results"][0]["score"] = 1.25;
  CHECK(io::AnswerDigest(a) != io::AnswerDigest(b));
}

TEST_CASE("replay cli: bad query logs and queries that cannot be asked", "[replay][tools]") {
  TempStore s;
  IngestDemo(s);
  REQUIRE(s.Run({"export", s.dir() / "a.amem"}).exit_code == 0);
  const std::string good =
      R"({"ts":1,"source":"cli","query":"traverse","args":["module:store"],"revision":3,)"
      R"("digest":"0000000000000000"})";
  WriteFile(s.dir() / "bad.jsonl", good + "\n{\"source\":\"cli\"}\n");
  RunResult r = s.Run({"replay-queries", s.dir() / "bad.jsonl", "--snapshot", s.dir() / "a.amem"});
  CHECK(r.exit_code == 4);
  CHECK(r.err.find("line 2: missing string field \"query\"") != std::string::npos);

  WriteFile(s.dir() / "q.jsonl",
            good + "\n" +
                R"({"source":"cli","query":"put-node","args":["x","--type","fact"],)"
                R"("digest":"0000000000000000"})" "\n" +
                R"({"source":"mcp","query":"no_such_tool","args":{},"digest":"0"})" "\n");
  r = s.Run({"replay-queries", s.dir() / "q.jsonl", "--snapshot", s.dir() / "a.amem", "--json"});
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 1);
  const json report = r.json();
  CHECK(report["changed"] == 3);
  CHECK(report["queries"][0].contains("digest"));
  CHECK(report["queries"][1]["error"].get<std::string>().find(
            "\"put-node\" is not one of the 16 query commands") != std::string::npos);
  CHECK(report["queries"][2]["error"] == "\"no_such_tool\" is not a query tool");
}

}  // namespace
}  // namespace amem::testing
