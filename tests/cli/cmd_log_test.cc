// amem log and amem replay as processes
// (docs/LOG.md).
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "tests/store/random_history.h"
#include "tests/cli/amem_runner.h"
#include "tests/sanitizer.h"

namespace amem::testing {
namespace {

using nlohmann::json;

TEST_CASE("replay cli: log -> replay exports identical bytes at every revision",
          "[replay][tools]") {
  TempDir dir;
  const std::string a = dir / "a", b = dir / "b";
  {
    auto store = OpenStore(a);
    History history(5, true);
    history.Grow(store.get(), 40);
  }
  RunResult log = Amem(a, {"log", "--out", dir / "a.log", "--json"});
  INFO(log.err);
  REQUIRE(log.exit_code == 0);
  CHECK(log.json()["revisions"] == 40);
  CHECK(log.json()["first_rev"] == 1);
  RunResult replay = Amem(b, {"replay", dir / "a.log", "--json"});
  INFO(replay.err);
  REQUIRE(replay.exit_code == 0);
  CHECK(replay.json()["rev"] == 40);
  CHECK(replay.json()["created"] == true);
  // Every revision; every third (1, 4, ..., 40) in the sanitizer build, where each
  // export is a slow process.
  for (int rev = 1; rev <= 40; rev += kSanitizerBuild ? 3 : 1) {
    INFO("revision " << rev);
    REQUIRE(Amem(a, {"export", dir / "x.amem", "--as-of", std::to_string(rev)}).exit_code == 0);
    REQUIRE(Amem(b, {"export", dir / "y.amem", "--as-of", std::to_string(rev)}).exit_code == 0);
    CHECK(ReadFile(dir / "x.amem") == ReadFile(dir / "y.amem"));
  }
  RunResult again = Amem(b, {"log"});
  REQUIRE(again.exit_code == 0);
  CHECK(again.out == ReadFile(dir / "a.log"));
  CHECK(Amem(b, {"log", "--since-rev", "10", "--until-rev", "12"}).out ==
        Amem(a, {"log", "--since-rev", "10", "--until-rev", "12"}).out);
}

TEST_CASE("replay cli: bad logs exit 4 naming the line, nothing written", "[replay][tools]") {
  TempStore s;
  IngestDemo(s);
  const std::string log = s.Run({"log"}).out;
  const std::vector<std::string> lines = Lines(log);
  REQUIRE(lines.size() > 60);
  TempStore copy;
  const std::string before = copy.Stats();
  auto refused = [&](const std::string& text, const std::string& expected) {
    WriteFile(copy.dir() / "bad.log", text);
    RunResult r = copy.Run({"replay", copy.dir() / "bad.log"});
    INFO(r.err);
    CHECK(r.exit_code == 4);
    CHECK(r.err_lines() == 1);
    CHECK(r.err.find(expected) != std::string::npos);
    CHECK(copy.Stats() == before);
  };
  refused(log.substr(0, log.size() - 20), "line " + std::to_string(lines.size()) +
                                              ": malformed JSON");
  std::string gap;
  for (const std::string& l : lines) {
    if (json::parse(l)["rev"] != 2) gap += l + "\n";
  }
  refused(gap, "revision 3 follows revision 1: revision 2 is missing");
  refused(lines[0] + "\n" + R"({"rev":1,"rev_ts":1700000000,"op":"teleport","key":"x"})" "\n",
          "line 2: unknown op \"teleport\"");
  refused(R"({"rev":1,"rev_ts":1,"op":"node","key":"x","type":"fact","vector":[1,2,3]})" "\n",
          "line 1: vector");
  refused(R"({"rev":1,"rev_ts":1,"op":"node","key":"x","type":"fact","content":"\xff"})" "\n",
          "line 1:");
  // The revision fields, whichever parser reads the line (the fast one takes plain
  // lines; the reference one the rest): the same checks and messages.
  refused(R"({"rev":1,"op":"node","key":"x","type":"fact"})" "\n",
          "line 1: missing field \"rev_ts\" (not a line of amem log?)");
  refused(R"({"op":"node","key":"x","type":"fact"})" "\n", "line 1: missing field \"rev\"");
  refused(R"({"rev":1.0,"rev_ts":1,"op":"node","key":"x","type":"fact"})" "\n",
          "line 1: rev: not an integer");
  refused(R"({"rev":0,"rev_ts":1,"op":"node","key":"x","type":"fact"})" "\n",
          "line 1: rev: must be at least 1");
  refused(R"({"rev":1,"rev_ts":1,"op":"node","key":"x","type":"fact"})" "\n"
          R"({"rev":1,"rev_ts":2,"op":"node","key":"y","type":"fact"})" "\n",
          "line 2: rev_ts 2 differs from the 1 of revision 1's earlier lines");
  refused(R"({"rev":1,"rev_ts":1,"rev":1,"op":"node","key":"x","type":"fact"})" "\n",
          "line 1: malformed JSON");

  SECTION("a log that does not continue the store") {
    REQUIRE(copy.Run({"replay", "-"}, log).exit_code == 0);
    const std::string replayed = copy.Stats();
    RunResult r = copy.Run({"replay", "-"}, log);
    CHECK(r.exit_code == 4);
    CHECK(r.err.find("line 1: revision 1: does not continue the store, which is at revision 3") !=
          std::string::npos);
    CHECK(copy.Stats() == replayed);
  }
  SECTION("a fresh store a bad replay would create is not left behind") {
    WriteFile(copy.dir() / "bad.log", R"({"rev":1,"rev_ts":1,"op":"del_node","key":"x"})" "\n");
    RunResult r = Amem(copy.dir() / "fresh", {"replay", copy.dir() / "bad.log"});
    CHECK(r.exit_code == 4);
    CHECK(r.err.find("line 1: revision 1: 1 of its 1 operations change nothing") !=
          std::string::npos);
    CHECK_FALSE(std::filesystem::exists(copy.dir() / "fresh"));
  }
}

TEST_CASE("replay cli: ingest deletes keep their own ts, run and task", "[replay][tools]") {
  TempStore s;
  REQUIRE(s.Run({"ingest", "-", "--ts", "100", "--run", "r0"},
                R"({"op":"kv","scope":"s","ns":"n","key":"k","value":"v"})" "\n")
              .exit_code == 0);
  REQUIRE(s.Run({"ingest", "-", "--ts", "200", "--run", "r0"},
                R"({"op":"del_kv","scope":"s","ns":"n","key":"k","ts":150,"run":"r1",)"
                R"("task":"t1"})" "\n")
              .exit_code == 0);
  RunResult h = s.Run({"kv-history", "s", "n", "k", "--json"});
  REQUIRE(h.exit_code == 0);
  json last = h.json()["versions"].back();
  CHECK(last["ts"] == 150);
  CHECK(last["run"] == "r1");
  CHECK(last["task"] == "t1");
}

}  // namespace
}  // namespace amem::testing
