// Drives the real amem binary: the app itself (tools/cli/command.h, commands.cc):
// first contact, usage errors, --help, the default store, telemetry, exit codes.
#include <catch2/catch.hpp>
#include <set>
#include <sstream>

#include "common/hash.h"
#include "snapshot/format.h"
#include "tests/store/raw_lmdb.h"
#include "tests/cli/amem_runner.h"
#include "tests/test_paths.h"

namespace amem::testing {
namespace {

TEST_CASE("commands on a missing store fail with NotFound and create nothing",
          "[tools][cli]") {
  TempDir dir;
  std::string store = dir.Sub("missing");
  RequireError(Amem(store, {"get-node", "file:a"}), 3, "get-node", "amem init");
  RequireError(Amem(store, {"put-node", "file:a", "--type", "file"}), 3, "put-node");
  RequireError(Amem(store, {"stats"}), 3, "stats");
  RequireError(Amem(store, {"ingest", "-"}, "{\"op\":\"rel\",\"name\":\"x\"}\n"), 3, "ingest");
  CHECK(!std::filesystem::exists(store));
}

TEST_CASE("first contact: amem alone, --version, a mistyped command", "[tools][cli]") {
  // `amem` alone prints the overview --help prints.
  RunResult alone = RunProgram(AMEM_BINARY, {}, "", {}, "");
  RunResult help = RunProgram(AMEM_BINARY, {"--help"}, "", {}, "");
  CHECK(alone.exit_code == 0);
  CHECK(alone.out == help.out);
  CHECK(alone.err.empty());
  CHECK(help.out.find("--version") != std::string::npos);
  // The overview lists every command. A command named on the line is built alone
  // (Context::BuildOnly), unless a help flag comes first.
  for (const char* cmd : {"traverse", "hybrid-search", "impact", "view", "put-node", "mcp"}) {
    INFO(cmd);
    CHECK(help.out.find(std::string("  ") + cmd + " ") != std::string::npos);
    RunResult own = RunProgram(AMEM_BINARY, {cmd, "--help"}, "", {}, "");
    CHECK(own.exit_code == 0);
    CHECK_THAT(own.out, Catch::Contains("amem " + std::string(cmd)));
    CHECK(RunProgram(AMEM_BINARY, {"--help", cmd}, "", {}, "").out == own.out);
  }
  // --version names the program's and the formats' versions.
  RunResult version = RunProgram(AMEM_BINARY, {"--version"}, "", {}, "");
  CHECK(version.exit_code == 0);
  CHECK_THAT(version.out, Catch::StartsWith("amem "));
  CHECK(version.out.find("store format " + std::to_string(StoreFormatVersion())) != std::string::npos);
  CHECK(version.out.find("snapshot format " + std::to_string(snapshot::kFormatVersion)) !=
        std::string::npos);
  // A mistyped command names the nearest one; a word near none says only that.
  struct Case {
    std::vector<std::string> args;
    std::string message;
  };
  for (const Case& c : std::vector<Case>{
           {{"serch", "x"}, "amem: usage: unknown command 'serch'; did you mean 'search'?"},
           {{"--store", "/nowhere", "expot", "a.amem"}, "did you mean 'export'?"},
           {{"--json", "stat"}, "did you mean 'stats'?"},
           {{"ingset", "f"}, "did you mean 'ingest'?"},
           {{"zzzzzz"}, "amem: usage: unknown command 'zzzzzz' (see amem --help)"},
           {{"a"}, "amem: usage: unknown command 'a' (see amem --help)"}}) {
    INFO(c.args[0]);
    RunResult r = RunProgram(AMEM_BINARY, c.args, "", {}, "");
    CHECK(r.exit_code == 2);
    CHECK(r.err_lines() == 1);
    CHECK(r.err.find(c.message) != std::string::npos);
    CHECK(r.out.empty());
  }
}

TEST_CASE("usage errors exit 2 with one line", "[tools][cli]") {
  TempStore s;
  RunResult r = RunProgram(AMEM_BINARY, {"--json"}, "", {}, "");
  CHECK(r.exit_code == 2);
  CHECK(r.err_lines() == 1);
  r = RunProgram(AMEM_BINARY, {"no-such-command"}, "", {}, "");
  CHECK(r.exit_code == 2);
  CHECK(r.err_lines() == 1);
  RequireError(s.Run({"put-node", "file:a"}), 2, "put-node", "--type");
  RequireError(s.Run({"get-node"}), 2, "get-node");
  RequireError(s.Run({"get-node", "file:a", "--as-of", "1", "--at", "5"}), 2, "get-node");
  RequireError(s.Run({"get-node", "file:a", "--as-of", "abc"}), 2, "get-node");
  RequireError(s.Run({"changes"}), 2, "changes");
  RequireError(s.Run({"changes", "--since-rev", "1", "--since", "5"}), 2, "changes");
  RequireError(s.Run({"put-edge", "a", "calls"}), 2, "put-edge");
  RequireError(s.Run({"kv-put", "s", "ns", "k"}), 2, "kv-put");
}

TEST_CASE("the --help of every command explains it with an example", "[tools][cli]") {
  RunResult top = RunProgram(AMEM_BINARY, {"--help"}, "", {}, "");
  REQUIRE(top.exit_code == 0);
  CHECK(top.out.find("Exit codes") != std::string::npos);
  for (const char* cmd :
       {"init", "put-node", "get-node", "del-node", "put-edge", "del-edge", "def-rel", "out",
        "in", "kv-put", "kv-del", "kv-get", "kv-list", "kv-history", "changes", "ingest",
        "compact", "stats"}) {
    INFO(cmd);
    CHECK(top.out.find(std::string(cmd) + " ") != std::string::npos);
    RunResult r = RunProgram(AMEM_BINARY, {cmd, "--help"}, "", {}, "");
    CHECK(r.exit_code == 0);
    CHECK(r.out.find("Example:") != std::string::npos);
    CHECK(r.out.find(std::string("amem ") + cmd) != std::string::npos);
  }
}

TEST_CASE("the --help of every query command names each of its parameters", "[tools][cli]") {
  RunResult top = RunProgram(AMEM_BINARY, {"--help"}, "", {}, "");
  REQUIRE(top.exit_code == 0);
  const std::vector<std::string> snapshot_flags = {"--snapshot", "--as-of", "--at"};
  const std::vector<std::pair<std::string, std::vector<std::string>>> commands = {
      {"traverse", {"NODE", "--rel", "--direction", "--depth", "--min-confidence", "--limit"}},
      {"search",
       {"--type", "--run", "--scope", "--min-confidence", "--max-confidence", "--after",
        "--before", "--sort", "--limit"}},
      {"temporal", {"A", "B", "--limit"}},
      {"impact", {"NODE", "--diff", "--depth", "--budget-tokens", "--limit"}},
      {"similar",
       {"NODE", "--vector", "--text", "--limit", "--min-similarity", "--type", "--run"}},
      {"context", {"SEED", "--depth", "--budget-tokens", "--format", "--max-content", "--limit"}},
      {"resolve", {"NODE", "--limit"}},
      {"text-search", {"QUERY", "--limit", "--all", "--scan", "--type", "--run"}},
      {"hybrid-search",
       {"QUERY", "--vector", "--limit", "--bm25-weight", "--vector-weight", "--k", "--type",
        "--run"}},
      {"centrality", {"--metric", "--type", "--rel", "--limit", "--threads"}},
      {"path",
       {"FROM", "TO", "--direction", "--rel", "--max-depth", "--weighted", "--cost", "--limit"}},
  };
  for (const auto& [cmd, params] : commands) {
    INFO(cmd);
    CHECK(top.out.find(cmd + " ") != std::string::npos);
    RunResult r = RunProgram(AMEM_BINARY, {cmd, "--help"}, "", {}, "");
    CHECK(r.exit_code == 0);
    CHECK(r.out.find("Example:") != std::string::npos);
    CHECK(r.out.find("amem " + cmd) != std::string::npos);
    for (const std::string& p : params) {
      INFO(p);
      CHECK(r.out.find(p) != std::string::npos);
    }
    for (const std::string& p : snapshot_flags) {
      INFO(p);
      CHECK(r.out.find(p) != std::string::npos);
    }
  }
}

TEST_CASE("the default store is $AMEM_STORE, else ./.amem", "[tools][cli]") {
  TempDir dir;
  RunResult r = RunProgram(AMEM_BINARY, {"init"}, "", {"AMEM_STORE=" + dir.Sub("env")}, "");
  RequireOk(r);
  CHECK(std::filesystem::is_directory(dir.Sub("env")));
  r = RunProgram(AMEM_BINARY, {"init", "--json"}, "", {}, dir.path());
  RequireOk(r);
  CHECK(r.json()["store"] == "./.amem");
  CHECK(std::filesystem::is_directory(dir.Sub(".amem")));
}

TEST_CASE("AMEM_TELEMETRY appends JSON Lines events for the CLI's reads and writes",
          "[tools][cli]") {
  TempStore s;
  const std::string sink = s.dir().Sub("events.jsonl");
  auto run = [&](std::vector<std::string> args) {
    args.insert(args.begin(), {"--store", s.store()});
    return RunProgram(AMEM_BINARY, args, "", {"AMEM_TELEMETRY=" + sink}, "");
  };
  RequireOk(run({"put-node", "file:a.cc", "--type", "file", "--scope", "proj", "--run", "r1",
                 "--task", "t1", "--ts", "1700000000"}));
  RequireOk(run({"put-node", "file:a.cc", "--type", "file", "--scope", "proj", "--run", "r1",
                 "--task", "t1", "--ts", "1700000001"}));
  RequireOk(run({"get-node", "file:a.cc"}));
  RequireOk(run({"out", "file:a.cc"}));
  RequireOk(run({"del-node", "file:a.cc", "--run", "r2", "--ts", "1700000002"}));
  RequireOk(s.Run({"get-node", "file:a.cc", "--as-of", "1"}));  // no sink: no event

  std::istringstream lines(ReadFile(sink));
  std::vector<nlohmann::json> events;
  for (std::string line; std::getline(lines, line);) events.push_back(nlohmann::json::parse(line));
  // `out` resolves its node argument (a read), then lists the edges (a query).
  REQUIRE(events.size() == 6);
  const std::string id = FormatHexId(NodeIdForKey("file:a.cc"));
  const char* ops[] = {"write", "overwrite", "read", "read", "query", "delete"};
  for (size_t i = 0; i < events.size(); ++i) {
    INFO("event " << i << ": " << events[i].dump());
    CHECK(events[i].size() == 7);
    CHECK(events[i]["op"] == ops[i]);
    CHECK(events[i]["memory_id"] == id);
    CHECK(events[i]["timestamp"].is_number_integer());
    for (const char* field : {"scope", "run_id", "task_id"}) CHECK(events[i][field].is_string());
  }
  CHECK(events[0]["entity_type"] == "file");
  CHECK(events[0]["scope"] == "proj");
  CHECK(events[0]["run_id"] == "r1");
  CHECK(events[0]["task_id"] == "t1");
  CHECK(events[0]["timestamp"] == 1700000000);
  CHECK(events[2]["entity_type"] == "file");
  CHECK(events[2]["scope"] == "proj");  // a read is attributed to the record read
  CHECK(events[2]["run_id"] == "r1");
  CHECK(events[4]["entity_type"] == "edge");
  CHECK(events[5]["run_id"] == "r2");
  CHECK(events[5]["timestamp"] == 1700000002);
}

TEST_CASE("a damaged store fails with exit 5 (corruption)", "[tools][cli]") {
  TempStore s;
  RequireOk(s.Run({"put-edge", "file:a", "calls", "file:b"}));
  RequireOk(s.Run({"put-node", "file:a", "--type", "file"}));
  // An out entry a -calls-> c with no edge record, through raw LMDB (docs/STORE.md).
  RawLmdbWrite(s.store(), [](MDB_txn* txn, const auto& db) {
    std::string key = RawNodeKey("file:a"), entry = RawAdjEntry(kCalls, "file:c");
    MDB_val k = RawVal(key), v = RawVal(entry);
    REQUIRE(mdb_put(txn, db("out", MDB_DUPSORT | MDB_DUPFIXED), &k, &v, 0) == 0);
  });
  RequireError(s.Run({"out", "file:a"}), 5, "out", "Corruption");
  RequireError(s.Run({"out", "file:a", "--json"}), 5, "out", "no edge record");
  RequireError(s.Run({"compact"}), 5, "compact", "no edge record");
  RequireOk(s.Run({"in", "file:b"}));  // the rest of the store still reads
}

}  // namespace
}  // namespace amem::testing
