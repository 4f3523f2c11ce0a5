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
    std::optional<uint64_t> unwritten = UnwrittenBytes(
        dir.path() + "/data.mdb", used, used + store_internal::kZeroAheadLow);
    if (!unwritten) {
      WARN("the filesystem under " << dir.path() << " does not answer FIEMAP: not checked");
      return;
    }
    if (durable) {
      CHECK(*unwritten == 0);
    } else {
      // Not durable: no fdatasync to spare, so no zeros; the headroom stays as
      // posix_fallocate left it, unwritten (ext4, xfs, btrfs).
      CHECK(*unwritten == store_internal::kZeroAheadLow);
    }
  }
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
