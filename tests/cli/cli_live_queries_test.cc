// Live queries (snapshot/live.h): after random rounds of writes, every query on
// the store's live view (base + delta, merged now and then) prints the same JSON
// as the same query with --snapshot on a fresh full export, `index` aside.
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include <atomic>
#include <chrono>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <thread>
#include <random>
#include <string>
#include <vector>

#include "tests/store/store_test_util.h"
#include "tests/cli/amem_runner.h"
#include "tests/sanitizer.h"
#include "tests/test_paths.h"

using amem::testing::AmemEnv;
using amem::testing::RunProgram;
using amem::testing::RunResult;
using amem::testing::TempDir;
using amem::testing::kSanitizerBuild;
using Json = nlohmann::json;

namespace {

// Drops what legitimately differs: dense numbers and the revision a live query
// reports (a file given with --snapshot has none).
void Strip(Json* j) {
  if (j->is_object()) {
    j->erase("index");
    j->erase("revision");
    for (auto& [k, v] : j->items()) Strip(&v);
  } else if (j->is_array()) {
    for (auto& v : *j) Strip(&v);
  }
}

// One round of random writes as one ingest file: nodes (new and overwritten),
// deletes, edges and their deletes, a custom relation, supersede chains, kv.
std::string Round(std::mt19937* rng, int round, int64_t* ts) {
  static const char* kTypes[] = {"fact", "decision", "inference", "file", "symbol", "entity"};
  static const char* kRels[] = {"supports", "caused_by", "supersedes", "contradicts",
                                "related_to", "calls", "mentions"};
  static const char* kWords[] = {"retry", "cache", "policy", "lmdb", "store", "query",
                                 "never", "not", "timeout", "index", "graph", "agent"};
  auto pick = [&](int n) { return static_cast<int>((*rng)() % static_cast<unsigned>(n)); };
  auto key = [&]() { return "k:" + std::to_string(pick(40)); };
  std::string out;
  if (round == 0) out += R"({"op":"rel","name":"mentions"})" "\n";
  const int ops = 5 + pick(25);
  for (int o = 0; o < ops; ++o) {
    Json line;
    int what = pick(10);
    if (what < 4) {
      std::string content;
      for (int w = 0, n = 2 + pick(6); w < n; ++w) content += std::string(w ? " " : "") + kWords[pick(12)];
      line = {{"op", "node"}, {"key", key()}, {"type", kTypes[pick(6)]}, {"content", content},
              {"confidence", 0.3 + 0.1 * pick(7)}, {"run", "run-" + std::to_string(pick(3))}};
    } else if (what < 8) {
      line = {{"op", "edge"}, {"src", key()}, {"rel", kRels[pick(7)]}, {"dst", key()},
              {"weight", 0.25 * (1 + pick(4))}};
    } else if (what == 8) {
      line = pick(2) ? Json{{"op", "del_node"}, {"key", key()}}
                     : Json{{"op", "del_edge"}, {"src", key()}, {"rel", kRels[pick(7)]}, {"dst", key()}};
    } else {
      line = {{"op", "kv"}, {"scope", "s"}, {"ns", "n"}, {"key", "p" + std::to_string(pick(5))},
              {"value", "v" + std::to_string(pick(100))}};
    }
    if (line["op"] != "del_node" && line["op"] != "del_edge") line["ts"] = ++*ts;
    out += line.dump() + "\n";
  }
  return out;
}

}  // namespace

TEST_CASE("live queries answer as a full export does, across deltas and merges",
          "[tools][live]") {
  TempDir dir;
  const std::string store = dir.path() + "/s";
  REQUIRE(AmemEnv(store, {"init"}, {}).exit_code == 0);
  std::mt19937 rng(20261125);
  int64_t ts = 1000;
  const std::vector<std::vector<std::string>> queries = {
      {"traverse", "k:1"},
      {"search", "--type", "fact"},
      {"temporal", "1000..1040", "1040.."},
      {"impact", "k:2"},
      {"context", "k:3", "k:4"},
      {"resolve", "k:5"},
      {"path", "k:1", "k:7"},
      {"similar", "--text", "retry cache policy"},
      {"text-search", "retry cache"},
      {"hybrid-search", "lmdb store query"},
      {"centrality"},
      {"centrality", "--metric", "betweenness"},
      {"centrality", "--metric", "degree"},
      {"revise", "k:6"},
      {"gaps"},
      {"analogy", "k:8"},
      {"consolidate"},
      {"drift"},
  };
  int merged_rounds = 0, layered_rounds = 0, answered = 0, asked = 0;
  // Rounds 0-3 already layer, merge and follow a single write; the sanitizer build
  // stops there (each round starts 37 amem processes).
  const int rounds = kSanitizerBuild ? 4 : 12;
  for (int round = 0; round < rounds; ++round) {
    INFO("round " << round);
    const std::string ops = Round(&rng, round, &ts);
    RunResult w = AmemEnv(store, {"ingest", "-"}, {}, ops);
    INFO(w.err);
    REQUIRE(w.exit_code == 0);
    if (round % 3 == 2) REQUIRE(AmemEnv(store, {"put-node", "k:9", "--type", "fact", "--content",
                                            "single write " + std::to_string(round), "--ts",
                                            std::to_string(++ts)}, {}).exit_code == 0);
    // Every fourth round merges at once (a tiny threshold); the others layer.
    const bool merge = round % 4 == 3;
    std::vector<std::string> env = {merge ? "AMEM_MERGE_BYTES=1" : "AMEM_MERGE_BYTES=1000000000",
                                    "AMEM_MERGE_FRACTION=100"};
    const std::string full = dir.path() + "/full-" + std::to_string(round) + ".amem";
    REQUIRE(AmemEnv(store, {"export", full}, {}).exit_code == 0);
    for (const auto& q : queries) {
      INFO(q[0] << (q.size() > 1 ? " " + q[1] : std::string()));
      std::vector<std::string> live = {"--json"};
      live.insert(live.end(), q.begin(), q.end());
      std::vector<std::string> file = live;
      file.insert(file.end(), {"--snapshot", full});
      RunResult a = AmemEnv(store, live, env), b = AmemEnv(store, file, {});
      INFO(a.err << b.err);
      REQUIRE(a.exit_code == b.exit_code);
      ++asked;
      answered += a.exit_code == 0;
      if (a.exit_code != 0) {
        CHECK(a.err == b.err);
        continue;
      }
      Json ja = Json::parse(a.out), jb = Json::parse(b.out);
      Strip(&ja);
      Strip(&jb);
      CHECK(ja.dump() == jb.dump());
    }
    const bool has_delta = std::filesystem::exists(store + "/current.amdl");
    (has_delta ? layered_rounds : merged_rounds) += 1;
  }
  CHECK(answered * 4 > asked * 3);  // most queries answer (a missing node is an error)
  CHECK(layered_rounds > 0);  // both paths were exercised
  CHECK(merged_rounds > 0);
}

namespace {

// The JSON of `query` on the store (as of `as_of` when not empty) and on a full
// export of the same revision, `index` and `revision` aside.
void CheckAgainstExport(const std::string& store, const std::string& scratch,
                        const std::vector<std::string>& query, const std::string& as_of,
                        const std::vector<std::string>& env = {}) {
  INFO(query[0] << " as of " << (as_of.empty() ? "latest" : as_of));
  std::vector<std::string> exp = {"export", scratch};
  if (!as_of.empty()) exp.insert(exp.end(), {"--as-of", as_of});
  RunResult e = AmemEnv(store, exp, {});
  INFO(e.err);
  REQUIRE(e.exit_code == 0);
  std::vector<std::string> live = {"--json"};
  live.insert(live.end(), query.begin(), query.end());
  std::vector<std::string> file = live;
  if (!as_of.empty()) live.insert(live.end(), {"--as-of", as_of});
  file.insert(file.end(), {"--snapshot", scratch});
  RunResult a = AmemEnv(store, live, env), b = AmemEnv(store, file, {});
  INFO(a.err << b.err);
  REQUIRE(a.exit_code == 0);
  REQUIRE(b.exit_code == 0);
  Json ja = Json::parse(a.out), jb = Json::parse(b.out);
  Strip(&ja);
  Strip(&jb);
  CHECK(ja.dump() == jb.dump());
}

size_t CountFiles(const std::string& dir, std::string_view infix) {
  size_t n = 0;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(dir, ec)) {
    n += e.path().filename().string().find(infix) != std::string::npos;
  }
  return n;
}

// Waits (a minute at most) until no merge process a query started holds
// merge.lock and no temp file is left in `store`: a merge running in the
// background has one while it exports; one a dead process left stays.
void WaitForBackgroundMerges(const std::string& store) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::minutes(1);
  auto merging = [&] {
    const int fd = ::open((store + "/merge.lock").c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return false;
    const bool held = ::flock(fd, LOCK_EX | LOCK_NB) != 0;
    ::close(fd);
    return held;
  };
  while ((merging() || CountFiles(store, ".tmp.") > 0) &&
         std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

}  // namespace

TEST_CASE("live queries as of past revisions, before and after the base; the cache stays bounded",
          "[tools][live]") {
  TempDir dir;
  const std::string store = dir.path() + "/s";
  REQUIRE(AmemEnv(store, {"init"}, {}).exit_code == 0);
  std::mt19937 rng(7);
  int64_t ts = 1000;
  std::vector<std::string> revs;
  for (int round = 0; round < 60; ++round) {
    REQUIRE(AmemEnv(store, {"ingest", "-"}, {}, Round(&rng, round, &ts)).exit_code == 0);
    RunResult r = AmemEnv(store, {"--json", "stats"}, {});
    REQUIRE(r.exit_code == 0);
    revs.push_back(std::to_string(Json::parse(r.out)["revision"].get<uint64_t>()));
    // The base is made at round 30: revisions before it come from snapshots/.
    if (round == 30) REQUIRE(AmemEnv(store, {"text-search", "retry"}, {}).exit_code == 0);
  }
  const std::vector<std::string> env = {"AMEM_SNAPSHOT_CACHE_FILES=3", "AMEM_MERGE_FRACTION=100"};
  for (size_t k : {size_t{5}, size_t{20}, size_t{35}, size_t{50}, size_t{59}}) {
    CheckAgainstExport(store, dir.path() + "/past.amem", {"text-search", "retry cache policy"},
                       revs[k], env);
    CheckAgainstExport(store, dir.path() + "/past.amem", {"centrality"}, revs[k], env);
    CheckAgainstExport(store, dir.path() + "/past.amem", {"traverse", "k:1"}, revs[k], env);
  }
  // 50 distinct past revisions: the cache never holds more than its bound.
  for (size_t k = 0; k < 50; ++k) {
    RunResult r = AmemEnv(store, {"text-search", "retry", "--as-of", revs[k]}, env);
    REQUIRE(r.exit_code == 0);
    CHECK(CountFiles(store + "/snapshots", "rev-") <= 3);
  }
}

TEST_CASE("two processes alternating writes and queries see their own writes, never an error",
          "[tools][live]") {
  TempDir dir;
  const std::string store = dir.path() + "/s";
  REQUIRE(AmemEnv(store, {"init"}, {}).exit_code == 0);
  std::mt19937 rng(11);
  int64_t ts = 1000;
  REQUIRE(AmemEnv(store, {"ingest", "-"}, {}, Round(&rng, 0, &ts)).exit_code == 0);
  std::atomic<int> failures{0};
  auto worker = [&](const std::string& name, bool merge_often) {
    // One of the two merges after nearly every write, the other layers deltas.
    std::vector<std::string> env = {merge_often ? "AMEM_MERGE_BYTES=1" : "AMEM_MERGE_FRACTION=100"};
    for (int i = 0; i < 15; ++i) {
      // A word of its own: letters only, as a digit would split off a shared part.
      const std::string token = name + "token" + static_cast<char>('a' + i);
      RunResult w = AmemEnv(store, {"put-node", "fact:" + name, "--type", "fact", "--content",
                                "shared words " + token},
                        env);
      RunResult q = AmemEnv(store, {"--json", "text-search", token}, env);
      bool ok = w.exit_code == 0 && q.exit_code == 0;
      if (ok) {
        Json j = Json::parse(q.out);
        ok = j["results"].size() == 1 && j["results"][0]["key"] == "fact:" + name;
      }
      if (!ok) {
        ++failures;
        UNSCOPED_INFO(name << " " << i << ": " << w.err << q.err << q.out);
      }
    }
  };
  std::thread a(worker, "alpha", true), b(worker, "beta", false);
  a.join();
  b.join();
  CHECK(failures.load() == 0);
  // The queries past the bound left merges to processes of their own.
  WaitForBackgroundMerges(store);
  CHECK(CountFiles(store, ".tmp.") == 0);  // no half file left behind
  CheckAgainstExport(store, dir.path() + "/full.amem", {"text-search", "shared words"}, "");
}

TEST_CASE("a query killed while compiling a delta or merging leaves the store readable",
          "[tools][live]") {
  TempDir dir;
  const std::string store = dir.path() + "/s";
  REQUIRE(AmemEnv(store, {"init"}, {}).exit_code == 0);
  // Big enough that an export takes a while, so kills land inside it.
  std::string big;
  for (int i = 0; i < 4000; ++i) {
    big += Json{{"op", "node"}, {"key", "n:" + std::to_string(i)}, {"type", "fact"},
                {"content", "retry cache policy entry " + std::to_string(i)}, {"ts", 1000 + i}}
               .dump() +
           "\n";
    big += Json{{"op", "edge"}, {"src", "n:" + std::to_string(i)}, {"rel", "supports"},
                {"dst", "n:" + std::to_string((i * 7) % 4000)}, {"ts", 1000 + i}}
               .dump() +
           "\n";
  }
  REQUIRE(AmemEnv(store, {"ingest", "-"}, {}, big).exit_code == 0);
  REQUIRE(AmemEnv(store, {"text-search", "retry"}, {}).exit_code == 0);  // the base
  int killed = 0;
  for (int i = 0; i < 16; ++i) {
    INFO("kill " << i);
    REQUIRE(AmemEnv(store, {"put-node", "n:" + std::to_string(i), "--type", "fact", "--content",
                        "changed retry " + std::to_string(i)},
                {})
                .exit_code == 0);
    // Even rounds merge (a full export, in the query's foreground: the kill is to
    // land in there), odd ones compile and write a delta.
    std::vector<std::string> env = {i % 2 == 0 ? "AMEM_MERGE_BYTES=1" : "AMEM_MERGE_FRACTION=100",
                                    "AMEM_FOREGROUND_MERGE=1"};
    RunResult k = RunProgram(AMEM_BINARY, {"--store", store, "text-search", "retry"}, "", env, "",
                             1000 + 2500 * (i / 2));
    killed += k.exit_code == 128 + SIGKILL;
    CheckAgainstExport(store, dir.path() + "/full.amem", {"text-search", "changed retry"}, "",
                       {"AMEM_MERGE_FRACTION=100"});
  }
  CHECK(killed > 0);
  // The next base export removes what killed writers left.
  REQUIRE(AmemEnv(store, {"put-node", "n:last", "--type", "fact", "--content", "x"}, {}).exit_code == 0);
  REQUIRE(AmemEnv(store, {"text-search", "retry"}, {"AMEM_MERGE_BYTES=1", "AMEM_FOREGROUND_MERGE=1"})
              .exit_code == 0);
  CHECK(CountFiles(store, ".tmp.") == 0);
}

// Issue 40, point 2: the first query after `amem ingest` (or `amem replay`) finds its
// view made by the command and exports nothing in the foreground.
TEST_CASE("ingest, replay and import-mcp-memory compile the query base after their commit, unless --no-compile",
          "[cli][live][ingest-compile]") {
  TempDir dir;
  const std::string store = dir.Sub("s");
  REQUIRE(AmemEnv(store, {"init"}, {}).exit_code == 0);
  std::string lines;
  for (int i = 0; i < 50; ++i) {
    lines += R"({"op":"node","key":"fact:n)" + std::to_string(i) +
             R"(","type":"fact","content":"retry policy note )" + std::to_string(i) + "\"}\n";
  }
  namespace fs = std::filesystem;
  const std::string base = store + "/current.amem", rev = store + "/current.rev";
  auto identity = [&] {  // inode and mtime: a re-export renames a new file into place
    struct stat st {};
    REQUIRE(::stat(base.c_str(), &st) == 0);
    return std::to_string(st.st_ino) + ":" + std::to_string(st.st_mtim.tv_sec) + "." +
           std::to_string(st.st_mtim.tv_nsec);
  };
  auto rev_text = [&] {
    std::ifstream in(rev);
    std::string line;
    std::getline(in, line);
    return line.substr(0, line.find(' '));
  };
  // The command made the base of revision 1, and the first query reads it: it
  // exports nothing. Returns the base's identity.
  auto base_read_as_made = [&] {
    REQUIRE(fs::exists(base));
    CHECK(rev_text() == "1");
    const std::string made = identity();
    RunResult q = AmemEnv(store, {"--json", "text-search", "retry"}, {});
    REQUIRE(q.exit_code == 0);
    CHECK(identity() == made);
    CHECK(q.json()["results"].size() == 10);
    return made;
  };

  SECTION("ingest") {
    RunResult r = AmemEnv(store, {"ingest", "-"}, {}, lines);
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    CHECK(r.out == "ingested 50 operations from 50 lines at rev 1\n");
    const std::string made = base_read_as_made();

    // A small ingest later: a delta over the base, compiled and cached by the ingest.
    REQUIRE(AmemEnv(store, {"ingest", "-"}, {},
                R"({"op":"node","key":"fact:late","type":"fact","content":"late retry"})"
                "\n")
                .exit_code == 0);
    CHECK(identity() == made);
    CHECK(fs::exists(store + "/current.amdl"));
    const auto amdl_time = fs::last_write_time(store + "/current.amdl");
    RunResult q = AmemEnv(store, {"--json", "get-node", "fact:late"}, {});
    CHECK(q.exit_code == 0);
    CHECK(fs::last_write_time(store + "/current.amdl") == amdl_time);  // read, not compiled
  }
  SECTION("--no-compile leaves it to the first query") {
    REQUIRE(AmemEnv(store, {"ingest", "--no-compile", "-"}, {}, lines).exit_code == 0);
    CHECK_FALSE(fs::exists(base));
    REQUIRE(AmemEnv(store, {"text-search", "retry"}, {}).exit_code == 0);
    CHECK(fs::exists(base));
    CHECK(rev_text() == "1");
  }
  SECTION("replay") {
    REQUIRE(AmemEnv(store, {"ingest", "--no-compile", "-"}, {}, lines).exit_code == 0);
    RunResult log = AmemEnv(store, {"log"}, {});
    REQUIRE(log.exit_code == 0);
    const std::string copy = dir.Sub("copy");
    RunResult r = AmemEnv(copy, {"replay", "-"}, {}, log.out);
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    CHECK(fs::exists(copy + "/current.amem"));
    const std::string copy_none = dir.Sub("copy2");
    REQUIRE(AmemEnv(copy_none, {"replay", "--no-compile", "-"}, {}, log.out).exit_code == 0);
    CHECK_FALSE(fs::exists(copy_none + "/current.amem"));
  }
  SECTION("import-mcp-memory") {
    const std::string memory = dir.Sub("memory.jsonl");
    {
      std::ofstream out(memory);
      for (int i = 0; i < 20; ++i) {
        out << R"({"type":"entity","name":"E)" << i
            << R"(","entityType":"note","observations":["retry policy )" << i << "\"]}\n";
      }
    }
    RunResult r = AmemEnv(store, {"import-mcp-memory", memory}, {});
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    const std::string made = base_read_as_made();
    // Importing it again writes nothing and compiles nothing.
    REQUIRE(AmemEnv(store, {"import-mcp-memory", memory}, {}).exit_code == 0);
    CHECK(identity() == made);
    CHECK_FALSE(fs::exists(store + "/current.amdl"));

    const std::string none = dir.Sub("none");
    REQUIRE(AmemEnv(none, {"import-mcp-memory", "--no-compile", memory}, {}).exit_code == 0);
    CHECK_FALSE(fs::exists(none + "/current.amem"));
  }
}
