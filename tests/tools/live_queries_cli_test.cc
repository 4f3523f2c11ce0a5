// Live queries (snapshot/live.h): after random rounds of writes, every query on
// the store's live view (base + delta, merged now and then) prints the same JSON
// as the same query with --snapshot on a fresh full export, `index` aside.
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "tests/store/store_test_util.h"
#include "tests/tools/amem_runner.h"

using amem::testing::RunProgram;
using amem::testing::RunResult;
using amem::testing::TempDir;
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

RunResult Run(const std::string& store, std::vector<std::string> args,
              const std::vector<std::string>& env, const std::string& input = "") {
  args.insert(args.begin(), {"--store", store});
  return RunProgram(AMEM_BINARY, args, input, env, "");
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
  REQUIRE(Run(store, {"init"}, {}).exit_code == 0);
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
  for (int round = 0; round < 12; ++round) {
    INFO("round " << round);
    const std::string ops = Round(&rng, round, &ts);
    RunResult w = Run(store, {"ingest", "-"}, {}, ops);
    INFO(w.err);
    REQUIRE(w.exit_code == 0);
    if (round % 3 == 2) REQUIRE(Run(store, {"put-node", "k:9", "--type", "fact", "--content",
                                            "single write " + std::to_string(round), "--ts",
                                            std::to_string(++ts)}, {}).exit_code == 0);
    // Every fourth round merges at once (a tiny threshold); the others layer.
    const bool merge = round % 4 == 3;
    std::vector<std::string> env = {merge ? "AMEM_MERGE_BYTES=1" : "AMEM_MERGE_BYTES=1000000000",
                                    "AMEM_MERGE_FRACTION=100"};
    const std::string full = dir.path() + "/full-" + std::to_string(round) + ".amem";
    REQUIRE(Run(store, {"export", full}, {}).exit_code == 0);
    for (const auto& q : queries) {
      INFO(q[0] << (q.size() > 1 ? " " + q[1] : std::string()));
      std::vector<std::string> live = {"--json"};
      live.insert(live.end(), q.begin(), q.end());
      std::vector<std::string> file = live;
      file.insert(file.end(), {"--snapshot", full});
      RunResult a = Run(store, live, env), b = Run(store, file, {});
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
