// Failure modes (docs/DESIGN.md §3) and bad input (docs/DESIGN.md §9): each is a
// clear error and leaves the store unchanged.
#include <lmdb.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <functional>
#include <cmath>
#include <limits>

#include "common/coding.h"
#include "common/hash.h"
#include "store/store.h"
#include "tests/store/store_test_util.h"

using namespace amem;
using namespace amem::testing;

namespace {

// Everything a reader can observe, to compare before and after a failed write.
std::string Fingerprint(Store* store) {
  auto st = Must(store->ReadState());
  std::string f = "rev=" + std::to_string(st.revision) + ";";
  for (const auto& n : st.nodes) f += n.key + "|" + n.content + "|" + n.meta + ";";
  for (const auto& e : st.edges) f += e.src_key + ">" + e.rel_name + ">" + e.dst_key + ";";
  for (const auto& kv : st.kv) f += kv.scope + "/" + kv.ns + "/" + kv.key + "=" + kv.value + ";";
  for (const auto& [id, name] : st.relations) f += std::to_string(id) + name + ";";
  return f;
}

void Seed(Store* store) {
  Batch b;
  b.PutNode(Node("file:a.cc", "alpha", NodeType::kFile));
  b.PutNode(Node("file:b.cc", "beta", NodeType::kFile));
  b.PutEdge(Edge("file:a.cc", "imports", "file:b.cc"));
  b.PutKv(Kv("p", "decisions", "k", "v"));
  REQUIRE(store->Apply(b, At(1)).ok());
}

// Applies a good op plus `bad` as op 1; expects InvalidArgument mentioning
// "op 1" and `field`, and an unchanged store.
template <typename AddBad>
void ExpectRejected(Store* store, const std::string& field, AddBad add_bad) {
  std::string before = Fingerprint(store);
  Batch b;
  b.PutNode(Node("fact:fine", "ok"));
  add_bad(&b);
  auto r = store->Apply(b, At(2));
  INFO(r.status().ToString());
  REQUIRE(r.status().IsInvalidArgument());
  CHECK(r.status().message().find("op 1") != std::string::npos);
  CHECK(r.status().message().find(field) != std::string::npos);
  CHECK(Fingerprint(store) == before);
  CHECK(store->GetNode("fact:fine").status().IsNotFound());
}

}  // namespace

TEST_CASE("Bad input is rejected whole and changes nothing", "[store][validation]") {
  TempDir dir;
  StoreOptions opts;
  opts.dimension = 4;
  auto store = OpenStore(dir.path(), opts);
  Seed(store.get());
  static constexpr float nan = std::numeric_limits<float>::quiet_NaN();
  static constexpr float inf = std::numeric_limits<float>::infinity();

  auto node_with = [](auto mutate) {
    return [mutate](Batch* b) {
      NodeInput n = Node("fact:bad", "x");
      mutate(n);
      b->PutNode(std::move(n));
    };
  };
  ExpectRejected(store.get(), "key", node_with([](NodeInput& n) { n.key = ""; }));
  ExpectRejected(store.get(), "key",
                 node_with([](NodeInput& n) { n.key = std::string(kMaxKeyBytes + 1, 'k'); }));
  ExpectRejected(store.get(), "key", node_with([](NodeInput& n) { n.key = "bad\xff"; }));
  ExpectRejected(store.get(), "content", node_with([](NodeInput& n) { n.content = "\xc3\x28"; }));
  ExpectRejected(store.get(), "content", node_with([](NodeInput& n) {
    n.content = std::string(kMaxContentBytes + 1, 'c');
  }));
  ExpectRejected(store.get(), "meta", node_with([](NodeInput& n) { n.meta = "{\"a\":"; }));
  ExpectRejected(store.get(), "meta", node_with([](NodeInput& n) { n.meta = "[1,2]"; }));
  ExpectRejected(store.get(), "meta", node_with([](NodeInput& n) { n.meta = R"({"a":1})"; }));
  ExpectRejected(store.get(), "confidence", node_with([](NodeInput& n) { n.confidence = nan; }));
  ExpectRejected(store.get(), "confidence", node_with([](NodeInput& n) { n.confidence = inf; }));
  ExpectRejected(store.get(), "confidence", node_with([](NodeInput& n) { n.confidence = 1.5f; }));
  ExpectRejected(store.get(), "confidence", node_with([](NodeInput& n) { n.confidence = -0.1f; }));
  ExpectRejected(store.get(), "vector", node_with([](NodeInput& n) { n.vector = {1, 2, 3}; }));
  ExpectRejected(store.get(), "vector", node_with([](NodeInput& n) { n.vector = {1, 2, nan, 4}; }));
  ExpectRejected(store.get(), "type",
                 node_with([](NodeInput& n) { n.type = static_cast<NodeType>(99); }));
  ExpectRejected(store.get(), "run",
                 node_with([](NodeInput& n) { n.run = std::string(kMaxNameBytes + 1, 'r'); }));
  ExpectRejected(store.get(), "scope", node_with([](NodeInput& n) { n.scope = "s\xfe"; }));

  auto edge_with = [](auto mutate) {
    return [mutate](Batch* b) {
      EdgeInput e = Edge("file:a.cc", "calls", "file:b.cc");
      mutate(e);
      b->PutEdge(std::move(e));
    };
  };
  ExpectRejected(store.get(), "weight", edge_with([](EdgeInput& e) { e.weight = nan; }));
  ExpectRejected(store.get(), "weight", edge_with([](EdgeInput& e) { e.weight = -inf; }));
  ExpectRejected(store.get(), "payload", edge_with([](EdgeInput& e) { e.payload = "{oops}"; }));
  ExpectRejected(store.get(), "payload", edge_with([](EdgeInput& e) {
    e.payload = "\"" + std::string(kMaxPayloadBytes, 'p') + "\"";
  }));
  ExpectRejected(store.get(), "src", edge_with([](EdgeInput& e) { e.src = ""; }));
  ExpectRejected(store.get(), "relation", edge_with([](EdgeInput& e) { e.rel = "frobnicates"; }));
  ExpectRejected(store.get(), "relation", edge_with([](EdgeInput& e) { e.rel = "77"; }));
  ExpectRejected(store.get(), "relation", edge_with([](EdgeInput& e) { e.rel = "300"; }));
  ExpectRejected(store.get(), "relation",
                 [](Batch* b) { b->DefineRelation("Bad Name"); });

  ExpectRejected(store.get(), "scope", [](Batch* b) { b->PutKv(Kv("", "ns", "k", "v")); });
  ExpectRejected(store.get(), "ns", [](Batch* b) { b->PutKv(Kv("s", std::string("a\0b", 3), "k", "v")); });
  ExpectRejected(store.get(), "value", [](Batch* b) { b->PutKv(Kv("s", "ns", "k", "\xff")); });
  ExpectRejected(store.get(), "value", [](Batch* b) {
    b->PutKv(Kv("s", "ns", "k", std::string(kMaxKvValueBytes + 1, 'v')));
  });

  // The unknown-relation message says how to define one.
  auto r = store->PutEdge(Edge("file:a.cc", "frobnicates", "file:b.cc"));
  CHECK(r.status().message().find("frobnicates") != std::string::npos);
  CHECK(r.status().message().find("define") != std::string::npos);
  CHECK(store->revision().value() == 1);
}

TEST_CASE("Meta and payload are canonicalised", "[store][validation]") {
  TempDir dir;
  auto store = OpenStore(dir.path());
  NodeInput n = Node("fact:m");
  n.meta = R"({ "zeta" : "1",  "alpha":"\u00e9" })";
  REQUIRE(store->PutNode(n).ok());
  CHECK(Must(store->GetNode("fact:m")).meta == "{\"alpha\":\"\xc3\xa9\",\"zeta\":\"1\"}");
  n.meta = R"({"a":"x","b":"y"})";  // already canonical: kept byte for byte
  REQUIRE(store->PutNode(n).ok());
  CHECK(Must(store->GetNode("fact:m")).meta == R"({"a":"x","b":"y"})");
  n.meta = R"({"b":"x","a":"y"})";  // unsorted: re-encoded
  REQUIRE(store->PutNode(n).ok());
  CHECK(Must(store->GetNode("fact:m")).meta == R"({"a":"y","b":"x"})");
  EdgeInput e = Edge("fact:m", "supports", "fact:m");
  e.payload = R"([ 1, {"b":2, "a":[true,null]} ])";
  REQUIRE(store->PutEdge(e).ok());
  CHECK(Must(store->GetEdge("fact:m", "supports", "fact:m")).payload ==
        R"([1,{"a":[true,null],"b":2}])");
}

// Every key starting "clash:" gets id 42.
StoreOptions ClashingIds() {
  StoreOptions opts;
  opts.TEST_key_hash = [](std::string_view key) -> uint64_t {
    return key.rfind("clash:", 0) == 0 ? 42 : NodeIdForKey(key);
  };
  return opts;
}

TEST_CASE("An id collision is a hard error", "[store][collision]") {
  TempDir dir;
  auto store = OpenStore(dir.path(), ClashingIds());
  REQUIRE(store->PutNode(Node("clash:one", "first")).ok());
  std::string before = Fingerprint(store.get());

  auto r = store->PutNode(Node("clash:two", "second"));
  REQUIRE(r.status().IsInvalidArgument());
  CHECK(r.status().message().find("id collision") != std::string::npos);
  CHECK(r.status().message().find("clash:one") != std::string::npos);
  CHECK(Fingerprint(store.get()) == before);
  // Looking the other key up does not return the first one's record.
  CHECK(store->GetNode("clash:two").status().IsNotFound());

  // Inside one batch, and through an edge endpoint.
  Batch b;
  b.PutNode(Node("clash:x"));
  b.PutNode(Node("clash:y"));
  CHECK(store->Apply(b).status().message().find("id collision") != std::string::npos);
  auto e = store->PutEdge(Edge("clash:three", "related_to", "fact:z"));
  CHECK(e.status().message().find("id collision") != std::string::npos);
  CHECK(Fingerprint(store.get()) == before);

  // Still detected after the first key was deleted and its tombstone compacted.
  REQUIRE(store->DeleteNode("clash:one").ok());
  REQUIRE(store->Compact().ok());
  CHECK(store->PutNode(Node("clash:two")).status().message().find("id collision") !=
        std::string::npos);
  CHECK(store->PutNode(Node("clash:one", "again")).ok());
}

// The pieces of a stream, each written by a function (a Batch does not copy).
class PiecesStream : public BatchStream {
 public:
  explicit PiecesStream(std::vector<std::function<void(Batch*)>> pieces)
      : pieces_(std::move(pieces)) {}
  Status Rewind() override {
    next_ = 0;
    return Status::OK();
  }
  Result<bool> Next(Batch* piece) override {
    piece->Clear();
    if (next_ == pieces_.size()) return false;
    pieces_[next_++](piece);
    return true;
  }

 private:
  std::vector<std::function<void(Batch*)>> pieces_;
  size_t next_ = 0;
};

// A stream's later piece answers endpoint checks from the nodes its earlier
// pieces wrote; an endpoint naming one of their ids under another key is
// still a collision, whichever end it is.
TEST_CASE("An id collision across the pieces of a stream is a hard error", "[store][collision]") {
  TempDir dir;
  auto store = OpenStore(dir.path(), ClashingIds());
  for (bool src : {true, false}) {
    INFO("the colliding key is the edge's " << (src ? "source" : "target"));
    PiecesStream stream({[](Batch* b) {
                           b->PutNode(Node("clash:one", "first"));
                           b->PutNode(Node("fact:z"));
                         },
                         [src](Batch* b) {
                           b->PutEdge(src ? Edge("clash:two", "related_to", "fact:z")
                                          : Edge("fact:z", "related_to", "clash:two"));
                         }});
    Result<uint64_t> r = store->ApplyStream(&stream);
    REQUIRE(r.status().IsInvalidArgument());
    CHECK(r.status().message().find("id collision") != std::string::npos);
    CHECK(r.status().message().find("clash:one") != std::string::npos);
    CHECK(*store->revision() == 0);
  }
  // The same key is no collision: the edge's ends are live, as in one batch.
  PiecesStream stream({[](Batch* b) {
                         b->PutNode(Node("clash:one", "first"));
                         b->PutNode(Node("fact:z"));
                       },
                       [](Batch* b) { b->PutEdge(Edge("clash:one", "related_to", "fact:z")); }});
  REQUIRE(store->ApplyStream(&stream).ok());
  CHECK(Must(store->Out("clash:one")).size() == 1);
  CHECK(Must(store->Stats()).dangling_edges == 0);
}

TEST_CASE("Edges to missing nodes are kept, counted and logged", "[store][dangling]") {
  TempDir dir;
  auto store = OpenStore(dir.path());
  REQUIRE(store->PutNode(Node("a")).ok());
  REQUIRE(store->PutEdge(Edge("a", "references", "ghost")).ok());
  auto out = Must(store->Out("a"));
  REQUIRE(out.size() == 1);
  CHECK(out[0].dst_key == "ghost");
  CHECK(out[0].dst == NodeIdForKey("ghost"));
  CHECK(Must(store->In("ghost")).size() == 1);
  auto stats = Must(store->Stats());
  CHECK(stats.dangling_edges == 1);
  CHECK(stats.live_edges == 1);
  auto changes = Must(store->ChangesSinceRevision(1));
  REQUIRE(changes.size() == 1);
  CHECK(changes[0].kind == Change::Kind::kPutEdge);
  CHECK(changes[0].dst_missing);
  CHECK_FALSE(changes[0].src_missing);
  auto state = Must(store->ReadState());
  REQUIRE(state.edges.size() == 1);
  CHECK(state.edges[0].dst_key == "ghost");

  // Deleting a node keeps its edges; they become dangling.
  REQUIRE(store->PutNode(Node("ghost")).ok());
  CHECK(Must(store->Stats()).dangling_edges == 0);
  REQUIRE(store->DeleteNode("a").ok());
  CHECK(Must(store->Out("a")).size() == 1);
  CHECK(Must(store->Stats()).dangling_edges == 1);
}

TEST_CASE("The dangling census equals a check of every edge's endpoints", "[store][dangling]") {
  // Stats looks endpoints up among the live ids it collected while counting
  // nodes; many nodes, so that ids span the whole key order.
  TempDir dir;
  auto store = OpenStore(dir.path());
  Batch b;
  for (int i = 0; i < 400; ++i) b.PutNode(Node("n" + std::to_string(i)));
  for (int i = 0; i < 400; ++i) {
    b.PutEdge(Edge("n" + std::to_string(i), "references", "n" + std::to_string((i * 7 + 3) % 400)));
    b.PutEdge(Edge("n" + std::to_string(i), "calls", "missing" + std::to_string(i % 5)));
  }
  REQUIRE(store->Apply(b).ok());
  Batch del;
  for (int i = 0; i < 400; i += 9) del.DeleteNode("n" + std::to_string(i));
  REQUIRE(store->Apply(del).ok());
  uint64_t dangling = 0, live_edges = 0;
  for (int i = 0; i < 400; ++i) {
    for (const auto& e : Must(store->Out("n" + std::to_string(i)))) {
      ++live_edges;
      dangling += !store->GetNode(e.src_key).ok() || !store->GetNode(e.dst_key).ok();
    }
  }
  auto stats = Must(store->Stats());
  CHECK(stats.live_edges == live_edges);
  CHECK(stats.live_nodes == 400 - 45);
  CHECK(stats.dangling_edges == dangling);
  CHECK(dangling > 400);  // every edge to a missing node, and those of deleted ones
}

TEST_CASE("Custom relations are interned from 64 and persist", "[store][relations]") {
  TempDir dir;
  {
    auto store = OpenStore(dir.path());
    Batch b;
    b.DefineRelation("blocks");
    b.DefineRelation("blocks");  // idempotent
    b.DefineRelation("reviews");
    b.PutEdge(Edge("x", "blocks", "y"));
    b.PutEdge(Edge("x", "reviews", "y"));
    REQUIRE(store->Apply(b).ok());
  }
  auto store = OpenStore(dir.path());
  CHECK(Must(store->LookupRelation("blocks")) == 64);
  CHECK(Must(store->LookupRelation("reviews")) == 65);
  CHECK(Must(store->LookupRelation("64")) == 64);
  CHECK(Must(store->LookupRelation("calls")) == kCalls);
  CHECK(Must(store->LookupRelation("9")) == kCalls);
  CHECK(store->LookupRelation("66").status().IsInvalidArgument());
  CHECK(store->LookupRelation("20").status().IsInvalidArgument());
  auto out = Must(store->Out("x", "blocks"));
  REQUIRE(out.size() == 1);
  CHECK(out[0].rel_name == "blocks");
  CHECK(Must(store->Out("x", "65")).size() == 1);
  auto state = Must(store->ReadState());
  CHECK(state.relations.size() == kBuiltinRelationCount + 2);
  CHECK(state.relations.back() == std::make_pair(RelationId{65}, std::string("reviews")));
  CHECK(Must(store->Stats()).custom_relations == 2);
}

TEST_CASE("A damaged adjacency list or record is Corruption", "[store][corruption]") {
  TempDir dir;
  {
    auto store = OpenStore(dir.path());
    REQUIRE(store->PutEdge(Edge("a", "calls", "b")).ok());
    REQUIRE(store->PutNode(Node("n", "text")).ok());
  }
  // Damage through raw LMDB, following docs/STORE.md.
  auto damage = [&](const char* db_name, unsigned db_flags, std::string key, std::string value) {
    MDB_env* env = nullptr;
    REQUIRE(mdb_env_create(&env) == 0);
    REQUIRE(mdb_env_set_maxdbs(env, 16) == 0);
    REQUIRE(mdb_env_open(env, dir.path().c_str(), 0, 0644) == 0);
    MDB_txn* txn = nullptr;
    REQUIRE(mdb_txn_begin(env, nullptr, 0, &txn) == 0);
    MDB_dbi dbi;
    REQUIRE(mdb_dbi_open(txn, db_name, db_flags, &dbi) == 0);
    MDB_val k{key.size(), key.data()}, v{value.size(), value.data()};
    REQUIRE(mdb_put(txn, dbi, &k, &v, 0) == 0);
    REQUIRE(mdb_txn_commit(txn) == 0);
    mdb_env_close(env);
  };
  auto node_key = [](std::string_view k) {
    std::string out;
    PutBig64(&out, NodeIdForKey(k));
    return out;
  };
  // An out entry for a->c with no edge record.
  std::string entry(1, static_cast<char>(kCalls));
  PutBig64(&entry, NodeIdForKey("c"));
  damage("out", MDB_DUPSORT | MDB_DUPFIXED, node_key("a"), entry);
  // A list whose entries have the wrong size.
  damage("in", MDB_DUPSORT | MDB_DUPFIXED, node_key("zz"), "short");
  // A node record cut short.
  damage("n", 0, node_key("n"), std::string("\x00\x05", 2));

  auto store = OpenStore(dir.path());
  auto out = store->Out("a");
  REQUIRE(out.status().IsCorruption());
  CHECK(out.status().message().find("no edge record") != std::string::npos);
  CHECK(store->Out("a", "calls", ReadView::AtRevision(1)).status().IsCorruption());
  CHECK(store->In("zz").status().IsCorruption());
  CHECK(store->GetNode("n").status().IsCorruption());
  CHECK(store->ReadState().status().IsCorruption());
  CHECK(store->Compact().status().IsCorruption());
  // Unaffected reads still work.
  CHECK(Must(store->In("b")).size() == 1);
}

TEST_CASE("A full map grows and the write retries", "[store][mapfull]") {
  TempDir dir;
  StoreOptions opts;
  opts.TEST_map_size = 256 << 10;  // 256 KiB
  opts.durable = false;
  auto store = OpenStore(dir.path(), opts);
  Batch b;
  for (int i = 0; i < 2000; ++i) {
    b.PutNode(Node("fact:" + std::to_string(i), std::string(400, 'x')));
  }
  CHECK(Must(store->Apply(b)) == 1);  // ~1 MB: several doublings
  for (int i = 0; i < 20; ++i) {
    REQUIRE(store->PutNode(Node("more:" + std::to_string(i), std::string(20000, 'y'))).ok());
  }
  auto stats = Must(store->Stats());
  CHECK(stats.live_nodes == 2020);
  CHECK(stats.map_size > (256u << 10));
  CHECK(Must(store->GetNode("fact:1999")).content.size() == 400);
  // Another process grows the map further; this one adopts the new size.
  pid_t pid = fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    auto other = Store::Open(dir.path(), opts);
    bool ok = other.ok() && (*other)->PutNode(Node("last", std::string(900000, 'z'))).ok();
    _exit(ok ? 0 : 1);
  }
  int status = 0;
  REQUIRE(waitpid(pid, &status, 0) == pid);
  REQUIRE(WIFEXITED(status));
  REQUIRE(WEXITSTATUS(status) == 0);
  CHECK(Must(store->GetNode("last")).content.size() == 900000);
  REQUIRE(store->PutNode(Node("after", std::string(900000, 'a'))).ok());
  CHECK(Must(store->Stats()).live_nodes == 2022);
}
