// Out and in lists agree with each other and with the e records through writes,
// deletes and partial compactions; the tombstone counter behind the cheap warning
// matches Stats().
#include <catch2/catch.hpp>
#include <map>
#include <random>
#include <set>
#include <tuple>

#include "common/hash.h"
#include "store/store.h"
#include "tests/store/raw_lmdb.h"
#include "tests/store/store_test_util.h"

using namespace amem;
using namespace amem::testing;

namespace {

using Triple = std::tuple<std::string, std::string, std::string>;  // src, rel, dst

std::set<Triple> Triples(const std::vector<EdgeRecord>& edges) {
  std::set<Triple> out;
  for (const EdgeRecord& e : edges) out.emplace(e.src_key, e.rel_name, e.dst_key);
  return out;
}

// The invariant "an adjacency entry in out <=> one in in <=> an e record", seen
// through the API at `view`: every edge in Out(x) is in In(dst) and vice versa,
// and together they are exactly the live edges (ReadState reads the e records).
void CheckOutInAgree(Store* store, const std::vector<std::string>& keys,
                     const ReadView& view = {}) {
  std::set<Triple> by_out, by_in;
  for (const std::string& k : keys) {
    for (const Triple& t : Triples(Must(store->Out(k, "", view)))) {
      REQUIRE(std::get<0>(t) == k);
      by_out.insert(t);
    }
    for (const Triple& t : Triples(Must(store->In(k, "", view)))) {
      REQUIRE(std::get<2>(t) == k);
      by_in.insert(t);
    }
  }
  std::set<Triple> live = Triples(Must(store->ReadState(view)).edges);
  CHECK(by_out == live);
  CHECK(by_in == live);
}

// Live edges and node/edge tombstones each keep both adjacency entries or
// neither (tombstones without entries are removed by Compact), so the entry
// count is twice the e record count.
void CheckEntryCount(Store* store) {
  StoreStats st = Must(store->Stats());
  INFO("live " << st.live_edges << " deleted " << st.deleted_edges << " entries "
               << st.adjacency_entries);
  CHECK(st.adjacency_entries == 2 * (st.live_edges + st.deleted_edges));
  std::string expected = st.warnings.empty() ? "" : st.warnings.front();
  CHECK(Must(store->TombstoneWarning()) == expected);
}

}  // namespace

TEST_CASE("A partial compaction keeps out and in in agreement", "[store][compact][adjacency]") {
  TempDir dir;
  auto store = OpenStore(dir.path());
  Batch b;
  for (const char* x : {"A", "B", "C", "D"}) b.PutEdge(Edge("S", "calls", x));
  for (int i = 1; i <= 9; ++i) b.PutEdge(Edge("X" + std::to_string(i), "calls", "D"));
  REQUIRE(Must(store->Apply(b, At(100))) == 1);
  REQUIRE(Must(store->DeleteEdge("S", "calls", "D", At(200))) == 2);

  // out(S) is 1/4 dead (passes kCompactListDeadRatio = 25%), in(D) 1/10 (does
  // not), and one tombstone is far from the store-wide warning: only out(S)
  // qualifies, yet the edge must leave both lists.
  StoreStats before = Must(store->Stats());
  REQUIRE_FALSE(before.compaction_recommended);
  CHECK(before.dead_adjacency_entries == 2);
  CompactReport report = Must(store->Compact());
  CHECK(report.adjacency_entries_removed == 2);
  CHECK(report.lists_rewritten == 2);
  CHECK(report.tombstones_removed == 1);
  CHECK(report.warnings.empty());
  StoreStats after = Must(store->Stats());
  CHECK(after.adjacency_entries == 24);
  CHECK(after.deleted_edges == 0);

  // Re-creating the edge writes both entries again.
  REQUIRE(Must(store->PutEdge(Edge("S", "calls", "D"), At(300))) == 3);
  std::set<Triple> out_s = Triples(Must(store->Out("S")));
  CHECK(out_s == std::set<Triple>{{"S", "calls", "A"}, {"S", "calls", "B"},
                                  {"S", "calls", "C"}, {"S", "calls", "D"}});
  CHECK(Must(store->In("D")).size() == 10);
  CHECK(Triples(Must(store->Out("S", "calls"))).count({"S", "calls", "D"}) == 1);
  StoreStats final_stats = Must(store->Stats());
  CHECK(final_stats.live_edges == 13);
  CHECK(final_stats.adjacency_entries == 26);
  std::vector<std::string> keys = {"S", "A", "B", "C", "D"};
  for (int i = 1; i <= 9; ++i) keys.push_back("X" + std::to_string(i));
  for (uint64_t rev = 0; rev <= 3; ++rev) {
    INFO("revision " << rev);
    CheckOutInAgree(store.get(), keys, ReadView::AtRevision(rev));
  }
  // As-of reads across the delete and the re-creation.
  CHECK(Must(store->Out("S", "", ReadView::AtRevision(1))).size() == 4);
  CHECK(Must(store->Out("S", "", ReadView::AtRevision(2))).size() == 3);
  CHECK(Must(store->In("D", "", ReadView::AtRevision(2))).size() == 9);
  CHECK(Must(store->GetEdge("S", "calls", "D")).created_ts == 300);
  CHECK(store->GetEdge("S", "calls", "D", ReadView::AtRevision(2)).status().IsNotFound());
  CHECK(Must(store->GetEdge("S", "calls", "D", ReadView::AtRevision(1))).created_ts == 100);

  // Deleting it again and compacting again works the same way.
  REQUIRE(store->DeleteEdge("S", "calls", "D", At(400)).ok());
  REQUIRE(store->Compact().ok());
  CHECK(Must(store->Stats()).adjacency_entries == 24);
  CHECK(Must(store->Out("S", "", ReadView::AtRevision(3))).size() == 4);
  CheckOutInAgree(store.get(), keys);
}

TEST_CASE("Out, in and the e records agree after random writes and compactions",
          "[store][compact][adjacency]") {
  TempDir dir;
  auto store = OpenStore(dir.path());
  std::mt19937 rng(20240611);
  std::vector<std::string> keys;
  for (int i = 0; i < 10; ++i) keys.push_back("n" + std::to_string(i));
  const char* rels[] = {"calls", "imports", "related_to"};
  auto pick = [&](size_t n) { return static_cast<size_t>(rng() % n); };

  std::set<Triple> model;  // the live edges
  std::map<uint64_t, std::set<Triple>> at_revision;
  int64_t ts = 1000;
  for (int step = 0; step < 400; ++step) {
    INFO("step " << step);
    if (step % 9 == 8) {
      CompactOptions options;
      uint64_t latest = store->revision().value();
      if (step % 5 == 0 && latest > 20) options.drop_history_before = latest - 20;
      REQUIRE(store->Compact(options).ok());
    } else {
      Batch b;
      std::set<Triple> next = model;
      size_t ops = 1 + pick(4);
      for (size_t i = 0; i < ops; ++i) {
        Triple t{keys[pick(keys.size())], rels[pick(3)], keys[pick(keys.size())]};
        // Deletes outnumber puts in some stretches, so that tombstones pile up.
        bool del = pick(100) < (step / 50 % 2 ? 65 : 35);
        if (pick(10) == 0) {
          const std::string& k = keys[pick(keys.size())];
          if (del) {
            b.DeleteNode(k);
          } else {
            b.PutNode(Node(k, "c" + std::to_string(step)));
          }
        } else if (del) {
          b.DeleteEdge(std::get<0>(t), std::get<1>(t), std::get<2>(t));
          next.erase(t);
        } else {
          b.PutEdge(Edge(std::get<0>(t), std::get<1>(t), std::get<2>(t)));
          next.insert(t);
        }
      }
      auto rev = store->Apply(b, At(++ts));
      REQUIRE(rev.ok());
      model = next;
      at_revision[*rev] = model;
    }
    CHECK(Triples(Must(store->ReadState()).edges) == model);
    CheckOutInAgree(store.get(), keys);
    CheckEntryCount(store.get());
  }
  // Every revision still readable gives the edges it had.
  uint64_t oldest = Must(store->Stats()).oldest_readable_revision;
  for (const auto& [rev, edges] : at_revision) {
    if (rev < oldest) continue;
    INFO("revision " << rev);
    CHECK(Triples(Must(store->ReadState(ReadView::AtRevision(rev))).edges) == edges);
    CheckOutInAgree(store.get(), keys, ReadView::AtRevision(rev));
  }
}

TEST_CASE("Compaction repairs out/in lists an older compaction left disagreeing",
          "[store][compact][adjacency]") {
  TempDir dir;
  {
    auto store = OpenStore(dir.path());
    Batch b;
    for (const char* x : {"A", "B", "C", "D"}) b.PutEdge(Edge("S", "calls", x));
    for (const char* x : {"T", "X1", "X2", "X3", "X4", "X5", "X6", "X7", "X8", "X9"}) {
      b.PutEdge(Edge(x, "calls", "D"));
    }
    REQUIRE(store->Apply(b, At(100)).ok());
    REQUIRE(store->DeleteEdge("S", "calls", "D", At(200)).ok());
  }
  // What the old per-list compaction left: the out entry of S->D gone (out(S)
  // qualified), its in entry and the tombstone kept (in(D), 1 dead of 11, did
  // not). Also a live edge T->D missing its out entry.
  RawLmdbWrite(dir.path(), [](MDB_txn* txn, const auto& db) {
    MDB_dbi out = db("out", MDB_DUPSORT | MDB_DUPFIXED);
    for (const char* src : {"S", "T"}) {
      std::string key = RawNodeKey(src), entry = RawAdjEntry(kCalls, "D");
      MDB_val k = RawVal(key), v = RawVal(entry);
      REQUIRE(mdb_del(txn, out, &k, &v) == 0);
    }
  });
  auto store = OpenStore(dir.path());
  CHECK(Must(store->Out("T")).empty());  // the damage is visible
  CHECK(Must(store->In("D")).size() == 10);

  CompactOptions dry;
  dry.dry_run = true;
  auto preview = Must(store->Compact(dry));
  REQUIRE_FALSE(preview.warnings.empty());
  CHECK(preview.warnings.back().find("would repair") != std::string::npos);
  auto report = Must(store->Compact());
  REQUIRE_FALSE(report.warnings.empty());
  CHECK(report.warnings.back().find("repaired") != std::string::npos);
  CHECK(report.warnings.back().find("1 missing entries of live edges") != std::string::npos);
  CHECK(report.warnings.back().find("1 deleted edges with one entry") != std::string::npos);
  CHECK(report.tombstones_removed == 1);
  CHECK(Must(store->Out("T")).size() == 1);
  REQUIRE(store->PutEdge(Edge("S", "calls", "D"), At(300)).ok());
  CheckOutInAgree(store.get(), {"S", "T", "A", "B", "C", "D", "X1", "X2", "X3", "X4", "X5",
                                "X6", "X7", "X8", "X9"});
  CheckEntryCount(store.get());
  CHECK(Must(store->Stats()).adjacency_entries == 28);
  CHECK(Must(store->Compact()).warnings.empty());  // nothing left to repair
}

TEST_CASE("The tombstone warning is O(1) and matches Stats", "[store][compact]") {
  TempDir dir;
  {
    auto store = OpenStore(dir.path());
    CHECK(Must(store->TombstoneWarning()).empty());
    Batch b;
    for (int i = 0; i < 300; ++i) b.PutNode(Node("n" + std::to_string(i)));
    b.PutEdge(Edge("n0", "calls", "n1"));
    REQUIRE(store->Apply(b, At(1)).ok());
    b.Clear();
    for (int i = 0; i < 99; ++i) b.DeleteNode("n" + std::to_string(i));
    b.DeleteNode("never-existed");  // a no-op adds no tombstone
    REQUIRE(store->Apply(b, At(2)).ok());
    CHECK(Must(store->TombstoneWarning()).empty());  // 99 < kWarnMinTombstones
    REQUIRE(store->DeleteEdge("n0", "calls", "n1", At(3)).ok());
    std::string warning = Must(store->TombstoneWarning());
    CHECK(warning.rfind("100 tombstones (33% of node and edge records)", 0) == 0);
    CHECK(warning.find("amem compact") != std::string::npos);
    StoreStats st = Must(store->Stats());
    REQUIRE(st.warnings.size() == 1);
    CHECK(st.warnings[0] == warning);
    // Re-creating a deleted node replaces its tombstone.
    REQUIRE(store->PutNode(Node("n5"), At(4)).ok());
    CHECK(Must(store->TombstoneWarning()).empty());
    REQUIRE(store->DeleteNode("n5", At(5)).ok());
    CHECK(Must(store->TombstoneWarning()) == warning);
  }
  // A store written before the counter existed: without the meta key the count
  // is taken by a scan, and the next delete stores it again.
  RawLmdbWrite(dir.path(), [](MDB_txn* txn, const auto& db) {
    std::string name = "tombstones";
    MDB_val k = RawVal(name);
    REQUIRE(mdb_del(txn, db("meta", 0), &k, nullptr) == 0);
  });
  auto store = OpenStore(dir.path());
  CHECK(Must(store->TombstoneWarning()).rfind("100 tombstones", 0) == 0);
  REQUIRE(store->DeleteNode("n200", At(6)).ok());
  CHECK(Must(store->TombstoneWarning()).rfind("101 tombstones", 0) == 0);
  CheckEntryCount(store.get());
  REQUIRE(store->Compact().ok());
  CHECK(Must(store->TombstoneWarning()).empty());
  CheckEntryCount(store.get());
}

TEST_CASE("A write retried after the map grew lists its edges both ways",
          "[store][mapfull][adjacency]") {
  TempDir dir;
  StoreOptions opts;
  opts.durable = false;
  opts.TEST_map_size = 64 << 10;  // grows many times; some attempts fail mid-batch
  auto store = OpenStore(dir.path(), opts);
  std::vector<std::string> keys = {"hub"};
  for (int i = 0; i < 90; ++i) {
    Batch b;
    for (int j = 0; j < 5; ++j) {
      // With these sizes (and the map growing from 64 KiB) some attempts run out
      // of map while adding in-list entries, then rerun.
      std::string key = "t0:" + std::to_string(i) + ":" + std::to_string(j);
      b.PutNode(Node(key, std::string(2000, 'x')));
      b.PutEdge(Edge("hub", "related_to", key));
      keys.push_back(key);
    }
    REQUIRE(store->Apply(b).ok());
  }
  CHECK(Must(store->Out("hub")).size() == 450);
  CheckOutInAgree(store.get(), keys);
  CheckEntryCount(store.get());
}
