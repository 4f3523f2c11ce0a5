// Store::RevisionIdentity (docs/STORE.md §4.6): what ties the query caches to one
// history of a store (issue 41, defect 2). Stable for a commit, different for
// another commit at the same revision number, even one with the same content at
// the same time, as a store restored from a backup and written again makes.
// And StoreOptions::read_only (defect 7): reads work, writes are refused.
#include <catch2/catch.hpp>

#include <filesystem>
#include <set>
#include <vector>

#include "store/store.h"
#include "tests/store/store_test_util.h"

using namespace amem;
using amem::testing::At;
using amem::testing::Node;
using amem::testing::OpenStore;
using amem::testing::TempDir;

TEST_CASE("a revision's identity is its commit's: stable, and another commit's differs",
          "[store][identity]") {
  TempDir a_dir, b_dir;
  auto a = OpenStore(a_dir.path());
  auto b = OpenStore(b_dir.path());
  // Revision 0, the empty state, is the same everywhere.
  CHECK(a->RevisionIdentity(0).value() == 1);
  CHECK(b->RevisionIdentity(0).value() == 1);
  // The same writes, at the same times, in two stores: other commits.
  for (auto* s : {a.get(), b.get()}) {
    REQUIRE(s->PutNode(Node("fact:x", "same"), At(100)).ok());
    REQUIRE(s->PutNode(Node("fact:y", "same"), At(200)).ok());
  }
  std::set<uint64_t> seen;
  for (uint64_t rev : {1, 2}) {
    auto ia = a->RevisionIdentity(rev);
    auto ib = b->RevisionIdentity(rev);
    REQUIRE(ia.ok());
    REQUIRE(ib.ok());
    CHECK(*ia != 0);
    CHECK(*ia != *ib);
    seen.insert(*ia);
    // Asked again: the same.
    CHECK(a->RevisionIdentity(rev).value() == *ia);
  }
  CHECK(seen.size() == 2);
  // Later writes leave earlier identities as they were.
  REQUIRE(a->PutNode(Node("fact:z"), At(300)).ok());
  CHECK(seen.count(a->RevisionIdentity(1).value()) == 1);
  CHECK(seen.count(a->RevisionIdentity(2).value()) == 1);
  CHECK(seen.count(a->RevisionIdentity(3).value()) == 0);
  // The future has none.
  CHECK(a->RevisionIdentity(4).status().IsInvalidArgument());
}

TEST_CASE("a replayed history is other commits; compacted history has no identity",
          "[store][identity]") {
  TempDir a_dir, b_dir;
  auto a = OpenStore(a_dir.path());
  // The same three revisions in both stores, the second's applied as amem replay
  // applies a log.
  std::vector<LoggedRevision> history(3);
  for (int i = 1; i <= 3; ++i) {
    REQUIRE(a->PutNode(Node("fact:" + std::to_string(i), "v"), At(100 * i)).ok());
    LoggedRevision& r = history[static_cast<size_t>(i - 1)];
    r.rev = static_cast<uint64_t>(i);
    r.ts = 100 * i;
    NodeInput n = Node("fact:" + std::to_string(i), "v");
    n.ts = 100 * i;
    r.batch.PutNode(std::move(n));
  }
  auto b = OpenStore(b_dir.path());
  auto applied = b->ApplyRevisions(history);
  INFO(applied.status().ToString());
  REQUIRE(applied.ok());
  for (uint64_t rev : {1, 2, 3}) {
    CHECK(b->RevisionIdentity(rev).value() != a->RevisionIdentity(rev).value());
  }
  CompactOptions drop;
  drop.drop_history_before = 3;
  REQUIRE(a->Compact(drop).ok());
  CHECK(a->RevisionIdentity(1).status().IsInvalidArgument());
  CHECK(a->RevisionIdentity(3).ok());
}

TEST_CASE("a read-only store reads and refuses every write, changing nothing", "[store][identity]") {
  TempDir dir;
  {
    auto s = OpenStore(dir.path());
    REQUIRE(s->PutNode(Node("fact:a", "kept"), At(100)).ok());
  }
  StoreOptions ro;
  ro.read_only = true;
  ro.create_if_missing = false;
  // The writer above is closed, so this open makes the directory's environment
  // (the first open in a process decides its flags).
  auto s = Store::Open(dir.path(), ro);
  REQUIRE(s.ok());
  CHECK((*s)->read_only());
  CHECK((*s)->GetNode("fact:a").value().content == "kept");
  auto put = (*s)->PutNode(Node("fact:b"), At(200));
  CHECK(put.status().IsIOError());
  CHECK(put.status().message().find("read-only") != std::string::npos);
  CHECK((*s)->Compact().status().IsIOError());
  CHECK((*s)->revision().value() == 1);
  // A read-only open never creates a store.
  TempDir empty;
  StoreOptions create_ro = ro;
  create_ro.create_if_missing = true;
  CHECK(Store::Open(empty.Sub("s"), create_ro).status().IsNotFound());
  CHECK_FALSE(std::filesystem::exists(empty.Sub("s")));
}
