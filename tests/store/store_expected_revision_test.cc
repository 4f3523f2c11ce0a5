// WriteOptions::expected_revision: optimistic read-modify-write (docs/STORE.md §7).
#include <catch2/catch.hpp>

#include <algorithm>
#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include "store/store.h"
#include "tests/store/store_test_util.h"

using namespace amem;
using namespace amem::testing;

namespace {

WriteOptions Expecting(uint64_t rev) {
  WriteOptions w;
  w.expected_revision = rev;
  return w;
}

}  // namespace

TEST_CASE("expected_revision applies at that revision and aborts after another write",
          "[store][expected_revision]") {
  TempDir dir;
  auto store = OpenStore(dir.path());
  // An empty store is at revision 0.
  CHECK(Must(store->PutNode(Node("fact:a", "1"), Expecting(0))) == 1);
  CHECK(Must(store->PutNode(Node("fact:b", "2"), Expecting(1))) == 2);

  // A stale expectation writes nothing, whatever the batch holds.
  Batch b;
  b.PutNode(Node("fact:c", "3"));
  b.DeleteNode("fact:a");
  b.PutEdge(Edge("fact:b", "supports", "fact:a"));
  b.PutKv(Kv("s", "n", "k", "v"));
  b.DefineRelation("blocks");
  auto stale = store->Apply(b, Expecting(1));
  REQUIRE(!stale.ok());
  CHECK(stale.status().IsAborted());
  CHECK_THAT(stale.status().ToString(), Catch::StartsWith("Aborted: conflict"));
  CHECK_THAT(stale.status().message(), Catch::Contains("revision 1 but it is at 2"));
  CHECK(store->revision().value() == 2);
  CHECK(store->GetNode("fact:c").status().IsNotFound());
  CHECK(store->GetNode("fact:a").ok());
  CHECK(store->GetKv("s", "n", "k").status().IsNotFound());
  CHECK(!store->LookupRelation("blocks").ok());
  CHECK(Must(store->ChangesSinceRevision(2)).empty());

  // A future revision is just as stale.
  CHECK(store->Apply(b, Expecting(7)).status().IsAborted());
  // The current one applies the same batch.
  CHECK(Must(store->Apply(b, Expecting(2))) == 3);
  CHECK(store->GetNode("fact:c").ok());
  CHECK(store->LookupRelation("blocks").ok());

  // Single-operation helpers take it too.
  CHECK(store->DeleteNode("fact:c", Expecting(2)).status().IsAborted());
  CHECK(store->GetNode("fact:c").ok());
  CHECK(Must(store->DeleteNode("fact:c", Expecting(3))) == 4);

  // An empty batch returns the revision, or Aborted when it is not the expected one.
  CHECK(Must(store->Apply(Batch(), Expecting(4))) == 4);
  CHECK(store->Apply(Batch(), Expecting(3)).status().IsAborted());
  // Without it, writes never conflict.
  CHECK(Must(store->PutNode(Node("fact:d"))) == 5);

  // Validation comes first: a bad batch is InvalidArgument even when stale.
  Batch bad;
  bad.PutNode(Node(""));
  CHECK(store->Apply(bad, Expecting(1)).status().IsInvalidArgument());
  // A batch that changes nothing commits nothing even when the revision matches.
  Batch noop;
  noop.DeleteNode("fact:never");
  CHECK(Must(store->Apply(noop, Expecting(5))) == 5);
  CHECK(store->revision().value() == 5);
}

TEST_CASE("expected_revision: racing read-modify-writes from two handles lose nothing",
          "[store][expected_revision][threads]") {
  // Two Store handles on one directory (as two processes would have), each thread
  // appending to one list kept in a kv value: read, append, write back. With
  // expected_revision and a retry on Aborted no append is lost; the conflicts it
  // reports are the lost updates a blind write would have made.
  TempDir dir;
  auto a = OpenStore(dir.path());
  auto b = OpenStore(dir.path());
  Must(a->PutKv(Kv("s", "n", "list", ",")));
  constexpr int kPerThread = 60;
  std::atomic<int> conflicts{0};
  std::atomic<bool> failed{false};  // Catch's macros are not for other threads
  auto worker = [&](Store* store, char tag) {
    for (int i = 0; i < kPerThread && !failed; ++i) {
      for (;;) {
        uint64_t rev = store->revision().value();
        auto cur = store->GetKv("s", "n", "list", ReadView::AtRevision(rev));
        if (!cur.ok()) {
          failed = true;
          return;
        }
        std::string next = cur->value + tag + std::to_string(i) + ",";
        auto w = store->PutKv(Kv("s", "n", "list", next), Expecting(rev));
        if (w.ok()) break;
        if (!w.status().IsAborted()) {
          failed = true;
          return;
        }
        ++conflicts;
      }
    }
  };
  std::thread ta(worker, a.get(), 'a'), tb(worker, b.get(), 'b');
  ta.join();
  tb.join();
  REQUIRE(!failed);
  std::string list = Must(a->GetKv("s", "n", "list")).value;
  for (char tag : {'a', 'b'}) {
    for (int i = 0; i < kPerThread; ++i) {
      INFO(tag << i);
      CHECK(list.find("," + std::string(1, tag) + std::to_string(i) + ",") != std::string::npos);
    }
  }
  CHECK(std::count(list.begin(), list.end(), ',') == 1 + 2 * kPerThread);
  CHECK(a->revision().value() == 1 + 2 * kPerThread);
  INFO("conflicts retried: " << conflicts.load());
}
