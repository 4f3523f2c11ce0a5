// Zeros written ahead of a durable store's used size (store_internal::ZeroAhead):
// the pages the next commits take are written blocks, not the unwritten ones
// posix_fallocate leaves, and the zeros never reach a committed page.
#include <fcntl.h>
#include <lmdb.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <optional>
#include <string>
#include <vector>

#include "store/internal/store_rep.h"
#include "tests/store/store_test_util.h"

namespace amem::testing {
namespace {

// Bytes of [from, to) of `path` the filesystem has never written (holes and
// unwritten extents); nullopt when it cannot say (no FIEMAP).
std::optional<uint64_t> UnwrittenBytes(const std::string& path, uint64_t from, uint64_t to) {
  const int fd = ::open(path.c_str(), O_RDONLY);
  REQUIRE(fd >= 0);
  REQUIRE(::fdatasync(fd) == 0);  // delayed allocations made
  std::vector<std::pair<uint64_t, uint64_t>> ranges;
  const bool known = store_internal::UnwrittenRanges(fd, from, to, &ranges);
  ::close(fd);
  if (!known) return std::nullopt;
  uint64_t bytes = 0;
  for (const auto& [lo, hi] : ranges) {
    REQUIRE(from <= lo);
    REQUIRE(lo < hi);
    REQUIRE(hi <= to);
    bytes += hi - lo;
  }
  return bytes;
}

bool OnZeroAheadFilesystem(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY);
  REQUIRE(fd >= 0);
  const bool yes = store_internal::ZeroAheadFilesystem(fd);
  ::close(fd);
  return yes;
}

// The used size of the closed store in `dir` (its last commit's pages).
uint64_t UsedBytes(const std::string& dir) {
  MDB_env* env = nullptr;
  REQUIRE(mdb_env_create(&env) == 0);
  REQUIRE(mdb_env_set_maxdbs(env, 16) == 0);
  REQUIRE(mdb_env_open(env, dir.c_str(), MDB_RDONLY, 0644) == 0);
  MDB_envinfo info;
  MDB_stat stat;
  REQUIRE(mdb_env_info(env, &info) == 0);
  REQUIRE(mdb_env_stat(env, &stat) == 0);
  mdb_env_close(env);
  return (uint64_t{info.me_last_pgno} + 1) * stat.ms_psize;
}

NodeInput Node(int i, size_t content_bytes) {
  NodeInput n;
  n.key = "fact:" + std::to_string(i);
  n.type = NodeType::kFact;
  n.content = std::string(content_bytes, static_cast<char>('a' + i % 26));
  return n;
}

TEST_CASE("durable commits find the pages past the used size written, not just allocated",
          "[store][durability]") {
  for (const bool durable : {true, false}) {
    INFO("durable " << durable);
    TempDir dir;
    {
      StoreOptions options;
      options.durable = durable;
      auto store = Store::Open(dir.path(), options);
      REQUIRE(store.ok());
      REQUIRE((*store)->PutNode(Node(0, 100)).ok());
    }
    const uint64_t used = UsedBytes(dir.path());
    if (!OnZeroAheadFilesystem(dir.path() + "/data.mdb")) {
      WARN("the filesystem under " << dir.path() << " is neither ext4 nor xfs: not checked");
      return;
    }
    std::optional<uint64_t> unwritten = UnwrittenBytes(
        dir.path() + "/data.mdb", used, used + store_internal::kZeroAheadLow);
    REQUIRE(unwritten.has_value());
    if (durable) {
      CHECK(*unwritten == 0);
    } else {
      // Not durable: no fdatasync to spare, so no zeros; the headroom stays as
      // posix_fallocate left it, unwritten (ext4, xfs, btrfs).
      CHECK(*unwritten == store_internal::kZeroAheadLow);
    }
  }
}

TEST_CASE("UnwrittenRanges finds holes and unwritten extents, past 64 extents",
          "[store][durability]") {
  TempDir dir;
  const std::string path = dir.path() + "/f";
  const int fd = ::open(path.c_str(), O_RDWR | O_CREAT, 0644);
  REQUIRE(fd >= 0);
  if (!store_internal::ZeroAheadFilesystem(fd)) {
    ::close(fd);
    WARN("the filesystem under " << dir.path() << " is neither ext4 nor xfs: not checked");
    return;
  }
  // [0, 1 MiB) allocated, of which the even blocks of the first 200 are then
  // written (100 written extents between unwritten ones); [1 MiB, 2 MiB) a hole.
  constexpr uint64_t kB = 4096, kMiB = 1 << 20;
  REQUIRE(::ftruncate(fd, 2 * kMiB) == 0);
  REQUIRE(::fallocate(fd, FALLOC_FL_KEEP_SIZE, 0, kMiB) == 0);
  const std::string block(kB, 'x');
  for (uint64_t b = 0; b < 200; b += 2) {
    REQUIRE(::pwrite(fd, block.data(), kB, static_cast<off_t>(b * kB)) == static_cast<ssize_t>(kB));
  }
  REQUIRE(::fdatasync(fd) == 0);
  // What was built: the odd blocks, then everything from block 200 on.
  auto expected = [&](uint64_t from, uint64_t to) {
    std::vector<std::pair<uint64_t, uint64_t>> out;
    for (uint64_t b = 1; b < 200; b += 2) {
      const uint64_t lo = std::max(from, b * kB), hi = std::min(to, (b + 1) * kB);
      if (lo < hi) out.emplace_back(lo, hi);
    }
    const uint64_t rest = std::max(from, 200 * kB);  // adjacent ranges come merged
    if (rest < to && !out.empty() && out.back().second == rest) {
      out.back().second = to;
    } else if (rest < to) {
      out.emplace_back(rest, to);
    }
    return out;
  };
  std::vector<std::pair<uint64_t, uint64_t>> got;
  for (const auto& [from, to] : std::vector<std::pair<uint64_t, uint64_t>>{
           {0, 2 * kMiB},           // the whole file
           {kB + 1024, 3 * kMiB},   // from inside an unwritten block to past the end
           {2 * kB, 3 * kB},        // one written block
           {150 * kB, 150 * kB + 10},
           {kMiB + kB, kMiB + 2 * kB}}) {  // inside the hole
    INFO(from << ".." << to);
    REQUIRE(store_internal::UnwrittenRanges(fd, from, to, &got));
    auto text = [](const std::vector<std::pair<uint64_t, uint64_t>>& v) {
      std::string out;
      for (const auto& [lo, hi] : v) out += std::to_string(lo) + "-" + std::to_string(hi) + " ";
      return out;
    };
    CHECK(text(got) == text(expected(from, to)));
  }
  ::close(fd);
}

TEST_CASE("zeros written ahead never reach a committed page", "[store][durability]") {
  // Single-node commits that grow the store by several zero windows, each commit
  // refilling the zeros ahead; then every node reads back as written, from the
  // open store and, reopened, from the disk.
  TempDir dir;
  const int n = 1200;
  const size_t content = 8000;  // n * content > 2 * kZeroAhead
  static_assert(1200 * 8000 > 2 * store_internal::kZeroAhead);
  {
    auto store = Store::Open(dir.path());
    REQUIRE(store.ok());
    for (int i = 0; i < n; ++i) REQUIRE((*store)->PutNode(Node(i, content)).ok());
    for (int i = 0; i < n; i += 97) {
      auto node = (*store)->GetNode("fact:" + std::to_string(i));
      REQUIRE(node.ok());
      CHECK(node->content == Node(i, content).content);
    }
  }
  CHECK(UsedBytes(dir.path()) > 2 * store_internal::kZeroAhead);
  // Read what the disk holds: the file's pages out of the page cache.
  const int fd = ::open((dir.path() + "/data.mdb").c_str(), O_RDONLY);
  REQUIRE(fd >= 0);
  REQUIRE(::fdatasync(fd) == 0);
  REQUIRE(::posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED) == 0);
  ::close(fd);
  auto store = Store::Open(dir.path());
  REQUIRE(store.ok());
  for (int i = 0; i < n; ++i) {
    auto node = (*store)->GetNode("fact:" + std::to_string(i));
    REQUIRE(node.ok());
    REQUIRE(node->content == Node(i, content).content);
  }
}

}  // namespace
}  // namespace amem::testing
