// A CLI query that finds the delta past its bound answers from base + delta and
// leaves the merge to a detached `amem merge-base` process (docs/STORE.md §10):
// the query does not merge, the base moves on soon after, one merge runs at a
// time, and a merge process killed anywhere leaves a store that answers right.
#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "tests/cli/amem_runner.h"
#include "tests/store/store_test_util.h"
#include "tests/test_paths.h"

using amem::testing::AmemEnv;
using amem::testing::FactLine;
using amem::testing::ReadFile;
using amem::testing::RunResult;
using amem::testing::TempDir;
using amem::snapshot_test::TempFilesIn;

namespace {

// A bound of 10 records: a trial's 12 new facts pass it and stay under four
// times it (what a query answers from while the merge runs in the background).
const std::vector<std::string> kSmallBound = {"AMEM_MERGE_FRACTION=0", "AMEM_MERGE_RECORDS=10"};
// No merge at all: for the queries that only check an answer.
const std::vector<std::string> kNoMerge = {"AMEM_MERGE_FRACTION=1000"};

// The revision current.rev records (0 when there is none).
uint64_t BaseRevision(const std::string& store) {
  const std::string text = ReadFile(store + "/current.rev");
  return text.empty() ? 0 : std::stoull(text.substr(0, text.find(' ')));
}

uint64_t Head(const std::string& store) {
  RunResult r = AmemEnv(store, {"--json", "stats"});
  REQUIRE(r.exit_code == 0);
  return r.json()["revision"].get<uint64_t>();
}

// Writes `n` facts whose content holds `word`, without the view ingest compiles
// after its commit (which would merge in its own foreground).
void WriteFacts(const std::string& store, const std::string& prefix, int n,
                const std::string& word) {
  std::string lines;
  for (int i = 0; i < n; ++i) {
    lines += FactLine(prefix + std::to_string(i), word + " note " + std::to_string(i));
  }
  RunResult r = AmemEnv(store, {"ingest", "--no-compile", "-"}, {}, lines);
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
}

// The keys text-search finds for `word`, sorted; the query must succeed quietly.
std::vector<std::string> Search(const std::string& store, const std::string& word,
                                const std::vector<std::string>& env) {
  RunResult r = AmemEnv(store, {"--json", "text-search", word, "--limit", "1000"}, env);
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(r.err.empty());
  std::vector<std::string> keys;
  const nlohmann::json doc = r.json();
  for (const auto& row : doc["results"]) keys.push_back(row["key"].get<std::string>());
  std::sort(keys.begin(), keys.end());
  return keys;
}

std::vector<std::string> Keys(const std::string& prefix, int n) {
  std::vector<std::string> keys;
  for (int i = 0; i < n; ++i) keys.push_back(prefix + std::to_string(i));
  std::sort(keys.begin(), keys.end());
  return keys;
}

// Polls until the base is at `rev` (a background merge finished); false after a
// minute (a merge of these stores takes milliseconds; the bound only stops a hang).
bool WaitForBase(const std::string& store, uint64_t rev) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::minutes(1);
  while (BaseRevision(store) != rev) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return true;
}

// Whether a process holds the flock on `path` (tried without waiting).
bool Held(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY);
  if (fd < 0) return false;
  const bool held = ::flock(fd, LOCK_EX | LOCK_NB) != 0;
  ::close(fd);
  return held;
}

// Waits until no merge holds merge.lock.
bool WaitUnlocked(const std::string& store) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::minutes(1);
  while (Held(store + "/merge.lock")) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return true;
}

int CountLines(const std::string& text, const std::string& line) {
  int n = 0;
  size_t at = 0;
  while ((at = text.find(line + "\n", at)) != std::string::npos) {
    n += at == 0 || text[at - 1] == '\n';
    at += line.size() + 1;
  }
  return n;
}

// The "merged" lines of the trace file, once there is one: the merge process
// writes its line after it released its locks (a minute at most).
int MergedLines(const std::string& trace) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::minutes(1);
  while (CountLines(ReadFile(trace), "merged") == 0 &&
         std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return CountLines(ReadFile(trace), "merged");
}

// A store with a base of 200 facts at its head.
std::string MakeStore(const TempDir& dir) {
  const std::string store = dir.path() + "/s";
  REQUIRE(AmemEnv(store, {"init"}).exit_code == 0);
  WriteFacts(store, "fact:base-", 200, "base");
  Search(store, "base", {});  // exports the base
  REQUIRE(BaseRevision(store) == Head(store));
  return store;
}

}  // namespace

TEST_CASE("a CLI query past the delta's bound answers without merging, and the base moves "
          "on in the background", "[tools][live][background]") {
  TempDir dir;
  const std::string store = MakeStore(dir);
  const uint64_t base = BaseRevision(store);
  const std::string trace = dir.path() + "/trace";
  std::vector<std::string> env = kSmallBound;
  env.push_back("AMEM_MERGE_TRACE=" + trace);
  WriteFacts(store, "fact:new-", 12, "fresh");
  {
    // With merge.lock held here, no merge can run: what the query does is all
    // that happens.
    const int fd = ::open((store + "/merge.lock").c_str(), O_RDWR | O_CREAT, 0644);
    REQUIRE(fd >= 0);
    REQUIRE(::flock(fd, LOCK_EX) == 0);
    CHECK(Search(store, "fresh", env) == Keys("fact:new-", 12));
    CHECK(BaseRevision(store) == base);  // not merged in the query's foreground
    CHECK(std::filesystem::exists(store + "/current.amdl"));  // answered from base + delta
    ::close(fd);
  }
  // The next write's query starts the merge and returns; the base moves on soon.
  WriteFacts(store, "fact:more-", 1, "fresh");
  std::vector<std::string> want = Keys("fact:new-", 12);
  want.push_back("fact:more-0");
  std::sort(want.begin(), want.end());
  CHECK(Search(store, "fresh", env) == want);
  const uint64_t head = Head(store);
  REQUIRE(WaitForBase(store, head));
  REQUIRE(WaitUnlocked(store));
  CHECK(MergedLines(trace) == 1);
  CHECK_FALSE(std::filesystem::exists(store + "/current.amdl"));  // the old base's, removed
  CHECK(TempFilesIn(store).empty());
  CHECK(Search(store, "fresh", env) == want);  // from the new base alone
  CHECK(Search(store, "base", kNoMerge).size() == 200);

  // AMEM_FOREGROUND_MERGE=1: the query merges before it answers, as before.
  WriteFacts(store, "fact:fg-", 12, "foreground");
  std::vector<std::string> fg = kSmallBound;
  fg.push_back("AMEM_FOREGROUND_MERGE=1");
  CHECK(Search(store, "foreground", fg) == Keys("fact:fg-", 12));
  CHECK(BaseRevision(store) == Head(store));
  // A malformed value is a usage error.
  RunResult bad = AmemEnv(store, {"text-search", "base"}, {"AMEM_FOREGROUND_MERGE=yes"});
  CHECK(bad.exit_code == 2);
  CHECK(bad.err.find("AMEM_FOREGROUND_MERGE=yes") != std::string::npos);
}

TEST_CASE("concurrent CLI queries past the bound start at most one merge",
          "[tools][live][background]") {
  TempDir dir;
  const std::string store = MakeStore(dir);
  const std::string trace = dir.path() + "/trace";
  std::vector<std::string> env = kSmallBound;
  env.push_back("AMEM_MERGE_TRACE=" + trace);
  const char* kWords[] = {"alpha", "bravo", "charlie", "delta"};  // one per round
  for (int round = 0; round < 4; ++round) {
    INFO("round " << round);
    std::filesystem::remove(trace);
    const std::string prefix = "fact:r" + std::to_string(round) + "-";
    WriteFacts(store, prefix, 12, kWords[round]);
    const uint64_t head = Head(store);
    std::vector<std::string> got[2];
    std::thread a([&] { got[0] = Search(store, kWords[round], env); });
    std::thread b([&] { got[1] = Search(store, kWords[round], env); });
    a.join();
    b.join();
    CHECK(got[0] == Keys(prefix, 12));
    CHECK(got[1] == Keys(prefix, 12));
    REQUIRE(WaitForBase(store, head));
    REQUIRE(WaitUnlocked(store));
    // A merge process started late finds the base at the head and does nothing.
    CHECK(MergedLines(trace) == 1);
    CHECK(TempFilesIn(store).empty());
  }
}

TEST_CASE("a merge process SIGKILLed at any point leaves a store that answers right, and no "
          "temp file or held lock once the next merge ran", "[tools][live][background][crash]") {
  TempDir dir;
  const std::string store = MakeStore(dir);
  // More facts, so that the export takes a while to kill it in.
  WriteFacts(store, "fact:bulk-", 3000, "bulk");
  REQUIRE(AmemEnv(store, {"--json", "text-search", "bulk"}, {"AMEM_FOREGROUND_MERGE=1"})
              .exit_code == 0);
  // How long an unkilled merge process takes on this machine: the kills land
  // anywhere in that span (uniformly).
  WriteFacts(store, "fact:calibrate-", 12, "calibrate");
  const auto t0 = std::chrono::steady_clock::now();
  RunResult calibration = AmemEnv(store, {"merge-base"});
  const auto span_us = std::max<int64_t>(
      1000, std::chrono::duration_cast<std::chrono::microseconds>(
                std::chrono::steady_clock::now() - t0).count());
  INFO(calibration.err);
  REQUIRE(calibration.exit_code == 0);
  REQUIRE(BaseRevision(store) == Head(store));
  std::mt19937 rng(7);
  int killed = 0, mid_export = 0;
  std::vector<std::string> written;
  for (int trial = 0; trial < 16; ++trial) {
    INFO("trial " << trial << " (a merge process takes " << span_us << " us)");
    const std::string prefix = "fact:t" + std::to_string(trial) + "-";
    WriteFacts(store, prefix, 12, "trial");
    for (const std::string& k : Keys(prefix, 12)) written.push_back(k);
    std::sort(written.begin(), written.end());
    const int delay_us = 1 + static_cast<int>(rng() % static_cast<uint64_t>(span_us));
    RunResult r = amem::testing::RunProgram(AMEM_BINARY, {"--store", store, "merge-base"}, "",
                                            {}, "", delay_us);
    if (r.exit_code == 128 + SIGKILL) {
      ++killed;
      mid_export += !TempFilesIn(store).empty();
    } else {
      INFO(r.err);
      CHECK(r.exit_code == 0);
    }
    // Whatever the kill left, queries answer right (no merge: the answer is the
    // point) and no lock stays held.
    CHECK(Search(store, "trial", kNoMerge) == written);
    CHECK(Search(store, "bulk", kNoMerge).size() == 1000);  // --limit
    CHECK_FALSE(Held(store + "/merge.lock"));
    CHECK_FALSE(Held(store + "/current.lock"));
  }
  INFO("killed " << killed << ", " << mid_export << " of them while exporting");
  CHECK(killed > 4);
  CHECK(mid_export > 0);
  // The detached process a query starts, found by its temp file's name
  // ("current.amem.tmp.<pid>.<hex>") and killed while it exports. Its export is
  // a few milliseconds: on a loaded machine (the sanitizer build beside another
  // test) four trials may all miss it, so up to twelve are run until one is caught.
  int caught = 0;
  for (int trial = 0; trial < 12 && (trial < 4 || caught == 0); ++trial) {
    INFO("detached trial " << trial);
    REQUIRE(AmemEnv(store, {"merge-base"}).exit_code == 0);  // a base at the head
    const std::string prefix = "fact:d" + std::to_string(trial) + "-";
    WriteFacts(store, prefix, 12, "trial");
    for (const std::string& k : Keys(prefix, 12)) written.push_back(k);
    std::sort(written.begin(), written.end());
    const uint64_t head = Head(store);
    CHECK(Search(store, "trial", kSmallBound) == written);  // starts the merge
    long pid = 0;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (pid == 0 && BaseRevision(store) != head &&
           std::chrono::steady_clock::now() < deadline) {
      for (const std::string& name : TempFilesIn(store)) {
        if (name.rfind("current.amem.tmp.", 0) == 0) pid = std::stol(name.substr(17));
      }
    }
    if (pid > 0 && ::kill(static_cast<pid_t>(pid), SIGKILL) == 0) ++caught;
    REQUIRE(WaitUnlocked(store));
    CHECK(Search(store, "trial", kNoMerge) == written);
    CHECK_FALSE(Held(store + "/current.lock"));
  }
  CHECK(caught > 0);
  // The next merge, started by a query past the bound, removes what the killed
  // ones left and puts its base in.
  REQUIRE(AmemEnv(store, {"merge-base"}).exit_code == 0);
  WriteFacts(store, "fact:last-", 12, "trial");
  for (const std::string& k : Keys("fact:last-", 12)) written.push_back(k);
  std::sort(written.begin(), written.end());
  CHECK(Search(store, "trial", kSmallBound) == written);
  REQUIRE(WaitForBase(store, Head(store)));
  REQUIRE(WaitUnlocked(store));
  for (const std::string& name : TempFilesIn(store)) UNSCOPED_INFO("left: " << name);
  CHECK(TempFilesIn(store).empty());
  CHECK(Search(store, "trial", kSmallBound) == written);
}

TEST_CASE("merge-base: a missing or invalid store is a clear error that changes nothing, and "
          "the command is not in --help", "[tools][live][background]") {
  TempDir dir;
  const std::string missing = dir.path() + "/none";
  RunResult r = AmemEnv(missing, {"merge-base"});
  amem::testing::RequireError(r, 3, "merge-base", "no store at");
  CHECK_FALSE(std::filesystem::exists(missing));
  // An empty directory, and a plain file, are no store either.
  const std::string empty = dir.path() + "/empty";
  std::filesystem::create_directories(empty);
  r = AmemEnv(empty, {"merge-base"});
  amem::testing::RequireError(r, 3, "merge-base");
  CHECK(std::filesystem::is_empty(empty));
  const std::string file = dir.path() + "/file";
  amem::testing::WriteFile(file, "not a store");
  r = AmemEnv(file, {"merge-base"});
  amem::testing::RequireError(r, 3, "merge-base");
  CHECK(ReadFile(file) == "not a store");
  // An argument it does not take is a usage error.
  r = AmemEnv(empty, {"merge-base", "extra"});
  CHECK(r.exit_code == 2);
  CHECK(std::filesystem::is_empty(empty));
  // Hidden: not listed, never suggested for a typo.
  RunResult help = AmemEnv(empty, {"--help"});
  CHECK(help.exit_code == 0);
  CHECK(help.out.find("merge-base") == std::string::npos);
  CHECK(help.out.find("text-search") != std::string::npos);  // the list is there
  RunResult typo = AmemEnv(empty, {"merge-bas"});
  CHECK(typo.exit_code == 2);
  CHECK(typo.err.find("merge-base") == std::string::npos);
  // On a store at its head: nothing to merge, nothing changed.
  const std::string store = MakeStore(dir);
  const std::string before = ReadFile(store + "/current.rev");
  r = AmemEnv(store, {"--json", "merge-base"});
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(r.json()["merged"] == false);
  CHECK(ReadFile(store + "/current.rev") == before);
}
