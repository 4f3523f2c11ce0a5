// Point-in-time reads, the change log, compaction and history dropping.
#include <catch2/catch.hpp>
#include <cstring>
#include <string>
#include <tuple>

#include "store/store.h"
#include "tests/store/raw_lmdb.h"
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

TEST_CASE("VisitState's views hold what the single-record reads return", "[store][asof]") {
  TempDir dir;
  auto store = OpenStore(dir.path());
  BuildHistory(store.get());
  Batch b;
  NodeInput v = Node("f", "f5");
  v.vector.assign(store->dimension(), 0.25f);
  v.vector[1] = -3.5f;
  b.PutNode(v);
  b.PutKv(Kv("t", "ns2", "k3", "v3"));
  REQUIRE(Must(store->Apply(b, At(500))) == 5);
  for (uint64_t r = 0; r <= 5; ++r) {
    INFO("revision " << r);
    const ReadView view = ReadView::AtRevision(r);
    size_t nodes = 0, edges = 0, kv = 0;
    REQUIRE(store->VisitState(view, [&](const StoreStateView& st) {
      CHECK(st.revision == r);
      nodes = st.nodes.size();
      edges = st.edges.size();
      kv = st.kv.size();
      for (size_t i = 0; i < st.nodes.size(); ++i) {
        const NodeView& n = st.nodes[i];
        if (i > 0) CHECK(st.nodes[i - 1].key < n.key);
        NodeRecord want = Must(store->GetNode(n.key, view));
        CHECK(n.id == want.id);
        CHECK(n.content == want.content);
        CHECK(n.meta == want.meta);
        CHECK(n.created_ts == want.created_ts);
        CHECK(n.updated_ts == want.updated_ts);
        CHECK(n.rev == want.rev);
        CHECK(n.vector_bytes.size() == want.vector.size() * sizeof(float));
        if (!want.vector.empty()) {  // memcmp of a null pointer is undefined, even for 0 bytes
          CHECK(std::memcmp(n.vector_bytes.data(), want.vector.data(), n.vector_bytes.size()) == 0);
        }
      }
      for (const EdgeView& e : st.edges) {
        // An endpoint's position is given exactly when the endpoint is live.
        for (auto [pos, key] : {std::pair{e.src_node, e.src_key}, std::pair{e.dst_node, e.dst_key}}) {
          const bool live = store->GetNode(key, view).ok();
          CHECK((pos != EdgeView::kUnknownNode) == live);
          if (pos != EdgeView::kUnknownNode) {
            REQUIRE(pos < st.nodes.size());
            CHECK(st.nodes[pos].key == key);
          }
        }
        EdgeRecord want = Must(store->GetEdge(e.src_key, e.rel_name, e.dst_key, view));
        CHECK(e.src == want.src);
        CHECK(e.dst == want.dst);
        CHECK(e.rel == want.rel);
        CHECK(e.weight == want.weight);
        CHECK(e.payload == want.payload);
        CHECK(e.rev == want.rev);
      }
      for (const KvView& e : st.kv) {  // a past view's keys come from the arena
        KvRecord want = Must(store->GetKv(e.scope, e.ns, e.key, view));
        CHECK(e.value == want.value);
        CHECK(e.ts == want.ts);
        CHECK(e.rev == want.rev);
      }
      return Status::OK();
    }).ok());
    StoreState owned = Must(store->ReadState(view));
    CHECK(owned.nodes.size() == nodes);
    CHECK(owned.edges.size() == edges);
    CHECK(owned.kv.size() == kv);
  }
  // The visitor's error is the call's.
  CHECK(store->VisitState(ReadView::Latest(), [](const StoreStateView&) {
    return Status::Aborted("stop");
  }).IsAborted());
  CHECK(store->VisitState(ReadView::AtRevision(9), [](const StoreStateView&) {
    return Status::OK();
  }).IsInvalidArgument());
}

// Past 65536 edge entries, VisitState reads the edges on a second thread in a
// transaction of its own while it reads the nodes, and places their endpoints
// on two threads: the views must be those of the one-thread read.
TEST_CASE("VisitState reads a large store's edges beside its nodes", "[store][asof]") {
  TempDir dir;
  auto store = OpenStore(dir.path());
  constexpr int kNodes = 20000, kEdges = 70000;
  auto key = [](int i) { return "n" + std::to_string(i); };
  Batch b;
  for (int i = 0; i < kNodes; ++i) b.PutNode(Node(key(i), "c" + std::to_string(i)));
  // Endpoints past kNodes dangle; three relations.
  for (int j = 0; j < kEdges; ++j) {
    b.PutEdge(Edge(key(j % kNodes), j % 3 == 0 ? "calls" : j % 3 == 1 ? "imports" : "tests",
                   key((j * 7919) % (kNodes + 500))));
  }
  REQUIRE(Must(store->Apply(b, At(100))) == 1);
  b.Clear();
  for (int i = 0; i < kNodes; i += 10) b.DeleteNode(key(i));
  for (int j = 0; j < kEdges; j += 3) b.DeleteEdge(key(j % kNodes), "calls", key((j * 7919) % (kNodes + 500)));
  REQUIRE(Must(store->Apply(b, At(200))) == 2);
  for (uint64_t r : {1, 2}) {
    INFO("revision " << r);
    const ReadView view = ReadView::AtRevision(r);
    REQUIRE(store->VisitState(view, [&](const StoreStateView& st) {
      CHECK(st.nodes.size() == (r == 1 ? kNodes : kNodes - kNodes / 10));
      CHECK(st.edges.size() == Must(store->ReadState(view)).edges.size());
      size_t live_ends = 0;
      for (size_t i = 0; i < st.edges.size(); ++i) {
        const EdgeView& e = st.edges[i];
        if (i > 0) {  // the store's order: (src id, rel, dst id)
          const EdgeView& p = st.edges[i - 1];
          CHECK(std::tuple(p.src, p.rel, p.dst) < std::tuple(e.src, e.rel, e.dst));
        }
        for (auto [pos, end] : {std::pair{e.src_node, e.src_key}, std::pair{e.dst_node, e.dst_key}}) {
          const std::string k(end);
          const int n = std::stoi(k.substr(1));
          const bool live = n < kNodes && (r == 1 || n % 10 != 0);
          REQUIRE((pos != EdgeView::kUnknownNode) == live);
          if (live) {
            REQUIRE(pos < st.nodes.size());
            CHECK(st.nodes[pos].key == end);
            ++live_ends;
          }
        }
      }
      CHECK(live_ends > st.edges.size());
      return Status::OK();
    }).ok());
  }
  CHECK(Must(store->ReadState(ReadView::Latest())).edges.size() ==
        Must(store->ReadState(ReadView::AtRevision(2))).edges.size());
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
  CHECK(report.tombstones_removed == 251 + 1);  // edges and node b; kv k1 stays
  auto k1 = Must(store->KvHistory("s", "ns", "k1"));
  REQUIRE(k1.size() == 2);
  CHECK(k1.back().deleted);
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
  // k1 was deleted at revision 3: its tombstone and history are gone with it.
  CHECK(Must(store->KvHistory("s", "ns", "k1")).empty());
  CHECK(Must(store->KvHistory("s", "ns", "k2")).size() == 1);
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

TEST_CASE("Time views handle negative and extreme timestamps", "[store][asof]") {
  TempDir dir;
  auto store = OpenStore(dir.path());
  CHECK(Must(store->ResolveRevision(ReadView::AtTime(INT64_MAX))) == 0);
  CHECK(Must(store->ChangesSinceTime(INT64_MIN)).empty());
  REQUIRE(store->PutNode(Node("x", "neg"), At(-50)).ok());
  REQUIRE(store->PutNode(Node("x", "zero"), At(0)).ok());
  REQUIRE(store->PutNode(Node("x", "pos"), At(70)).ok());
  CHECK(Must(store->ResolveRevision(ReadView::AtTime(INT64_MIN))) == 0);
  CHECK(Must(store->ResolveRevision(ReadView::AtTime(-51))) == 0);
  CHECK(Must(store->ResolveRevision(ReadView::AtTime(-50))) == 1);
  CHECK(Must(store->ResolveRevision(ReadView::AtTime(-1))) == 1);
  CHECK(Must(store->ResolveRevision(ReadView::AtTime(69))) == 2);
  CHECK(Must(store->ResolveRevision(ReadView::AtTime(INT64_MAX))) == 3);
  CHECK(Must(store->GetNode("x", ReadView::AtTime(-10))).content == "neg");
  CHECK(Must(store->ChangesSinceTime(INT64_MIN)).size() == 3);
  CHECK(Must(store->ChangesSinceTime(-50)).size() == 2);
  CHECK(Must(store->ChangesSinceTime(INT64_MAX)).empty());
  CHECK(Must(store->ChangesSinceRevision(UINT64_MAX)).empty());
  CHECK(store->GetNode("x", ReadView::AtRevision(UINT64_MAX)).status().IsInvalidArgument());
}

TEST_CASE("The log leaves out repeated fields and names relations by id", "[store][log]") {
  TempDir dir;
  auto store = OpenStore(dir.path());
  Batch b;
  b.DefineRelation("owns");
  b.PutNode(Node("a", "x"));
  b.PutEdge(Edge("a", "calls", "b"));  // same run/task as before: left out
  b.PutEdge(Edge("a", "owns", "c"));   // same src too
  EdgeInput other = Edge("c", "calls", "a");
  other.run = "run-2";  // a new attribution is written out
  b.PutEdge(other);
  b.PutEdge(Edge("c", "owns", "b"));  // and the batch's comes back
  b.PutKv(Kv("s", "ns", "k", "v"));
  WriteOptions w;
  w.run = "run-1";
  w.task = "t";
  REQUIRE(store->Apply(b, w).ok());
  auto changes = Must(store->ChangesSinceRevision(0));
  REQUIRE(changes.size() == 7);
  CHECK(changes[0].kind == Change::Kind::kDefineRelation);
  CHECK(changes[0].rel_name == "owns");
  CHECK(changes[1].key == "a");
  const std::vector<std::array<std::string, 4>> edges = {
      {"a", "calls", "b", "run-1"}, {"a", "owns", "c", "run-1"},
      {"c", "calls", "a", "run-2"}, {"c", "owns", "b", "run-1"}};
  for (size_t i = 0; i < edges.size(); ++i) {
    const Change& c = changes[2 + i];
    CAPTURE(i);
    CHECK(c.kind == Change::Kind::kPutEdge);
    CHECK(c.src_key == edges[i][0]);
    CHECK(c.rel_name == edges[i][1]);
    CHECK(c.dst_key == edges[i][2]);
    CHECK(c.run == edges[i][3]);
    CHECK(c.task == "t");
    CHECK(c.dst_missing == (edges[i][2] != "a"));  // only "a" is a node
    CHECK(c.src_missing == (edges[i][0] != "a"));
  }
  CHECK(changes[6].scope == "s");
  CHECK(changes[6].key == "k");
  CHECK(changes[6].run == "run-1");
}

TEST_CASE("A format-1 store reads and is upgraded by its first write", "[store][log]") {
  TempDir dir;
  { auto store = OpenStore(dir.path()); }
  // Revision 1 as a format-1 build logged it: every field of every entry, the
  // relation by name (docs/STORE.md §4.5).
  auto entry = [](Change::Kind kind, std::string_view a, std::string_view b,
                  std::string_view c, std::string_view run) {
    std::string e{static_cast<char>(kind), '\0'};
    for (std::string_view field : {a, b, c, run, std::string_view("t")}) {
      PutVarint32(&e, static_cast<uint32_t>(field.size()));
      e.append(field);
    }
    return e;
  };
  std::string log;
  PutFixed64(&log, 100);
  PutVarint32(&log, 2);
  log += entry(Change::Kind::kPutNode, "a", "", "", "r");
  log += entry(Change::Kind::kPutEdge, "a", "calls", "b", "r");
  auto meta_u64 = [](uint64_t v) {
    std::string s;
    PutBig64(&s, v);
    return s;
  };
  RawLmdbWrite(dir.path(), [&](MDB_txn* txn, const auto& db) {
    std::string rev_key = meta_u64(1), format = meta_u64(1), rev = meta_u64(1);
    std::string format_key = "format", rev_name = "rev";
    MDB_val k = RawVal(rev_key), v = RawVal(log);
    REQUIRE(mdb_put(txn, db("log", 0), &k, &v, 0) == 0);
    k = RawVal(format_key);
    v = RawVal(format);
    REQUIRE(mdb_put(txn, db("meta", 0), &k, &v, 0) == 0);
    k = RawVal(rev_name);
    v = RawVal(rev);
    REQUIRE(mdb_put(txn, db("meta", 0), &k, &v, 0) == 0);
  });
  auto format_of = [&] {
    uint64_t format = 0;
    RawLmdbWrite(dir.path(), [&](MDB_txn* txn, const auto& db) {
      std::string key = "format";
      MDB_val k = RawVal(key), v{0, nullptr};
      REQUIRE(mdb_get(txn, db("meta", 0), &k, &v) == 0);
      REQUIRE(v.mv_size == 8);
      format = DecodeBig64(static_cast<const char*>(v.mv_data));
    });
    return format;
  };
  REQUIRE(format_of() == 1);
  {
    auto store = OpenStore(dir.path());
    auto old = Must(store->ChangesSinceRevision(0));
    REQUIRE(old.size() == 2);
    CHECK(old[1].src_key == "a");
    CHECK(old[1].rel_name == "calls");
    CHECK(old[1].dst_key == "b");
    CHECK(old[1].run == "r");
    REQUIRE(store->PutEdge(Edge("b", "calls", "a")).ok());
    auto all = Must(store->ChangesSinceRevision(0));
    REQUIRE(all.size() == 3);
    CHECK(all[2].src_key == "b");
    CHECK(all[2].rel_name == "calls");
  }
  CHECK(format_of() == 2);
}
