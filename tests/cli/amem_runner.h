// Test helpers that run the real amem binary (AMEM_BINARY) in a temporary
// directory and capture its exit code, stdout and stderr.
#ifndef AMEM_TESTS_CLI_AMEM_RUNNER_H_
#define AMEM_TESTS_CLI_AMEM_RUNNER_H_

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <set>
#include <tuple>
#include <vector>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "snapshot/format.h"
#include "snapshot/reader.h"

#include "tests/snapshot/snapshot_test_util.h"  // RedoPageChecksums
#include "tests/store/store_test_util.h"  // TempDir
#include "tests/test_paths.h"

extern char** environ;

namespace amem::testing {

struct RunResult {
  int exit_code = -1;
  std::string out, err;
  // Number of lines on stderr.
  int err_lines() const {
    int n = 0;
    for (char c : err) n += c == '\n';
    return n;
  }
  nlohmann::json json() const { return nlohmann::json::parse(out); }
};

inline std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

inline void WriteFile(const std::string& path, const std::string& data) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << data;
}

// Runs a program with `args`; stdin is `input`; `env` entries ("NAME=value") are
// added to the environment, from which AMEM_STORE is removed. `cwd` empty: inherit.
// `kill_after_us` > 0: SIGKILL the program that many microseconds after its start
// (crash tests); its exit_code is then 128 + 9 unless it finished first.
inline RunResult RunProgram(const std::string& program, const std::vector<std::string>& args,
                            const std::string& input, const std::vector<std::string>& env,
                            const std::string& cwd, int kill_after_us = 0) {
  TempDir io;
  WriteFile(io.Sub("in"), input);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, io.Sub("in").c_str(), O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, 1, io.Sub("out").c_str(),
                                   O_WRONLY | O_CREAT | O_TRUNC, 0600);
  posix_spawn_file_actions_addopen(&actions, 2, io.Sub("err").c_str(),
                                   O_WRONLY | O_CREAT | O_TRUNC, 0600);
  if (!cwd.empty()) posix_spawn_file_actions_addchdir_np(&actions, cwd.c_str());
  std::vector<std::string> argv_s{program};
  argv_s.insert(argv_s.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (std::string& a : argv_s) argv.push_back(a.data());
  argv.push_back(nullptr);
  std::vector<std::string> env_s;
  for (char** e = environ; *e != nullptr; ++e) {
    if (std::strncmp(*e, "AMEM_STORE=", 11) != 0) env_s.emplace_back(*e);
  }
  env_s.insert(env_s.end(), env.begin(), env.end());
  std::vector<char*> envp;
  for (std::string& e : env_s) envp.push_back(e.data());
  envp.push_back(nullptr);
  pid_t pid = 0;
  int rc = posix_spawn(&pid, program.c_str(), &actions, nullptr, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  RunResult result;
  if (rc != 0) return result;
  if (kill_after_us > 0) {
    ::usleep(static_cast<useconds_t>(kill_after_us));
    ::kill(pid, SIGKILL);
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
  }
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  result.out = ReadFile(io.Sub("out"));
  result.err = ReadFile(io.Sub("err"));
  return result;
}

// Runs amem with --store `store` prepended and `env` added to its environment.
inline RunResult AmemEnv(const std::string& store, std::vector<std::string> args,
                         const std::vector<std::string>& env = {},
                         const std::string& input = "") {
  args.insert(args.begin(), {"--store", store});
  return RunProgram(AMEM_BINARY, args, input, env, "");
}

// Runs amem with --store `store` prepended.
inline RunResult Amem(const std::string& store, const std::vector<std::string>& args,
                      const std::string& input = "") {
  return AmemEnv(store, args, {}, input);
}

// A temporary directory with an initialized store in it (dimension `dim`).
class TempStore {
 public:
  explicit TempStore(int dim = 4) : store_(dir_.Sub("store")) {
    RunResult r = Amem(store_, {"init", "--dimension", std::to_string(dim)});
    if (r.exit_code != 0) std::abort();
  }
  const std::string& store() const { return store_; }
  const TempDir& dir() const { return dir_; }
  RunResult Run(const std::vector<std::string>& args, const std::string& input = "") const {
    return Amem(store_, args, input);
  }
  // stats --json, for "nothing changed" checks (revision and counts).
  std::string Stats() const {
    RunResult r = Run({"stats", "--json"});
    if (r.exit_code != 0) return "stats failed: " + r.err;
    nlohmann::json j = nlohmann::json::parse(r.out);
    j.erase("map_size");
    j.erase("used_bytes");
    return j.dump();
  }

 private:
  TempDir dir_;
  std::string store_;
};

// A failed command: the exit code, one line on stderr naming the command, nothing on
// stdout.
inline void RequireError(const RunResult& r, int code, const std::string& cmd,
                         const std::string& needle = "") {
  INFO("stdout: " << r.out << "\nstderr: " << r.err);
  CHECK(r.exit_code == code);
  CHECK(r.err_lines() == 1);
  CHECK(r.err.rfind("amem " + cmd + ": ", 0) == 0);
  CHECK(r.out.empty());
  if (!needle.empty()) CHECK(r.err.find(needle) != std::string::npos);
}

inline void RequireOk(const RunResult& r) {
  INFO("stdout: " << r.out << "\nstderr: " << r.err);
  REQUIRE(r.exit_code == 0);
  REQUIRE(r.err.empty());
}

// A file of the demo's data (tests/data/demo).
inline std::string Demo(const std::string& name) {
  return std::string(AMEM_SOURCE_DIR) + "/tests/data/demo/" + name;
}

// The demo's three ingests into `store`.
inline void IngestDemo(const TempStore& s) {
  REQUIRE(s.Run({"ingest", Demo("1-explore.jsonl"), "--ts", "1700000000", "--run", "run-1",
                 "--scope", "amem"}).exit_code == 0);
  REQUIRE(s.Run({"ingest", Demo("2-correct.jsonl"), "--ts", "1700000600", "--run", "run-1",
                 "--scope", "amem"}).exit_code == 0);
  REQUIRE(s.Run({"ingest", Demo("3-next-run.jsonl"), "--ts", "1700003600", "--run", "run-2",
                 "--scope", "amem"}).exit_code == 0);
}

// The lines of `text`, without their newlines.
inline std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    out.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  return out;
}

// One fact node per line, {"op":"node",...}, for amem ingest.
// The "key" of each row, in order.
inline std::vector<std::string> KeysOf(const nlohmann::json& rows) {
  std::vector<std::string> keys;
  for (const auto& row : rows) keys.push_back(row["key"].get<std::string>());
  return keys;
}

// The sources of the live edges entering `key` by `rel` (`amem in`); one
// "error: ..." entry when the command fails.
inline std::set<std::string> Sources(const TempStore& s, const std::string& key,
                                     const std::string& rel) {
  RunResult r = s.Run({"in", key, "--rel", rel, "--json"});
  if (r.exit_code != 0) return {"error: " + r.err};
  const nlohmann::json j = r.json();
  std::set<std::string> out;
  for (const auto& e : j["edges"]) out.insert(e["src"].get<std::string>());
  return out;
}

inline std::string FactLine(const std::string& key, const std::string& content) {
  return R"({"op":"node","key":")" + key + R"(","type":"fact","content":")" + content + "\"}\n";
}

// Applies `lines` with amem ingest (it must succeed); returns the revision.
inline int IngestLines(const std::string& store, const std::string& lines) {
  RunResult r = RunProgram(AMEM_BINARY, {"--store", store, "--json", "ingest", "-"}, lines, {}, "");
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  return r.json()["rev"].get<int>();
}

// The keys `amem text-search WORD` finds, sorted, with `extra` arguments and
// `env`; the query must succeed. *err, when given, gets its stderr.
inline std::vector<std::string> TextSearchKeys(const std::string& store, const std::string& word,
                                               const std::vector<std::string>& extra = {},
                                               const std::vector<std::string>& env = {},
                                               std::string* err = nullptr) {
  std::vector<std::string> args{"--store", store, "--json", "text-search", word};
  args.insert(args.end(), extra.begin(), extra.end());
  RunResult r = RunProgram(AMEM_BINARY, args, "", env, "");
  INFO(word << ": " << r.err);
  REQUIRE(r.exit_code == 0);
  if (err != nullptr) *err = r.err;
  std::vector<std::string> keys;
  const nlohmann::json doc = r.json();
  for (const auto& row : doc["results"]) keys.push_back(row["key"].get<std::string>());
  std::sort(keys.begin(), keys.end());
  return keys;
}

// A query's JSON answer without what differs between the store's live view and a
// file given with --snapshot (dense numbers, the revision).
inline nlohmann::json WithoutViewFields(nlohmann::json j) {
  if (j.is_object()) {
    j.erase("index");
    j.erase("revision");
    for (auto& [k, v] : j.items()) v = WithoutViewFields(v);
  } else if (j.is_array()) {
    for (auto& v : j) v = WithoutViewFields(v);
  }
  return j;
}

// Body offset and length of the in-index block of the snapshot in `bytes`, and
// its node count.
inline std::tuple<size_t, size_t, uint32_t> InIndexBlock(const std::string& bytes) {
  auto r = snapshot::Reader::OpenBuffer(bytes);
  REQUIRE(r.ok());
  for (const snapshot::BlockInfo& b : (*r)->blocks()) {
    if (b.tag == static_cast<uint32_t>(snapshot::BlockTag::kInIndex)) {
      return {b.offset + snapshot::kBlockHeaderLength, b.length, (*r)->node_count()};
    }
  }
  FAIL("no in-index block");
  return {};
}

// Zeroes the in-list entries of the snapshot at `path` (its page checksums
// redone, its checksum left wrong): every in-list then names edge 0, which a query
// reading in-lists of the store's live view finds (issue 41).
inline void ZeroInListEntries(const std::string& path) {
  std::string bytes = ReadFile(path);
  const auto [at, length, n] = InIndexBlock(bytes);
  std::fill(bytes.begin() + static_cast<std::ptrdiff_t>(at + 4 * (size_t{n} + 1)),
            bytes.begin() + static_cast<std::ptrdiff_t>(at + length), '\0');
  snapshot_test::RedoPageChecksums(&bytes);
  WriteFile(path, bytes);
}

}  // namespace amem::testing

#endif  // AMEM_TESTS_CLI_AMEM_RUNNER_H_
