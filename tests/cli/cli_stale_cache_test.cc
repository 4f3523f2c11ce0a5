// The query caches beside a store (docs/STORE.md §10) belong to one history of it
// (issue 41, defects 2 and 8): after data.mdb is restored from a backup, or the
// store is removed and created again in place, current.rev, current.amem,
// current.amdl and snapshots/ still name the same revision numbers but hold
// another history's content. They are rebuilt, never served; a cached past
// snapshot that was truncated or emptied is exported again.
#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "tests/cli/amem_runner.h"
#include "tests/test_paths.h"

using amem::testing::AmemEnv;
using amem::testing::RunProgram;
using amem::testing::RunResult;
using amem::testing::TempDir;
using amem::testing::WriteFile;

namespace {

namespace fs = std::filesystem;

// Without the ingest's own compile: these tests are about the caches queries leave.
int Ingest(const std::string& store, const std::string& lines) {
  RunResult r = RunProgram(AMEM_BINARY, {"--store", store, "--json", "ingest", "--no-compile", "-"},
                           lines, {}, "");
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  return r.json()["rev"].get<int>();
}
std::string NodeLine(const std::string& key, const std::string& content) {
  return amem::testing::FactLine(key, content);
}
std::vector<std::string> Found(const std::string& store, const std::string& word,
                               const std::vector<std::string>& extra = {},
                               const std::vector<std::string>& env = {}) {
  return amem::testing::TextSearchKeys(store, word, extra, env);
}

using Keys = std::vector<std::string>;

// Every cache mode a query can leave behind: the delta file (base at the first
// revision, current.amdl up to the head) or a merged base (every latest query
// re-exports: AMEM_MERGE_FRACTION=0 AMEM_MERGE_RECORDS=0).
struct Mode {
  const char* name;
  std::vector<std::string> env;
};
const Mode kModes[] = {{"delta cached", {}},
                       {"merged base", {"AMEM_MERGE_FRACTION=0", "AMEM_MERGE_RECORDS=0"}}};

}  // namespace

TEST_CASE("a data.mdb restored from a backup never answers from the caches of the lost history",
          "[cli][live][hardening]") {
  for (const Mode& mode : kModes) {
    SECTION(mode.name) {
      TempDir dir;
      const std::string store = dir.Sub("store");
      REQUIRE(AmemEnv(store, {"init"}).exit_code == 0);
      REQUIRE(Ingest(store, NodeLine("fact:a", "alpha builds with cmake")) == 1);
      CHECK(Found(store, "cmake", {}, mode.env) == Keys{"fact:a"});  // the base, at rev 1
      fs::copy_file(store + "/data.mdb", dir.Sub("backup.mdb"));

      // The history the backup does not have: revisions 2 and 3.
      REQUIRE(Ingest(store, NodeLine("fact:b", "bravo builds with bazel")) == 2);
      REQUIRE(Ingest(store, NodeLine("fact:a", "alpha moved to bazel")) == 3);
      CHECK(Found(store, "bazel", {}, mode.env) == Keys{"fact:a", "fact:b"});
      CHECK(Found(store, "cmake", {}, mode.env).empty());
      CHECK(Found(store, "bazel", {"--as-of", "2"}, mode.env) == Keys{"fact:b"});

      // Restored: the store is at revision 1 again.
      fs::copy_file(dir.Sub("backup.mdb"), store + "/data.mdb",
                    fs::copy_options::overwrite_existing);
      CHECK(Found(store, "bazel", {}, mode.env).empty());
      CHECK(Found(store, "cmake", {}, mode.env) == Keys{"fact:a"});

      // Rewritten to the very revision numbers the caches name, with other content.
      REQUIRE(Ingest(store, NodeLine("fact:c", "charlie builds with gradle")) == 2);
      REQUIRE(Ingest(store, NodeLine("fact:d", "delta builds with meson")) == 3);
      CHECK(Found(store, "bazel", {}, mode.env).empty());
      CHECK(Found(store, "cmake", {}, mode.env) == Keys{"fact:a"});
      CHECK(Found(store, "gradle", {}, mode.env) == Keys{"fact:c"});
      CHECK(Found(store, "meson", {}, mode.env) == Keys{"fact:d"});
      CHECK(Found(store, "bazel", {"--as-of", "2"}, mode.env).empty());
      CHECK(Found(store, "gradle", {"--as-of", "2"}, mode.env) == Keys{"fact:c"});
      // get-node reads the store itself: the restored content.
      RunResult got = AmemEnv(store, {"--json", "get-node", "fact:a"});
      REQUIRE(got.exit_code == 0);
      CHECK(got.json()["content"] == "alpha builds with cmake");
    }
  }
}

TEST_CASE("a store recreated in place is answered from its own history, at the same and a higher revision",
          "[cli][live][hardening]") {
  // The old store's caches: a base, a delta and past snapshots up to revision 4.
  for (const Mode& mode : kModes) {
    for (int rewritten : {4, 6}) {
      DYNAMIC_SECTION(mode.name << ", recreated up to revision " << rewritten) {
        TempDir dir;
        const std::string store = dir.Sub("store");
        REQUIRE(AmemEnv(store, {"init"}).exit_code == 0);
        for (int i = 1; i <= 4; ++i) {
          REQUIRE(Ingest(store, NodeLine("fact:old" + std::to_string(i), "bazel rule " + std::to_string(i))) == i);
          if (i == 2) CHECK(Found(store, "bazel", {}, mode.env).size() == 2);
        }
        CHECK(Found(store, "bazel", {}, mode.env).size() == 4);
        for (int r = 1; r <= 3; ++r) {
          CHECK(Found(store, "bazel", {"--as-of", std::to_string(r)}, mode.env).size() ==
                static_cast<size_t>(r));
        }

        // Removed and created again; the cache files stay where they were.
        fs::remove(store + "/data.mdb");
        fs::remove(store + "/lock.mdb");
        REQUIRE(AmemEnv(store, {"init"}).exit_code == 0);
        for (int i = 1; i <= rewritten; ++i) {
          REQUIRE(Ingest(store, NodeLine("fact:new" + std::to_string(i), "cmake target " + std::to_string(i))) == i);
        }
        CHECK(Found(store, "bazel", {}, mode.env).empty());
        CHECK(Found(store, "cmake", {}, mode.env).size() == static_cast<size_t>(rewritten));
        for (int r = 1; r <= 3; ++r) {
          INFO("--as-of " << r);
          CHECK(Found(store, "bazel", {"--as-of", std::to_string(r)}, mode.env).empty());
          CHECK(Found(store, "cmake", {"--as-of", std::to_string(r)}, mode.env).size() ==
                static_cast<size_t>(r));
        }
        // And once more, now from the rebuilt caches.
        CHECK(Found(store, "cmake", {}, mode.env).size() == static_cast<size_t>(rewritten));
        CHECK(Found(store, "bazel", {}, mode.env).empty());
      }
    }
  }
}

TEST_CASE("a truncated or emptied cached past snapshot is exported again", "[cli][live][hardening]") {
  TempDir dir;
  const std::string store = dir.Sub("store");
  REQUIRE(AmemEnv(store, {"init"}).exit_code == 0);
  for (int i = 1; i <= 3; ++i) {
    REQUIRE(Ingest(store, NodeLine("fact:n" + std::to_string(i), "ninja step " + std::to_string(i))) == i);
  }
  CHECK(Found(store, "ninja").size() == 3);  // the base, at revision 3
  CHECK(Found(store, "ninja", {"--as-of", "1"}) == Keys{"fact:n1"});
  std::vector<std::string> cached;
  for (const auto& e : fs::directory_iterator(store + "/snapshots")) cached.push_back(e.path().string());
  REQUIRE(cached.size() == 1);
  const std::string file = cached[0];
  const auto size = fs::file_size(file);

  SECTION("truncated") { fs::resize_file(file, size / 2); }
  SECTION("cut just after its header") { fs::resize_file(file, 64); }
  SECTION("emptied") { fs::resize_file(file, 0); }
  CHECK(Found(store, "ninja", {"--as-of", "1"}) == Keys{"fact:n1"});
  CHECK(fs::file_size(file) == size);
  CHECK(Found(store, "ninja", {"--as-of", "1"}) == Keys{"fact:n1"});
}
