// Reads that need to write (issue 41, defect 7): a store on a read-only file
// system, a store opened with --read-only, and a full disk when a merge is due.
// Queries answer, from memory where the snapshot cache cannot be written, and say
// so on stderr; writes fail with a clear error and change nothing.
//
// The read-only file system is real: a tmpfs remounted read-only (tests/small_disk.h),
// so LMDB meets EROFS as it would on a read-only mount; root's permission bits
// would not stop a write. The full disk is a small tmpfs filled to the last byte.
// Both need to mount (root or CAP_SYS_ADMIN) and are skipped with a WARN
// otherwise; the --read-only case runs everywhere.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include "tests/cli/amem_runner.h"
#include "tests/small_disk.h"
#include "tests/test_paths.h"

using amem::testing::AmemEnv;
using amem::testing::RunProgram;
using amem::testing::RunResult;
using amem::testing::SmallDisk;
using amem::testing::TempDir;

namespace {

namespace fs = std::filesystem;

constexpr char kFromMemory[] = "answered from memory";

// Without the ingest's own compile: the caches stay what the queries below made
// (a base at revision 2, nothing after it), so the read-only reads must build the rest.
void Ingest(const std::string& store, const std::string& key, const std::string& content) {
  RunResult r = AmemEnv(store, {"ingest", "--no-compile", "-"}, {},
                    amem::testing::FactLine(key, content));
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
}

// text-search `word` (and `extra` arguments): the keys found, sorted; *err gets stderr.
std::vector<std::string> Found(const std::string& store, const std::string& word,
                               const std::vector<std::string>& extra, std::string* err,
                               const std::vector<std::string>& env = {}) {
  return amem::testing::TextSearchKeys(store, word, extra, env, err);
}

std::set<std::string> Files(const std::string& dir) {
  std::set<std::string> names;
  for (const auto& e : fs::recursive_directory_iterator(dir)) {
    names.insert(fs::relative(e.path(), dir).string());
  }
  return names;
}

using Keys = std::vector<std::string>;

// Reads through every path a read-only store can take, then a write that fails.
void CheckReadsAndRefusedWrite(const std::string& store, const std::vector<std::string>& flags) {
  auto with = [&](std::vector<std::string> args) {
    args.insert(args.begin(), flags.begin(), flags.end());
    return args;
  };
  RunResult r = AmemEnv(store, with({"--json", "get-node", "fact:1"}));
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(r.json()["content"] == "lmdb page one");
  r = AmemEnv(store, with({"--json", "stats"}));
  REQUIRE(r.exit_code == 0);
  CHECK(r.json()["revision"] == 4);

  std::string err;
  // Latest: the base (revision 2) plus a delta compiled in memory.
  std::vector<std::string> args = with({});
  CHECK(Found(store, "lmdb", args, &err) == Keys{"fact:1", "fact:2", "fact:3", "fact:4"});
  CHECK(err.find(kFromMemory) != std::string::npos);
  // Older than the base, never cached: built in memory.
  args = with({"--as-of", "1"});
  CHECK(Found(store, "lmdb", args, &err) == Keys{"fact:1"});
  CHECK(err.find(kFromMemory) != std::string::npos);
  // At the base itself: nothing to build, nothing said.
  args = with({"--as-of", "2"});
  CHECK(Found(store, "lmdb", args, &err) == Keys{"fact:1", "fact:2"});
  CHECK(err.empty());

  r = AmemEnv(store, with({"put-node", "fact:5", "--type", "fact", "--content", "lmdb page five"}));
  CHECK(r.exit_code == 6);
  CHECK(r.err.find("read-only") != std::string::npos);
  CHECK(r.err.find("nothing was written") != std::string::npos);
  r = AmemEnv(store, with({"--json", "stats"}));
  REQUIRE(r.exit_code == 0);
  CHECK(r.json()["revision"] == 4);
}

// Revisions 1-4, one "lmdb page N" node each; a base at revision 2 (a query then).
void MakeStore(const std::string& store) {
  REQUIRE(AmemEnv(store, {"init"}).exit_code == 0);
  std::string err;
  for (int i = 1; i <= 4; ++i) {
    Ingest(store, "fact:" + std::to_string(i), "lmdb page " + (i == 1 ? std::string("one") : std::to_string(i)));
    if (i == 2) CHECK(Found(store, "lmdb", {}, &err).size() == 2);
  }
}

}  // namespace

TEST_CASE("a store on a read-only file system is read, from memory where the cache lacks, and refuses writes",
          "[cli][live][hardening]") {
  SmallDisk disk("16m");
  if (!disk.mounted()) {
    WARN("skipped: cannot mount a tmpfs here (" << disk.why() << ")");
    return;
  }
  const std::string store = disk.dir() + "/store";
  MakeStore(store);
  const auto before = Files(store);
  REQUIRE(disk.SetReadOnly(true));
  // Proof that this is a read-only file system, not permission bits.
  FILE* probe = std::fopen((store + "/probe").c_str(), "w");
  const int probe_errno = errno;
  if (probe != nullptr) std::fclose(probe);
  REQUIRE(probe == nullptr);
  REQUIRE(probe_errno == EROFS);

  SECTION("found read-only by itself") { CheckReadsAndRefusedWrite(store, {}); }
  SECTION("with --read-only too") { CheckReadsAndRefusedWrite(store, {"--read-only"}); }
  SECTION("amem mcp serves reads and refuses writes") {
    const std::string session =
        R"({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18",)"
        R"("capabilities":{},"clientInfo":{"name":"t","version":"1"}}})"
        "\n"
        R"({"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"text_search","arguments":{"query":"lmdb"}}})"
        "\n"
        R"({"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"put_memory",)"
        R"("arguments":{"key":"fact:9","type":"fact","content":"x"}}})"
        "\n"
        R"({"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"get_memory","arguments":{"node":"fact:4"}}})"
        "\n";
    // A merge due (the bound at 0): the new base cannot be written, so the server
    // answers from memory and logs it. (Below its bound it layers base + delta in
    // memory as always, and has nothing to write.)
    RunResult r = RunProgram(AMEM_BINARY, {"--store", store, "mcp", "--tools", "all"}, session,
                             {"AMEM_MERGE_FRACTION=0", "AMEM_MERGE_RECORDS=0"}, "");
    INFO(r.err);
    INFO(r.out);
    CHECK(r.exit_code == 0);
    for (const char* key : {"fact:1", "fact:2", "fact:3", "fact:4"}) {
      CHECK(r.out.find(key) != std::string::npos);
    }
    CHECK(r.out.find("read-only") != std::string::npos);
    CHECK(r.out.find(R"("id":4,"result")") != std::string::npos);
    CHECK(r.err.find(kFromMemory) != std::string::npos);
  }
  REQUIRE(disk.SetReadOnly(false));
  CHECK(Files(store) == before);
}

TEST_CASE("the --read-only flag reads a writable store without writing anything beside it, and refuses writes",
          "[cli][live][hardening]") {
  TempDir dir;
  const std::string store = dir.Sub("store");
  MakeStore(store);
  const auto before = Files(store);
  CheckReadsAndRefusedWrite(store, {"--read-only"});
  CHECK(Files(store) == before);
  // Not even the lock file of the caches, on a store that never had them.
  fs::create_directories(dir.Sub("bare"));
  fs::copy_file(store + "/data.mdb", dir.Sub("bare/data.mdb"));
  fs::copy_file(store + "/lock.mdb", dir.Sub("bare/lock.mdb"));
  std::string bare_err;
  CHECK(Found(dir.Sub("bare"), "lmdb", {"--read-only"}, &bare_err).size() == 4);
  CHECK(bare_err.find(kFromMemory) != std::string::npos);
  CHECK(Files(dir.Sub("bare")) == std::set<std::string>{"data.mdb", "lock.mdb"});
  // A missing store is not created.
  RunResult r = AmemEnv(dir.Sub("none"), {"--read-only", "stats"});
  CHECK(r.exit_code == 3);
  CHECK_FALSE(fs::exists(dir.Sub("none")));
  // Without the flag the caches are written as before.
  std::string err;
  CHECK(Found(store, "lmdb", {}, &err, {"AMEM_MERGE_FRACTION=1000"}).size() == 4);
  CHECK(err.empty());
  CHECK(fs::exists(store + "/current.amdl"));
}

TEST_CASE("a full disk when a merge is due: queries answer from memory and say so",
          "[cli][live][hardening]") {
  SmallDisk disk("8m");
  if (!disk.mounted()) {
    WARN("skipped: cannot mount a small tmpfs here (" << disk.why() << ")");
    return;
  }
  const std::string store = disk.dir() + "/store";
  MakeStore(store);
  // Fill the disk to the last byte.
  {
    FILE* f = std::fopen((disk.dir() + "/filler").c_str(), "w");
    REQUIRE(f != nullptr);
    const std::string chunk(4096, 'f');
    while (std::fwrite(chunk.data(), 1, chunk.size(), f) == chunk.size() && std::fflush(f) == 0) {
    }
    std::fclose(f);
  }
  const std::vector<std::string> merge_due{"AMEM_MERGE_FRACTION=0", "AMEM_MERGE_RECORDS=0"};
  std::string err;
  CHECK(Found(store, "lmdb", {}, &err, merge_due) == Keys{"fact:1", "fact:2", "fact:3", "fact:4"});
  CHECK(err.find(kFromMemory) != std::string::npos);
  CHECK(Found(store, "lmdb", {"--as-of", "1"}, &err, merge_due) == Keys{"fact:1"});
  CHECK(err.find(kFromMemory) != std::string::npos);
  CHECK(Found(store, "lmdb", {"--as-of", "3"}, &err, merge_due) ==
        Keys{"fact:1", "fact:2", "fact:3"});
  // The MCP server too: an answer, and the note in its log.
  const std::string session =
      R"({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18",)"
      R"("capabilities":{},"clientInfo":{"name":"t","version":"1"}}})"
      "\n"
      R"({"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"text_search","arguments":{"query":"lmdb"}}})"
      "\n";
  RunResult r = RunProgram(AMEM_BINARY, {"--store", store, "mcp", "--tools", "all"}, session, merge_due, "");
  INFO(r.err);
  CHECK(r.exit_code == 0);
  CHECK(r.out.find("fact:4") != std::string::npos);
  CHECK(r.out.find("isError\":true") == std::string::npos);
  CHECK(r.err.find(kFromMemory) != std::string::npos);
  // With room again the merge happens and nothing is said.
  std::filesystem::remove(disk.dir() + "/filler");
  CHECK(Found(store, "lmdb", {}, &err, merge_due).size() == 4);
  CHECK(err.empty());
  CHECK(amem::testing::ReadFile(store + "/current.rev").rfind("4 ", 0) == 0);
  for (const auto& e : fs::directory_iterator(store)) {
    CHECK(e.path().string().find(".tmp.") == std::string::npos);
  }
}
