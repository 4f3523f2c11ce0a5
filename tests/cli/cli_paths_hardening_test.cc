// The CLI against the second audit's paths, temp files and hostile logs (issue
// 41): control characters in path arguments, a link planted at a temp name,
// concurrent `log --out`, 100K query words, a recursive replay line, a FIFO query
// log, an over-long ingest line and temp files left by killed exports.
#include <catch2/catch.hpp>

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "tests/cli/amem_runner.h"
#include "tools/io/ingest.h"
#include "tools/io/query_table.h"

namespace amem::testing {
namespace {

namespace fs = std::filesystem;

// The names in `dir`, sorted.
std::vector<std::string> Names(const std::string& dir) {
  std::vector<std::string> out;
  for (const auto& e : fs::directory_iterator(dir)) out.push_back(e.path().filename().string());
  std::sort(out.begin(), out.end());
  return out;
}

// amem in `cwd` with `args` (no --store prepended), under `timeout 60` so that a
// hang fails the test instead of blocking it (exit 124).
RunResult AmemIn(const std::string& cwd, const std::vector<std::string>& args,
                 const std::vector<std::string>& env = {}) {
  std::vector<std::string> full{"60", AMEM_BINARY};
  full.insert(full.end(), args.begin(), args.end());
  return RunProgram("/usr/bin/timeout", full, "", env, cwd);
}

// A store in `t` with a few memories; returns a snapshot of it.
std::string Populate(const TempStore& t) {
  RequireOk(t.Run({"ingest", "-"},
                  R"({"op":"node","key":"file:a.cc","type":"file","content":"lmdb snapshot cache"})"
                  "\n"
                  R"({"op":"node","key":"fact:b","type":"fact","content":"the cache uses lmdb"})"
                  "\n"));
  const std::string snap = t.dir().Sub("s.amem");
  RequireOk(t.Run({"export", snap}));
  return snap;
}

}  // namespace

TEST_CASE("a control character in any path argument is refused and creates nothing",
          "[cli][hardening][paths]") {
  TempStore t;
  const std::string snap = Populate(t);
  const std::string work = t.dir().Sub("work");
  fs::create_directories(work + "/.git/hooks");
  const std::vector<std::string> before = Names(work);
  const std::string store = "--store=" + t.store();
  // Every front-end spelling of a path: positional, flag, global flag, environment.
  const std::vector<std::vector<std::string>> calls = {
      {store, "export", ".git/hooks/pre-commit\x01.amem"},
      {store, "export", ".npmrc\x1b.amem"},
      {store, "log", "--out", ".npmrc\n"},
      {store, "--query-log", "q\x7f.jsonl", "text-search", "lmdb"},
      {store, "text-search", "lmdb", "--snapshot", "s\x02.amem"},
      {store, "impact", "--diff", "d\x0b.diff"},
      {store, "ingest", "in\r.jsonl"},
      {store, "replay", "in\x1f.jsonl"},
      {store, "replay-queries", "q\x03.jsonl", "--snapshot", snap},
      {store, "import", "x\xc2\x85.amem"},
      {store, "verify", "x\t.amem"},
      {store, "diff", snap, "x\x04.amem"},
      {store, "index", "--scip", "i\x05.scip"},
      {"--store", "st\x06ore", "init"},
  };
  for (const auto& args : calls) {
    RunResult r = AmemIn(work, args);
    INFO(args[1] << " " << args[2] << " -> " << r.exit_code << " " << r.err);
    CHECK(r.exit_code == 2);
    CHECK(r.err.find("the path holds a control character") != std::string::npos);
    CHECK(r.out.empty());
  }
  RunResult env = AmemIn(work, {"init"}, {"AMEM_STORE=.am\x01em"});
  CHECK(env.exit_code == 2);
  CHECK(env.err.find("control character") != std::string::npos);
  CHECK(Names(work) == before);
  CHECK(Names(work + "/.git/hooks").empty());

  // A recorded query whose file argument holds one: that line's error, nothing read.
  const std::string log = t.dir().Sub("bad-arg.jsonl");
  WriteFile(log, R"({"ts":1,"source":"cli","query":"impact","args":["--diff","/etc/passwd\u0001"],"revision":null,"digest":"0000000000000000"})"
                 "\n");
  RunResult replay = t.Run({"replay-queries", log, "--snapshot", snap, "--json"});
  CHECK(replay.exit_code == 1);
  CHECK(replay.json()["queries"][0]["error"].get<std::string>().find("control character") !=
        std::string::npos);
}

TEST_CASE("log --out never writes through a link planted at a temp name",
          "[cli][hardening][paths]") {
  TempStore t;
  Populate(t);
  const std::string out = t.dir().Sub("run.log"), victim = t.dir().Sub("victim");
  WriteFile(victim, "precious");
  // The fixed name the former writer used: a link planted there was followed.
  fs::create_symlink(victim, out + ".tmp");
  RequireOk(t.Run({"log", "--out", out}));
  CHECK(ReadFile(victim) == "precious");
  CHECK(fs::is_symlink(out + ".tmp"));
  CHECK_FALSE(fs::is_symlink(out));
  const std::string log = ReadFile(out);
  CHECK(log.find("\"key\":\"file:a.cc\"") != std::string::npos);

  // Two runs at once: each writes a temp file of its own; both succeed and the
  // file is one whole log, with no temp file left.
  const std::string shared = t.dir().Sub("shared.log");
  RunResult a, b;
  std::thread ta([&] { a = t.Run({"log", "--out", shared}); });
  std::thread tb([&] { b = t.Run({"log", "--out", shared}); });
  ta.join();
  tb.join();
  RequireOk(a);
  RequireOk(b);
  CHECK(ReadFile(shared) == log);
  for (const std::string& name : Names(t.dir().path())) {
    CHECK(name.find("shared.log.tmp") == std::string::npos);
  }
}

TEST_CASE("100K query words are refused by the text cap, and just under it is answered",
          "[cli][hardening][paths]") {
  TempStore t;
  const std::string snap = Populate(t);
  std::vector<std::string> args{"text-search"};
  for (int i = 0; i < 100000; ++i) args.push_back("w" + std::to_string(i));
  args.insert(args.end(), {"--snapshot", snap});
  RunResult r = t.Run(args);
  RequireError(r, 2, "text-search",
               "QUERY: at most " + std::to_string(io::kMaxTextChars) + " characters");
  // Just under the cap: distinct words, the last of which matches.
  std::string words;
  for (int i = 0; words.size() + 12 < io::kMaxTextChars; ++i) words += "w" + std::to_string(i) + " ";
  words += "lmdb";
  REQUIRE(words.size() <= io::kMaxTextChars);
  RunResult ok = t.Run({"text-search", words, "--snapshot", snap, "--json"});
  RequireOk(ok);
  CHECK(ok.json()["results"].size() == 2);
  RunResult hybrid = t.Run({"hybrid-search", words + " " + words, "--snapshot", snap});
  RequireError(hybrid, 2, "hybrid-search", "at most");
}

TEST_CASE("replay-queries refuses, by line, a line that is not one of the query commands",
          "[cli][hardening][paths]") {
  TempStore t;
  const std::string snap = Populate(t);
  const std::string one = t.dir().Sub("one.jsonl");
  // The audit's line replays this very file: it recursed until the stack ran out.
  WriteFile(one,
            R"({"ts":1,"source":"cli","query":"text-search","args":["lmdb"],"revision":null,"digest":"0000000000000000"})"
            "\n"
            R"({"ts":1,"source":"cli","query":"replay-queries","args":[")" + one +
                R"("],"revision":null,"digest":"0000000000000000"})"
                "\n");
  // That line's error, with its number; the other lines are still asked.
  RunResult r = t.Run({"replay-queries", one, "--snapshot", snap, "--json"});
  INFO(r.err);
  REQUIRE(r.exit_code == 1);
  nlohmann::json report = r.json();
  CHECK(report["queries"][0]["error"].is_null());
  CHECK(report["queries"][1]["line"] == 2);
  CHECK(report["queries"][1]["error"] ==
        "Invalid argument: \"replay-queries\" is not one of the 16 query commands "
        "(docs/QUERIES.md)");
  WriteFile(one, R"({"ts":1,"source":"cli","query":"init","args":[],"revision":null,"digest":"0000000000000000"})"
                 "\n");
  r = t.Run({"replay-queries", one, "--snapshot", snap});
  CHECK(r.exit_code == 1);
  CHECK(r.out.find("line 1  cli init : changed\n  error: Invalid argument: \"init\" is not one "
                   "of the 16 query commands") != std::string::npos);

  // A recorded line of 80K words: answered (its words are over the cap), linearly.
  std::string args;
  for (int i = 0; i < 80000; ++i) args += std::string(i ? "," : "") + "\"w" + std::to_string(i) + "\"";
  WriteFile(one, R"({"ts":1,"source":"cli","query":"text-search","args":[)" + args +
                     R"(],"revision":null,"digest":"0000000000000000"})"
                     "\n");
  RunResult big = t.Run({"replay-queries", one, "--snapshot", snap, "--json"});
  CHECK(big.exit_code == 1);
  CHECK(big.json()["queries"][0]["error"].get<std::string>().find("at most") != std::string::npos);
}

TEST_CASE("a FIFO as the query log is refused without blocking the query",
          "[cli][hardening][paths]") {
  TempStore t;
  Populate(t);
  const std::string fifo = t.dir().Sub("queries.fifo");
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  RunResult r = AmemIn(t.dir().path(), {"--store", t.store(), "--query-log", fifo,
                                         "text-search", "lmdb"});
  INFO(r.err);
  CHECK(r.exit_code == 0);  // answered; the log is a warning
  CHECK(r.out.find("file:a.cc") != std::string::npos);
  CHECK(r.err.find("warning: Invalid argument: query log " + fifo + ": not a regular file") !=
        std::string::npos);
  // A regular file still gets its line.
  const std::string log = t.dir().Sub("queries.jsonl");
  RequireOk(t.Run({"--query-log", log, "text-search", "lmdb"}));
  CHECK(Lines(ReadFile(log)).size() == 1);
}

TEST_CASE("an ingest or replay line over the cap is refused by its number, nothing written",
          "[cli][hardening][paths]") {
  TempStore t;
  Populate(t);
  const std::string before = t.Stats();
  const std::string file = t.dir().Sub("long.jsonl");
  WriteFile(file, R"({"op":"node","key":"fact:ok","type":"fact","content":"ok"})"
                  "\n"
                  R"({"op":"node","key":"fact:long","type":"fact","content":")" +
                      std::string(io::kMaxLineBytes, 'a') + "\"}\n");
  const std::string needle =
      "line 2: longer than " + std::to_string(io::kMaxLineBytes) + " bytes";
  RequireError(t.Run({"ingest", file}), 4, "ingest", needle);
  CHECK(t.Stats() == before);
  // From a pipe, too (copied to a spool first).
  RequireError(t.Run({"ingest", "-"}, ReadFile(file)), 4, "ingest", needle);
  CHECK(t.Stats() == before);
  // replay: a new store is not left behind.
  const std::string copy = t.dir().Sub("copy");
  RequireError(Amem(copy, {"replay", file}), 4, "replay", needle);
  CHECK_FALSE(fs::exists(copy));
}

TEST_CASE("export and compact remove temp files of killed writers and only those",
          "[cli][hardening][paths]") {
  TempStore t;
  Populate(t);
  const std::string hex = ".0123456789abcdef";
  const std::string dead = std::to_string(DeadPid()), live = std::to_string(::getpid());
  const std::string out = t.dir().Sub("out.amem");
  WriteFile(out + ".tmp." + dead + hex, std::string(1 << 20, 'x'));
  WriteFile(out + ".tmp." + live + hex, "a live writer's");
  WriteFile(t.dir().Sub("other.amem.tmp." + dead + hex), "another target's");
  RequireOk(t.Run({"export", out}));
  CHECK_FALSE(fs::exists(out + ".tmp." + dead + hex));
  CHECK(fs::exists(out + ".tmp." + live + hex));
  CHECK(fs::exists(t.dir().Sub("other.amem.tmp." + dead + hex)));

  // compact: the store directory's own (its base and delta, past snapshots).
  RequireOk(t.Run({"text-search", "lmdb"}));  // the base exists
  fs::create_directories(t.store() + "/snapshots");
  WriteFile(t.store() + "/current.amem.tmp." + dead + hex, "stale base");
  WriteFile(t.store() + "/snapshots/rev-1.amem.tmp." + dead + hex, "stale past");
  WriteFile(t.store() + "/current.amdl.tmp." + live + hex, "a live writer's");
  RunResult r = t.Run({"compact", "--json"});
  RequireOk(r);
  CHECK(r.json()["stale_temp_files_removed"] == 2);
  CHECK_FALSE(fs::exists(t.store() + "/current.amem.tmp." + dead + hex));
  CHECK_FALSE(fs::exists(t.store() + "/snapshots/rev-1.amem.tmp." + dead + hex));
  CHECK(fs::exists(t.store() + "/current.amdl.tmp." + live + hex));
}

}  // namespace amem::testing
