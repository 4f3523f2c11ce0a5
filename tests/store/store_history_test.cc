// Point-in-time reads, the change log, compaction and history dropping.
#include <catch2/catch.hpp>

#include "store/store.h"
#include "tests/store/store_test_util.h"

using namespace amem;
using namespace amem::testing;

namespace {

// Every answer a reader can get for `keys` at `view`, as one string.
std::string Answers(Store* store, const ReadView& view, const std::vector<std::string>& keys) {
  std::string out;
  auto st = Must(store->ReadState(view));
  out += "rev=" + std::to_string(st.revision) + "\n";
  for (const auto& n : st.nodes) out += "N " + n.key + " " + n.content + "\n";
  for (const auto& e : st.edges) {
    out += "E " + e.src_key + " " + e.rel_name + " " + e.dst_key + " " + std::to_string(e.weight) + "\n";
  }
  for (const auto& kv : st.kv) out += "K " + kv.key + "=" + kv.value + "\n";
  for (const auto& k : keys) {
    auto n = store->GetNode(k, view);
    out += "get " + k + " " + (n.ok() ? n->content : n.status().ToString()) + "\n";
    for (const auto& e : Must(store->Out(k, "", view))) out += "out " + k + " " + e.rel_name + " " + e.dst_key + "\n";
    for (const auto& e : Must(store->In(k, "", view))) out += "in " + k + " " + e.rel_name + " " + e.src_key + "\n";
    for (const auto& e : Must(store->Out(k, "calls", view))) out += "calls " + k + " " + e.dst_key + "\n";
  }
  for (const auto& kv : Must(store->ListKv("s", "ns", view))) out += "kv " + kv.key + "=" + kv.value + "\n";
  return out;
}

// Builds a history with overwrites and deletes of nodes, edges and kv.
// Revision r has timestamp 100 * r.
void BuildHistory(Store* store) {
  Batch b;
  for (const char* k : {"a", "b", "c", "d"}) b.PutNode(Node(k, std::string(k) + "1"));
  b.PutEdge(Edge("a", "calls", "b"));
  b.PutEdge(Edge("a", "calls", "c"));
  b.PutEdge(Edge("a", "imports", "d"));
  b.PutEdge(Edge("b", "calls", "c"));
  b.PutKv(Kv("s", "ns", "k1", "v1"));
  REQUIRE(Must(store->Apply(b, At(100))) == 1);
  b.Clear();
  b.PutNode(Node("a", "a2"));
  b.PutEdge(Edge("a", "calls", "b", 0.5f));
  b.DeleteEdge("a", "calls", "c");
  b.PutKv(Kv("s", "ns", "k2", "v2"));
  REQUIRE(Must(store->Apply(b, At(200))) == 2);
  b.Clear();
  b.DeleteNode("b");
  b.DeleteEdge("b", "calls", "c");
  b.DeleteKv("s", "ns", "k1");
  REQUIRE(Must(store->Apply(b, At(300))) == 3);
  b.Clear();
  b.PutEdge(Edge("a", "calls", "c", 2.0f));  // re-created
  b.PutNode(Node("e", "e4"));
  REQUIRE(Must(store->Apply(b, At(400))) == 4);
}

const std::vector<std::string> kKeys = {"a", "b", "c", "d", "e"};

}  // namespace

TEST_CASE("Reads as of a revision and as of a time agree", "[store][asof]") {
  TempDir dir;
  auto store = OpenStore(dir.path());
  BuildHistory(store.get());
  for (uint64_t r = 0; r <= 4; ++r) {
    INFO("revision " << r);
    CHECK(Answers(store.get(), ReadView::AtRevision(r), kKeys) ==
          Answers(store.get(), ReadView::AtTime(static_cast<int64_t>(r) * 100 + 50), kKeys));
    CHECK(Must(store->ResolveRevision(ReadView::AtTime(static_cast<int64_t>(r) * 100))) == r);
  }
  CHECK(Answers(store.get(), ReadView::Latest(), kKeys) ==
        Answers(store.get(), ReadView::AtRevision(4), kKeys));

  // Spot checks of what each revision saw.
  CHECK(Must(store->Out("a", "calls", ReadView::AtRevision(1))).size() == 2);
  auto r2 = Must(store->Out("a", "calls", ReadView::AtRevision(2)));
  REQUIRE(r2.size() == 1);
  CHECK(r2[0].weight == 0.5f);
  CHECK(Must(store->In("c", "", ReadView::AtRevision(3))).empty());
  auto r4 = Must(store->In("c"));
  REQUIRE(r4.size() == 1);
  CHECK(r4[0].weight == 2.0f);
  CHECK(Must(store->GetNode("b", ReadView::AtRevision(2))).content == "b1");
  CHECK(store->GetNode("b", ReadView::AtRevision(3)).status().IsNotFound());
  CHECK(Must(store->GetEdge("a", "calls", "c", ReadView::AtTime(150))).weight == 1.0f);
  CHECK(store->GetEdge("a", "calls", "c", ReadView::AtTime(250)).status().IsNotFound());
  CHECK(Must(store->ReadState(ReadView::AtRevision(0))).nodes.empty());
  CHECK(Must(store->ReadState(ReadView::AtRevision(2))).revision_ts == 200);
}

TEST_CASE("Revision timestamps never go backwards", "[store][asof]") {
  TempDir dir;
  auto store = OpenStore(dir.path());
  REQUIRE(store->PutNode(Node("x", "1"), At(500)).ok());
  REQUIRE(store->PutNode(Node("x", "2"), At(400)).ok());  // clock skew: commit ts stays 500
  auto changes = Must(store->ChangesSinceRevision(0));
  REQUIRE(changes.size() == 2);
  CHECK(changes[1].ts == 500);
  CHECK(Must(store->GetNode("x")).updated_ts == 400);  // the record keeps what it was given
  CHECK(Must(store->ResolveRevision(ReadView::AtTime(450))) == 0);
  CHECK(Must(store->ResolveRevision(ReadView::AtTime(500))) == 2);
  // The max per-op ts is the batch ts when the batch has none.
  Batch b;
  NodeInput n = Node("y");
  n.ts = 900;
  b.PutNode(n);
  REQUIRE(store->Apply(b).ok());
  CHECK(Must(store->Stats()).revision_ts == 900);
}

TEST_CASE("The change log lists what each revision did", "[store][log]") {
  TempDir dir;
  auto store = OpenStore(dir.path());
  BuildHistory(store.get());
  auto all = Must(store->ChangesSinceRevision(0));
  REQUIRE(all.size() == 18);
  CHECK(all[0].kind == Change::Kind::kPutNode);
  CHECK(all[0].key == "a");
  CHECK(all[4].src_key == "a");
  CHECK(all[4].rel_name == "calls");
  auto since2 = Must(store->ChangesSinceRevision(2));
  REQUIRE(since2.size() == 5);
  CHECK(since2[0].kind == Change::Kind::kDeleteNode);
  CHECK(since2[0].rev == 3);
  CHECK(since2[2].kind == Change::Kind::kDeleteKv);
  CHECK(since2[2].key == "k1");
  WriteOptions w;
  w.ts = 500;
  w.run = "run-7";
  REQUIRE(store->PutNode(Node("a", "a5"), w).ok());
  auto last = Must(store->ChangesSinceTime(400));
  REQUIRE(last.size() == 1);
  CHECK(last[0].overwrite);
  CHECK(last[0].run == "run-7");
  CHECK(last[0].ts == 500);
  CHECK(Must(store->ChangesSinceTime(500)).empty());
  CHECK(Must(store->ChangesSinceRevision(99)).empty());
}

TEST_CASE("Compaction keeps every answer and clears the warning", "[store][compact]") {
  TempDir dir;
  auto store = OpenStore(dir.path());
  BuildHistory(store.get());
  // Enough tombstones on one hub to pass the warning threshold.
  Batch b;
  for (int i = 0; i < 300; ++i) b.PutEdge(Edge("hub", "related_to", "leaf" + std::to_string(i)));
  REQUIRE(Must(store->Apply(b, At(500))) == 5);
  b.Clear();
  for (int i = 0; i < 250; ++i) b.DeleteEdge("hub", "related_to", "leaf" + std::to_string(i));
  REQUIRE(Must(store->Apply(b, At(600))) == 6);
  std::vector<std::string> keys = kKeys;
  keys.push_back("hub");
  keys.push_back("leaf3");
  keys.push_back("leaf299");

  auto stats = Must(store->Stats());
  CHECK(stats.compaction_recommended);
  REQUIRE(stats.warnings.size() == 1);
  CHECK(stats.warnings[0].find("compact") != std::string::npos);
  CHECK(stats.deleted_edges == 251);  // a-calls-c was re-created
  CHECK(stats.dead_adjacency_entries == 502);

  std::vector<std::string> before;
  for (uint64_t r = 0; r <= 6; ++r) before.push_back(Answers(store.get(), ReadView::AtRevision(r), keys));

  CompactOptions dry;
  dry.dry_run = true;
  auto preview = Must(store->Compact(dry));
  CHECK(preview.dry_run);
  CHECK(preview.adjacency_entries_removed == 502);
  CHECK(Must(store->Stats()).dead_adjacency_entries == 502);  // nothing changed

  auto report = Must(store->Compact());
  CHECK(report.adjacency_entries_removed == 502);
  CHECK(report.tombstones_removed == 251 + 1 + 1);  // edges, node b, kv k1
  CHECK(report.lists_rewritten >= 2);
  CHECK(report.warnings.empty());
  auto after = Must(store->Stats());
  CHECK_FALSE(after.compaction_recommended);
  CHECK(after.dead_adjacency_entries == 0);
  CHECK(after.deleted_edges == 0);
  CHECK(after.live_edges == stats.live_edges);
  CHECK(after.adjacency_entries == stats.adjacency_entries - 502);
  for (uint64_t r = 0; r <= 6; ++r) {
    INFO("revision " << r);
    CHECK(Answers(store.get(), ReadView::AtRevision(r), keys) == before[r]);
  }
  // Writes after compaction behave: re-create a compacted edge and node.
  REQUIRE(store->PutEdge(Edge("hub", "related_to", "leaf0")).ok());
  REQUIRE(store->PutNode(Node("b", "b7")).ok());
  CHECK(Must(store->Out("hub")).size() == 51);
  CHECK(Must(store->GetNode("b")).created_ts != 100);
  CHECK(Answers(store.get(), ReadView::AtRevision(6), keys) == before[6]);
}

TEST_CASE("Dropping history makes older views an error", "[store][compact]") {
  TempDir dir;
  auto store = OpenStore(dir.path());
  BuildHistory(store.get());
  std::string at3 = Answers(store.get(), ReadView::AtRevision(3), kKeys);
  std::string at4 = Answers(store.get(), ReadView::AtRevision(4), kKeys);

  CompactOptions bad;
  bad.drop_history_before = 9;
  CHECK(store->Compact(bad).status().IsInvalidArgument());

  CompactOptions drop;
  drop.drop_history_before = 3;
  auto report = Must(store->Compact(drop));
  CHECK(report.history_entries_removed > 0);
  CHECK(report.oldest_readable_revision == 3);
  CHECK(Must(store->Stats()).oldest_readable_revision == 3);

  for (auto view : {ReadView::AtRevision(2), ReadView::AtTime(250), ReadView::AtRevision(0)}) {
    auto r = store->GetNode("a", view);
    REQUIRE(r.status().IsInvalidArgument());
    CHECK(r.status().message().find("history before revision 3 was compacted") !=
          std::string::npos);
    CHECK(store->Out("a", "", view).status().IsInvalidArgument());
    CHECK(store->ReadState(view).status().IsInvalidArgument());
  }
  CHECK(store->ChangesSinceRevision(1).status().IsInvalidArgument());
  CHECK(Must(store->ChangesSinceRevision(2)).size() == 5);
  CHECK(Answers(store.get(), ReadView::AtRevision(3), kKeys) == at3);
  CHECK(Answers(store.get(), ReadView::AtRevision(4), kKeys) == at4);
  // History is still kept from the floor on.
  REQUIRE(store->PutNode(Node("a", "a5")).ok());
  CHECK(Must(store->GetNode("a", ReadView::AtRevision(4))).content == "a2");
}

TEST_CASE("A hub with 20000 edges ingests and lists them all", "[store][adjacency]") {
  TempDir dir;
  StoreOptions opts;
  opts.durable = false;
  auto store = OpenStore(dir.path(), opts);
  // Several batches so that later ones append to an existing big list.
  for (int part = 0; part < 4; ++part) {
    Batch b;
    for (int i = part * 5000; i < (part + 1) * 5000; ++i) {
      b.PutEdge(Edge("module:hub", i % 2 ? "imports" : "calls", "n" + std::to_string(i)));
    }
    REQUIRE(store->Apply(b).ok());
  }
  auto out = Must(store->Out("module:hub"));
  REQUIRE(out.size() == 20000);
  for (size_t i = 1; i < out.size(); ++i) {
    bool ordered = out[i - 1].rel < out[i].rel ||
                   (out[i - 1].rel == out[i].rel && out[i - 1].dst < out[i].dst);
    REQUIRE(ordered);
  }
  CHECK(Must(store->Out("module:hub", "imports")).size() == 10000);
  CHECK(Must(store->In("n12345")).size() == 1);
  REQUIRE(store->DeleteEdge("module:hub", "calls", "n0").ok());
  CHECK(Must(store->Out("module:hub", "calls")).size() == 9999);
}
