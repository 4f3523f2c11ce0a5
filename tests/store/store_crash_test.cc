// The crash campaign (the reliability audit's standing tests): amem processes that write are
// killed with SIGKILL at random instants — a bulk ingest, a stream of single
// commits through `amem mcp`, a batch of deletes, compaction, an export, the
// live snapshot a query builds, the rebuild of that cache after a query found
// it damaged, and an ingest compiling the query base after its commit — and after
// every kill the store must open, hold
// exactly the commits that returned (all of a killed batch or none of it), and
// read back every committed revision. It prints the trials and the losses.
//
// AMEM_CRASH_KILLS sets how many kills to make (default 100, the CI run);
// AMEM_CRASH_SEED the random seed (printed, so a failing run can be replayed).
#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "tests/cli/amem_runner.h"
#include "tests/sanitizer.h"
#include "tests/test_paths.h"

namespace amem::testing {
namespace {

using Clock = std::chrono::steady_clock;

// Starts amem with `args` (stdin from `input_file`, output discarded, `env` added
// to the environment); its pid.
pid_t Start(const std::vector<std::string>& args, const std::string& input_file,
            const std::vector<std::string>& env) {
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  const char* in = input_file.empty() ? "/dev/null" : input_file.c_str();
  posix_spawn_file_actions_addopen(&actions, 0, in, O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0);
  std::vector<std::string> argv_s{AMEM_BINARY};
  argv_s.insert(argv_s.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (std::string& a : argv_s) argv.push_back(a.data());
  argv.push_back(nullptr);
  std::vector<std::string> env_s(env);
  for (char** e = environ; *e != nullptr; ++e) env_s.emplace_back(*e);
  std::vector<char*> envp;
  for (std::string& e : env_s) envp.push_back(e.data());
  envp.push_back(nullptr);
  pid_t pid = 0;
  int rc = posix_spawn(&pid, AMEM_BINARY, &actions, nullptr, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  return rc == 0 ? pid : -1;
}

// Waits for `pid`; true when SIGKILL ended it (rather than its own exit).
bool Reap(pid_t pid) {
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
  }
  return WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL;
}

struct State {
  uint64_t revision = 0;
  uint64_t nodes = 0;
  uint64_t edges = 0;
  bool operator==(const State&) const = default;
};

enum Kind {
  kIngest,
  kSingleCommits,
  kDeletes,
  kCompact,
  kExport,
  kLiveQuery,
  kRebuild,
  kIngestCompile,
  kKinds
};
const char* const kKindNames[kKinds] = {"ingest", "single commits (mcp)", "delete batch",
                                        "compaction", "export", "live snapshot",
                                        "cache rebuild after corruption",
                                        "ingest compiling the base"};

// True when nobody holds `path`'s flock.
bool Unlocked(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDWR | O_CLOEXEC);
  if (fd < 0) return true;
  const bool free = ::flock(fd, LOCK_EX | LOCK_NB) == 0;
  ::close(fd);
  return free;
}

int CountTempFiles(const std::string& dir) {
  int n = 0;
  for (const auto& e : std::filesystem::recursive_directory_iterator(dir)) {
    n += e.path().filename().string().find(".tmp.") != std::string::npos;
  }
  return n;
}

class Campaign {
 public:
  Campaign() : store_(dir_.Sub("store")) {
    REQUIRE(Amem(store_, {"init"}).exit_code == 0);
  }

  // One writer of kind `kind`, killed after `delay` (or left to finish when
  // `delay` is negative). Returns false on a loss, after INFO-ing why.
  bool Trial(Kind kind, double delay_ms, bool* killed) {
    const State before = Stats();
    const int trial = trials_++;
    std::vector<std::string> args{"--store", store_};
    std::string input;
    std::vector<std::string> env;  // set for the writer only
    size_t batch = 0;
    switch (kind) {
      case kIngest:
      case kIngestCompile: {
        batch = 300;
        std::string lines;
        for (size_t i = 0; i < batch; ++i) {
          std::string key = Key(trial, i);
          lines += R"({"op":"node","key":")" + key + R"(","type":"fact","content":"crash trial )" +
                   std::to_string(trial) + " item " + std::to_string(i) + "\"}\n";
          if (i > 0) {
            lines += R"({"op":"edge","src":")" + Key(trial, i - 1) +
                     R"(","rel":"supports","dst":")" + key + "\"}\n";
          }
        }
        WriteFile(dir_.Sub("in.jsonl"), lines);
        args.insert(args.end(), {"ingest", dir_.Sub("in.jsonl")});
        // Its compile after the commit is then a full export of the base.
        if (kind == kIngestCompile) env = {"AMEM_MERGE_FRACTION=0", "AMEM_MERGE_RECORDS=0"};
        break;
      }
      case kSingleCommits: {
        batch = 30;
        input = R"({"jsonrpc":"2.0","id":0,"method":"initialize","params":{)"
                R"("protocolVersion":"2025-06-18","capabilities":{},)"
                R"("clientInfo":{"name":"crash","version":"1"}}})"
                "\n";
        for (size_t i = 0; i < batch; ++i) {
          input += R"({"jsonrpc":"2.0","id":)" + std::to_string(i + 1) +
                   R"(,"method":"tools/call","params":{"name":"put_memory","arguments":{"key":")" +
                   Key(trial, i) + R"(","type":"fact","content":"single )" + std::to_string(i) +
                   "\"}}}\n";
        }
        WriteFile(dir_.Sub("in.mcp"), input);
        input = dir_.Sub("in.mcp");
        args.insert(args.end(), {"mcp", "--tools", "all"});
        break;
      }
      case kDeletes: {
        // The edges of the oldest committed ingest that still has them.
        if (live_chains_.empty()) return Trial(kIngest, delay_ms, killed);
        int victim = live_chains_.front();
        batch = 299;
        std::string lines;
        for (size_t i = 1; i < 300; ++i) {
          lines += R"({"op":"del_edge","src":")" + Key(victim, i - 1) +
                   R"(","rel":"supports","dst":")" + Key(victim, i) + "\"}\n";
        }
        WriteFile(dir_.Sub("del.jsonl"), lines);
        args.insert(args.end(), {"ingest", dir_.Sub("del.jsonl")});
        break;
      }
      case kCompact:
        args.push_back("compact");
        break;
      case kExport:
        std::filesystem::remove(dir_.Sub("out.amem"));
        args.insert(args.end(), {"export", dir_.Sub("out.amem")});
        break;
      case kLiveQuery:
        // A write first, so the query must build the latest snapshot.
        REQUIRE(Amem(store_, {"put-node", Key(trial, 0), "--type", "fact", "--content",
                              "live query " + Marker(trial)}).exit_code == 0);
        args.insert(args.end(), {"text-search", "crash trial"});
        break;
      case kRebuild:
        // A base + delta view whose base in-index is then damaged: the query finds
        // it, discards the cache and exports it again, and is killed in there.
        // (Twice when the first query merged instead: then the delta is small.)
        for (size_t k = 0; k < 2 && (k == 0 || !std::filesystem::exists(store_ + "/current.amdl"));
             ++k) {
          REQUIRE(Amem(store_, {"put-edge", Key(trial, k), "supports", Key(trial, k + 1)})
                      .exit_code == 0);
          REQUIRE(Amem(store_, {"centrality", "--limit", "3"}).exit_code == 0);
        }
        REQUIRE(std::filesystem::exists(store_ + "/current.amdl"));
        ZeroInListEntries(store_ + "/current.amem");
        args.insert(args.end(), {"centrality", "--limit", "3"});
        break;
      default:
        break;
    }
    const State start = Stats();  // after the live query's own write
    const auto started = Clock::now();
    pid_t pid = Start(args, kind == kSingleCommits ? input : "", env);
    REQUIRE(pid > 0);
    if (delay_ms >= 0) {
      std::this_thread::sleep_for(
          std::chrono::microseconds(static_cast<int64_t>(delay_ms * 1000)));
      ::kill(pid, SIGKILL);
    }
    *killed = Reap(pid);
    last_run_ms_ = std::chrono::duration<double, std::milli>(Clock::now() - started).count();

    // The store opens, and holds all of the killed work or none of it.
    RunResult stats = Amem(store_, {"stats", "--json"});
    INFO(kKindNames[kind] << " trial " << trial << ", killed after " << delay_ms << " ms: "
                          << stats.err);
    if (stats.exit_code != 0) return false;
    const State after = Stats();
    bool ok = true;
    switch (kind) {
      case kIngest:
      case kIngestCompile: {
        const State all{start.revision + 1, start.nodes + batch, start.edges + batch - 1};
        ok = after == start || after == all;
        if (after == all) {
          committed_[trial] = after.revision;
          live_chains_.push_back(trial);
        }
        break;
      }
      case kSingleCommits: {
        // A prefix of the calls committed, one revision each.
        uint64_t j = after.revision - start.revision;
        ok = after.revision >= start.revision && j <= batch && after.nodes == start.nodes + j &&
             after.edges == start.edges;
        if (ok && j > 0) ok = Exists(Key(trial, j - 1));
        if (ok && j < batch) ok = !Exists(Key(trial, j));
        break;
      }
      case kDeletes: {
        const State all{start.revision + 1, start.nodes, start.edges - batch};
        ok = after == start || after == all;
        if (after == all) live_chains_.erase(live_chains_.begin());
        break;
      }
      case kCompact:
      case kExport:
      case kLiveQuery:
      case kRebuild:
        ok = after == start;
        break;
      default:
        break;
    }
    if (kind == kExport && std::filesystem::exists(dir_.Sub("out.amem"))) {
      // The export is renamed into place whole: present means complete.
      ok = ok && Amem(store_, {"verify", dir_.Sub("out.amem")}).exit_code == 0;
    }
    if (kind == kLiveQuery) {
      RunResult again = Amem(store_, {"text-search", Marker(trial), "--json"});
      ok = ok && again.exit_code == 0 &&
           again.out.find(Key(trial, 0)) != std::string::npos;
    }
    std::string detail;  // what the check after a rebuild found
    if (kind == kRebuild || kind == kIngestCompile) {
      // The next query answers as a fresh export does, and leaves no temp file
      // and no lock behind it.
      const std::string file = dir_.Sub("truth.amem");
      std::filesystem::remove(file);
      REQUIRE(Amem(store_, {"export", file}).exit_code == 0);
      RunResult live = Amem(store_, {"centrality", "--limit", "50", "--json"});
      RunResult truth = Amem(store_, {"centrality", "--limit", "50", "--json", "--snapshot", file});
      if (live.exit_code != 0 && std::getenv("AMEM_CRASH_KEEP") != nullptr) {
        std::filesystem::copy(store_, std::string(std::getenv("AMEM_CRASH_KEEP")) + "/" +
                                          std::to_string(trial),
                              std::filesystem::copy_options::recursive);
      }
      // A temp file the killed writer left goes with the next write of that file,
      // or with `amem compact` (docs/STORE.md §10), whichever comes first.
      if (CountTempFiles(store_) > 0) REQUIRE(Amem(store_, {"compact"}).exit_code == 0);
      const int temps = CountTempFiles(store_);
      const bool unlocked = Unlocked(store_ + "/current.lock");
      detail = live.err + "exit " + std::to_string(live.exit_code) + "/" +
               std::to_string(truth.exit_code) + ", " + std::to_string(temps) +
               " temp files, current.lock " + (unlocked ? "free" : "held");
      ok = ok && live.exit_code == 0 && truth.exit_code == 0 &&
           WithoutViewFields(live.json()) == WithoutViewFields(truth.json());
      ok = ok && temps == 0 && unlocked;
    }
    INFO(detail);
    INFO("before " << before.revision << "/" << before.nodes << "/" << before.edges
                   << ", start " << start.revision << "/" << start.nodes << "/" << start.edges
                   << ", after " << after.revision << "/" << after.nodes << "/" << after.edges);
    CHECK(ok);
    return ok;
  }

  // Every committed ingest reads back as of its revision, and not before it.
  int CheckHistory() {
    int losses = 0;
    for (const auto& [trial, rev] : committed_) {
      const std::string last = Key(trial, 299);
      bool ok = Amem(store_, {"get-node", last, "--as-of", std::to_string(rev)}).exit_code == 0 &&
                Amem(store_, {"get-node", last, "--as-of", std::to_string(rev - 1)}).exit_code ==
                    3;
      INFO("trial " << trial << " at revision " << rev);
      CHECK(ok);
      losses += !ok;
    }
    return losses;
  }

  size_t committed_batches() const { return committed_.size(); }

  // How long an undisturbed run of `kind` takes, in ms.
  double Calibrate(Kind kind) {
    bool killed = false;
    REQUIRE(Trial(kind, -1, &killed));
    return last_run_ms_;
  }

 private:
  // A word only this trial's live-query node has.
  static std::string Marker(int trial) { return "zqmarker" + std::to_string(trial); }
  static std::string Key(int trial, size_t i) {
    return "fact:crash-" + std::to_string(trial) + "-" + std::to_string(i);
  }
  bool Exists(const std::string& key) const {
    return Amem(store_, {"get-node", key}).exit_code == 0;
  }
  State Stats() const {
    RunResult r = Amem(store_, {"stats", "--json"});
    REQUIRE(r.exit_code == 0);
    auto j = r.json();
    return {j["revision"].get<uint64_t>(), j["live_nodes"].get<uint64_t>(),
            j["live_edges"].get<uint64_t>()};
  }

  TempDir dir_;
  std::string store_;
  int trials_ = 0;
  double last_run_ms_ = 0;  // the writer process of the last trial, start to exit
  std::vector<int> live_chains_;
  std::map<int, uint64_t> committed_;  // ingest trial -> its revision
};

}  // namespace

TEST_CASE("crash campaign: SIGKILLed writers leave all of their commit or none",
          "[store][crash][hardening]") {
  const char* env_kills = std::getenv("AMEM_CRASH_KILLS");
  // 100 kills in the Release build; under the sanitizers, where each writer runs
  // 10-40 times slower, 16 (the same kinds of kill, two of each on average).
  const int target = env_kills != nullptr ? std::max(1, std::atoi(env_kills))
                     : kSanitizerBuild    ? 16
                                          : 100;
  const char* env_seed = std::getenv("AMEM_CRASH_SEED");
  const uint64_t seed = env_seed != nullptr ? std::strtoull(env_seed, nullptr, 10)
                                            : static_cast<uint64_t>(Clock::now()
                                                                        .time_since_epoch()
                                                                        .count());
  std::mt19937_64 rng(seed);
  // The queries here merge in their foreground, as the checks after each trial
  // (no temp file, current.lock free) read the store the killed writer left, with
  // no merge process of a query's running beside them; the background merge's own
  // kills are cli_background_merge_test's.
  const char* foreground = std::getenv("AMEM_FOREGROUND_MERGE");
  const std::string saved = foreground != nullptr ? foreground : "";
  ::setenv("AMEM_FOREGROUND_MERGE", "1", 1);
  struct Restore {
    const char* had;
    std::string value;
    ~Restore() {
      if (had != nullptr) {
        ::setenv("AMEM_FOREGROUND_MERGE", value.c_str(), 1);
      } else {
        ::unsetenv("AMEM_FOREGROUND_MERGE");
      }
    }
  } restore{foreground, saved};
  Campaign campaign;
  double duration[kKinds];
  for (int k = 0; k < kKinds; ++k) duration[k] = campaign.Calibrate(static_cast<Kind>(k));

  int kills = 0, finished = 0, losses = 0;
  int kills_by_kind[kKinds] = {};
  for (int i = 0; kills < target && i < target * 4; ++i) {
    Kind kind = static_cast<Kind>(rng() % kKinds);
    // Mostly inside the run; a few at its very start or just past its end.
    double delay = std::uniform_real_distribution<double>(0.0, 1.1)(rng) * duration[kind];
    bool killed = false;
    if (!campaign.Trial(kind, delay, &killed)) ++losses;
    if (killed) {
      ++kills;
      ++kills_by_kind[kind];
    } else {
      ++finished;
    }
  }
  losses += campaign.CheckHistory();
  std::string by_kind;
  for (int k = 0; k < kKinds; ++k) {
    by_kind += std::string(k ? ", " : "") + kKindNames[k] + " " + std::to_string(kills_by_kind[k]);
  }
  std::printf(
      "crash campaign (seed %llu): %d trials, %d writers killed (%s), %d finished before the "
      "kill; %zu committed batches read back; %d losses\n",
      static_cast<unsigned long long>(seed), kills + finished, kills, by_kind.c_str(), finished,
      campaign.committed_batches(), losses);
  CHECK(kills >= target);
  CHECK(losses == 0);
}

}  // namespace amem::testing
