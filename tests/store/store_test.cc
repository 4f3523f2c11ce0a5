#include "store/store.h"

#include <catch2/catch.hpp>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <fstream>
#include <mutex>
#include <nlohmann/json.hpp>
#include <thread>

#include "common/hash.h"
#include "tests/store/store_test_util.h"

using namespace amem;
using namespace amem::testing;

TEST_CASE("Open creates a store and reopens it", "[store]") {
  TempDir dir;
  {
    StoreOptions opts;
    opts.dimension = 8;
    auto store = OpenStore(dir.path(), opts);
    CHECK(store->dimension() == 8);
    CHECK(store->revision().value() == 0);
    CHECK(Must(store->PutNode(Node("file:a.cc", "hello"), At(100))) == 1);
  }
  auto store = OpenStore(dir.path());  // default dimension ignored: the store keeps 8
  CHECK(store->dimension() == 8);
  CHECK(store->revision().value() == 1);
  auto n = Must(store->GetNode("file:a.cc"));
  CHECK(n.content == "hello");
  CHECK(n.id == NodeIdForKey("file:a.cc"));
  CHECK(n.created_ts == 100);
  CHECK(n.rev == 1);

  StoreOptions no_create;
  no_create.create_if_missing = false;
  auto missing = Store::Open(dir.Sub("nope"), no_create);
  CHECK(missing.status().IsNotFound());
}

TEST_CASE("Two Stores on one directory in one process share its environment",
          "[store]") {
  TempDir dir;
  auto a = OpenStore(dir.path());
  auto b = OpenStore(dir.path() + "/.");  // same directory, spelled differently
  REQUIRE(a->PutNode(Node("x", "from a")).ok());
  CHECK(Must(b->GetNode("x")).content == "from a");
  REQUIRE(b->PutNode(Node("y", "from b")).ok());
  a.reset();  // closing one leaves the other working
  CHECK(Must(b->GetNode("x")).content == "from a");
  CHECK(b->revision().value() == 2);
  auto c = OpenStore(dir.path());
  CHECK(Must(c->GetNode("y")).content == "from b");
}

TEST_CASE("Node put, overwrite, delete and as-of reads", "[store]") {
  TempDir dir;
  auto store = OpenStore(dir.path());
  NodeInput n = Node("fact:x", "v1");
  n.meta = R"({"b":"2", "a":"1"})";
  n.confidence = 0.5f;
  CHECK(Must(store->PutNode(n, At(10))) == 1);
  n.content = "v2";
  CHECK(Must(store->PutNode(n, At(20))) == 2);
  CHECK(Must(store->DeleteNode("fact:x", At(30))) == 3);

  CHECK(store->GetNode("fact:x").status().IsNotFound());
  auto v1 = Must(store->GetNode("fact:x", ReadView::AtRevision(1)));
  CHECK(v1.content == "v1");
  CHECK(v1.meta == R"({"a":"1","b":"2"})");
  CHECK(v1.confidence == 0.5f);
  auto v2 = Must(store->GetNode("fact:x", ReadView::AtTime(25)));
  CHECK(v2.content == "v2");
  CHECK(v2.created_ts == 10);
  CHECK(v2.updated_ts == 20);
  CHECK(store->GetNode("fact:x", ReadView::AtTime(5)).status().IsNotFound());
  CHECK(store->GetNode("fact:x", ReadView::AtRevision(0)).status().IsNotFound());
  CHECK(store->GetNode("fact:x", ReadView::AtRevision(4)).status().IsInvalidArgument());
  // Deleting again: nothing to delete.
  CHECK(store->DeleteNode("fact:x").status().IsNotFound());
  CHECK(store->revision().value() == 3);
  // Re-creating starts a new life.
  n.content = "v3";
  CHECK(Must(store->PutNode(n, At(40))) == 4);
  auto v3 = Must(store->GetNode("fact:x"));
  CHECK(v3.created_ts == 40);
  CHECK(store->GetNode("fact:x", ReadView::AtRevision(3)).status().IsNotFound());
  CHECK(Must(store->GetNode("fact:x", ReadView::AtRevision(2))).content == "v2");
  // By id and by hex id.
  CHECK(Must(store->GetNodeById(v3.id)).key == "fact:x");
  CHECK(Must(store->ResolveNode(FormatHexId(v3.id))).key == "fact:x");
  CHECK(Must(store->ResolveNode("fact:x")).content == "v3");
}

TEST_CASE("Edges: out and in agree, relation filter, delete", "[store][adjacency]") {
  TempDir dir;
  auto store = OpenStore(dir.path());
  Batch b;
  for (const char* k : {"a", "b", "c", "d"}) b.PutNode(Node(k));
  b.PutEdge(Edge("a", "calls", "b"));
  b.PutEdge(Edge("a", "calls", "c"));
  b.PutEdge(Edge("a", "imports", "d"));
  b.PutEdge(Edge("b", "calls", "c"));
  CHECK(Must(store->Apply(b, At(1))) == 1);

  auto out = Must(store->Out("a"));
  REQUIRE(out.size() == 3);
  for (const auto& e : out) {
    CHECK(e.src_key == "a");
    CHECK(e.src == NodeIdForKey("a"));
  }
  CHECK(out[0].rel == kCalls);
  CHECK(out[2].rel == kImports);
  CHECK(out[2].rel_name == "imports");
  CHECK(Must(store->Out("a", "calls")).size() == 2);
  CHECK(Must(store->Out("a", "imports")).size() == 1);
  CHECK(Must(store->Out("a", "tests")).empty());
  CHECK(store->Out("a", "nonsense").status().IsInvalidArgument());
  auto in_c = Must(store->In("c"));
  REQUIRE(in_c.size() == 2);
  CHECK(Must(store->In("c", "calls")).size() == 2);

  CHECK(Must(store->DeleteEdge("a", "calls", "c", At(2))) == 2);
  CHECK(Must(store->Out("a", "calls")).size() == 1);
  CHECK(Must(store->In("c")).size() == 1);
  CHECK(Must(store->Out("a", "calls", ReadView::AtRevision(1))).size() == 2);
  CHECK(store->GetEdge("a", "calls", "c").status().IsNotFound());
  CHECK(Must(store->GetEdge("a", "calls", "c", ReadView::AtRevision(1))).weight == 1.0f);
}

TEST_CASE("Kv put, list, history and as-of", "[store][kv]") {
  TempDir dir;
  auto store = OpenStore(dir.path());
  CHECK(Must(store->PutKv(Kv("proj", "decisions", "style", "google"), At(5))) == 1);
  CHECK(Must(store->PutKv(Kv("proj", "decisions", "errors", "status"), At(6))) == 2);
  CHECK(Must(store->PutKv(Kv("proj", "decisions", "style", "leveldb"), At(7))) == 3);
  Batch b;
  b.DeleteKv("proj", "decisions", "errors");
  CHECK(Must(store->Apply(b, At(8))) == 4);

  CHECK(Must(store->GetKv("proj", "decisions", "style")).value == "leveldb");
  CHECK(Must(store->GetKv("proj", "decisions", "style", ReadView::AtRevision(2))).value ==
        "google");
  CHECK(store->GetKv("proj", "decisions", "errors").status().IsNotFound());
  auto list = Must(store->ListKv("proj", "decisions"));
  REQUIRE(list.size() == 1);
  auto list3 = Must(store->ListKv("proj", "decisions", ReadView::AtTime(7)));
  REQUIRE(list3.size() == 2);
  CHECK(list3[0].key == "errors");
  CHECK(list3[1].value == "leveldb");
  auto hist = Must(store->KvHistory("proj", "decisions", "errors"));
  REQUIRE(hist.size() == 2);
  CHECK_FALSE(hist[0].deleted);
  CHECK(hist[1].deleted);
  CHECK(Must(store->ListKv("proj", "constraints")).empty());
}

TEST_CASE("ReadState is sorted and independent of write order and batching",
          "[store][state]") {
  TempDir dir;
  std::vector<std::string> keys;
  for (int i = 0; i < 40; ++i) keys.push_back("k" + std::to_string((i * 7919) % 40));
  auto describe = [](Store* store) {
    auto st = Must(store->ReadState());
    std::string out;
    for (const auto& n : st.nodes) out += "N " + n.key + " " + n.content + "\n";
    for (const auto& e : st.edges) {
      out += "E " + e.src_key + " " + e.rel_name + " " + e.dst_key + " " + e.payload + "\n";
    }
    for (const auto& kv : st.kv) out += "K " + kv.scope + " " + kv.ns + " " + kv.key + "\n";
    return out;
  };
  // One store in one batch, in order...
  auto one = OpenStore(dir.Sub("one"));
  {
    Batch b;
    for (const auto& k : keys) b.PutNode(Node(k, "c" + k));
    for (size_t i = 0; i < keys.size(); ++i) {
      b.PutEdge(Edge(keys[i], "calls", keys[(i + 1) % keys.size()]));
      b.PutEdge(Edge(keys[i], "supports", "missing:" + keys[i]));
      b.PutKv(Kv("s" + std::to_string(i % 3), "ns", keys[i], "v"));
    }
    REQUIRE(one->Apply(b).ok());
  }
  // ...and another one op per revision, in reverse, with detours.
  auto two = OpenStore(dir.Sub("two"));
  for (size_t n = keys.size(); n-- > 0;) {
    REQUIRE(two->PutEdge(Edge(keys[n], "supports", "missing:" + keys[n])).ok());
    REQUIRE(two->PutEdge(Edge(keys[n], "calls", keys[(n + 1) % keys.size()])).ok());
    REQUIRE(two->PutNode(Node(keys[n], "draft")).ok());
    REQUIRE(two->PutEdge(Edge(keys[n], "related_to", keys[0])).ok());
    REQUIRE(two->DeleteEdge(keys[n], "related_to", keys[0]).ok());
    REQUIRE(two->PutNode(Node(keys[n], "c" + keys[n])).ok());
    REQUIRE(two->PutKv(Kv("s" + std::to_string(n % 3), "ns", keys[n], "v")).ok());
  }
  CHECK(describe(one.get()) == describe(two.get()));
  auto st = Must(one->ReadState());
  REQUIRE(st.nodes.size() == 40);
  REQUIRE(st.edges.size() == 80);
  for (size_t i = 1; i < st.nodes.size(); ++i) CHECK(st.nodes[i - 1].key < st.nodes[i].key);
  for (size_t i = 1; i < st.edges.size(); ++i) {
    const auto& a = st.edges[i - 1];
    const auto& b = st.edges[i];
    CHECK(std::tie(a.src_key, a.rel, a.dst_key) < std::tie(b.src_key, b.rel, b.dst_key));
  }
  CHECK(st.kv.front().scope == "s0");
  CHECK(st.kv.back().scope == "s2");
}

TEST_CASE("DeleteKv deletes one entry or is NotFound", "[store][kv]") {
  TempDir dir;
  auto store = OpenStore(dir.path());
  KvInput kv = Kv("proj", "constraints", "no-exceptions", "Status everywhere");
  kv.run = "r1";
  REQUIRE(Must(store->PutKv(kv, At(10))) == 1);
  WriteOptions w = At(20);
  w.run = "r2";
  w.task = "t2";
  CHECK(Must(store->DeleteKv("proj", "constraints", "no-exceptions", w)) == 2);
  CHECK(store->GetKv("proj", "constraints", "no-exceptions").status().IsNotFound());
  CHECK(Must(store->GetKv("proj", "constraints", "no-exceptions", ReadView::AtRevision(1)))
            .value == "Status everywhere");
  auto hist = Must(store->KvHistory("proj", "constraints", "no-exceptions"));
  REQUIRE(hist.size() == 2);
  CHECK(hist[1].deleted);
  CHECK(hist[1].ts == 20);
  CHECK(hist[1].run == "r2");
  CHECK(hist[1].task == "t2");
  auto changes = Must(store->ChangesSinceRevision(1));
  REQUIRE(changes.size() == 1);
  CHECK(changes[0].kind == Change::Kind::kDeleteKv);

  // Nothing to delete: NotFound, and no revision is committed.
  auto again = store->DeleteKv("proj", "constraints", "no-exceptions");
  REQUIRE(again.status().IsNotFound());
  CHECK(again.status().message().find("proj/constraints/no-exceptions") != std::string::npos);
  CHECK(store->DeleteKv("proj", "constraints", "never").status().IsNotFound());
  CHECK(store->revision().value() == 2);
  // Bad names are InvalidArgument, as in a batch.
  CHECK(store->DeleteKv("", "constraints", "k").status().IsInvalidArgument());
  CHECK(store->revision().value() == 2);
}

TEST_CASE("A node put that collides with a missing node's edge endpoint is an error",
          "[store][collision]") {
  TempDir dir;
  StoreOptions opts;
  opts.TEST_key_hash = [](std::string_view key) -> uint64_t {
    return key.rfind("clash:", 0) == 0 ? 42 : NodeIdForKey(key);
  };
  auto store = OpenStore(dir.path(), opts);
  // clash:ghost exists only as an edge endpoint (as a destination, then a source).
  REQUIRE(store->PutEdge(Edge("file:a", "references", "clash:ghost")).ok());
  auto r = store->PutNode(Node("clash:other"));
  REQUIRE(r.status().IsInvalidArgument());
  CHECK(r.status().message().find("id collision") != std::string::npos);
  CHECK(r.status().message().find("clash:ghost") != std::string::npos);
  CHECK(store->revision().value() == 1);
  CHECK(store->GetNode("clash:other").status().IsNotFound());

  TempDir dir2;
  auto store2 = OpenStore(dir2.path(), opts);
  REQUIRE(store2->PutEdge(Edge("clash:ghost", "calls", "file:b")).ok());
  Batch b;
  b.PutNode(Node("fact:fine"));
  b.PutNode(Node("clash:other"));
  r = store2->Apply(b);
  REQUIRE(r.status().IsInvalidArgument());
  CHECK(r.status().message().find("op 1: id collision") != std::string::npos);
  CHECK(store2->revision().value() == 1);
  // The endpoint's own key is fine and turns the edge's source into a live node.
  REQUIRE(store2->PutNode(Node("clash:ghost", "here now")).ok());
  CHECK(Must(store2->Stats()).dangling_edges == 1);  // file:b is still missing
}

TEST_CASE("An unknown relation error says how to define one", "[store][relations]") {
  TempDir dir;
  auto store = OpenStore(dir.path());
  auto r = store->PutEdge(Edge("a", "blocks", "b"));
  REQUIRE(r.status().IsInvalidArgument());
  const std::string& m = r.status().message();
  CHECK(m.find("unknown relation 'blocks'") != std::string::npos);
  CHECK(m.find("amem def-rel NAME") != std::string::npos);
  CHECK(m.find(R"({"op":"rel","name":NAME})") != std::string::npos);
}

TEST_CASE("Read telemetry events carry the record's scope, run and task",
          "[store][telemetry]") {
  TempDir dir;
  StoreOptions opts;
  opts.telemetry_path = dir.Sub("events.jsonl");
  auto store = OpenStore(dir.Sub("db"), opts);
  WriteOptions w = At(1000);
  w.run = "run-1";
  w.task = "task-9";
  w.scope = "proj";
  REQUIRE(store->PutNode(Node("file:x.cc", "", NodeType::kFile), w).ok());
  REQUIRE(store->PutEdge(Edge("file:x.cc", "defines", "symbol:f"), w).ok());
  REQUIRE(store->PutKv(Kv("proj", "decisions", "d", "v"), w).ok());
  std::remove(opts.telemetry_path.c_str());  // only the reads below

  REQUIRE(store->GetNode("file:x.cc").ok());
  REQUIRE(store->GetNodeById(NodeIdForKey("file:x.cc")).ok());
  REQUIRE(store->GetEdge("file:x.cc", "defines", "symbol:f").ok());
  REQUIRE(store->GetKv("proj", "decisions", "d").ok());
  REQUIRE(store->ListKv("proj", "decisions").ok());
  REQUIRE(store->KvHistory("proj", "decisions", "d").ok());
  CHECK(store->GetNode("file:none").status().IsNotFound());  // failed reads emit nothing

  std::ifstream in(opts.telemetry_path);
  std::vector<nlohmann::json> events;
  for (std::string line; std::getline(in, line);) events.push_back(nlohmann::json::parse(line));
  REQUIRE(events.size() == 6);
  for (size_t i = 0; i < 4; ++i) {
    INFO("event " << i << ": " << events[i].dump());
    CHECK(events[i]["op"] == "read");
    CHECK(events[i]["run_id"] == "run-1");
    CHECK(events[i]["task_id"] == "task-9");
    CHECK(events[i]["scope"] == (i == 2 ? "" : "proj"));  // edges have no scope
  }
  CHECK(events[0]["entity_type"] == "file");
  CHECK(events[0]["memory_id"] == FormatHexId(NodeIdForKey("file:x.cc")));
  CHECK(events[1]["entity_type"] == "file");
  CHECK(events[2]["entity_type"] == "edge");
  CHECK(events[3]["entity_type"] == "kv");
  for (size_t i = 4; i < 6; ++i) {
    INFO("event " << i << ": " << events[i].dump());
    CHECK(events[i]["op"] == "query");
    CHECK(events[i]["scope"] == "proj");
  }
}

// A batch keeps its room across Clear, and Reserve makes room once: a reader that
// reuses one batch for piece after piece does not grow (and first-touch) it again.
TEST_CASE("Batch::Reserve and Clear keep the operations' room", "[store]") {
  Batch b;
  b.Reserve(3000);
  b.PutNode(Node("fact:first", "c"));
  const Batch::Op* room = b.ops().data();
  for (int i = 0; i < 2999; ++i) {
    b.PutEdge(Edge("fact:" + std::to_string(i), "calls", "fact:x"));
  }
  CHECK(b.size() == 3000);
  CHECK(b.ops().data() == room);  // no growth
  CHECK(b.ops().front().node().key == "fact:first");
  CHECK(b.ops().back().edge().src == "fact:2998");
  b.Clear();
  CHECK(b.empty());
  b.Reserve(10);  // smaller than the room it has: nothing moves
  b.PutNode(Node("fact:again", "c"));
  CHECK(b.ops().data() == room);
  CHECK(b.ops().front().node().key == "fact:again");
}

TEST_CASE("ReserveMap grows the map ahead: writes made while a read of the process is open "
          "need not wait for it to end", "[store][mapfull]") {
  TempDir dir;
  StoreOptions opts;
  opts.TEST_map_size = 256 << 10;  // 256 KiB: the writes below pass it several times
  opts.durable = false;
  auto store = OpenStore(dir.path(), opts);
  REQUIRE(store->PutNode(Node("first", "x")).ok());
  const uint64_t before = Must(store->Stats()).map_size;
  REQUIRE(store->ReserveMap(uint64_t{8} << 20).ok());
  const StoreStats reserved = Must(store->Stats());
  CHECK(reserved.map_size >= reserved.used_bytes + (uint64_t{8} << 20));
  CHECK(reserved.map_size > before);
  REQUIRE(store->ReserveMap(1 << 20).ok());  // room enough: nothing changes
  CHECK(Must(store->Stats()).map_size == reserved.map_size);

  // A long read on another thread (a background merge's export holds one): the
  // writes commit while it is open. A map grown meanwhile would wait for it to
  // end, which it does only once the writes are done or after 30 s.
  std::mutex mu;
  std::condition_variable cv;
  bool reading = false, written = false, writes_done_while_reading = false;
  std::thread reader([&] {
    (void)store->VisitState(ReadView::Latest(), [&](const StoreStateView&) {
      std::unique_lock<std::mutex> lock(mu);
      reading = true;
      cv.notify_all();
      cv.wait_for(lock, std::chrono::seconds(30), [&] { return written; });
      writes_done_while_reading = written;
      return Status::OK();
    });
  });
  {
    std::unique_lock<std::mutex> lock(mu);
    cv.wait(lock, [&] { return reading; });
  }
  for (int i = 0; i < 40; ++i) {
    REQUIRE(store->PutNode(Node("big:" + std::to_string(i), std::string(50000, 'b'))).ok());
  }
  {
    std::lock_guard<std::mutex> lock(mu);
    written = true;
  }
  cv.notify_all();
  reader.join();
  CHECK(writes_done_while_reading);
  CHECK(Must(store->Stats()).live_nodes == 41);
}
