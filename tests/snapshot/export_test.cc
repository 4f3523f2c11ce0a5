#include "snapshot/export.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <catch2/catch.hpp>
#include <filesystem>
#include <numeric>
#include <random>
#include <thread>
#include <variant>

#include "snapshot/diff.h"
#include "snapshot/internal/emitter.h"
#include "snapshot/reader.h"
#include "tests/snapshot/snapshot_test_util.h"
#include "tests/snapshot/test_state.h"
#include "tests/store/store_test_util.h"

namespace amem::snapshot {
namespace {

using amem::testing::Must;
using amem::testing::Node;
using amem::testing::OpenStore;
using amem::testing::TempDir;
using snapshot_test::ReadFileBytes;

// One write of the logical history. Ops of one group (same key) keep their order;
// groups may be interleaved in any order.
struct Op {
  enum Kind { kNode, kEdge, kKv, kDelNode } kind;
  NodeInput node;
  EdgeInput edge;
  KvInput kv;
};
using Group = std::vector<Op>;

std::vector<Group> History() {
  std::vector<Group> groups;
  const char* words[] = {"lmdb", "snapshot", "graph", "memory", "query", "export", "agent"};
  for (int i = 0; i < 30; ++i) {
    Group g;
    Op op{Op::kNode, {}, {}, {}};
    op.node.key = "k:" + std::to_string(i * 7919 % 101);
    op.node.type = static_cast<NodeType>(i % kNodeTypeCount);
    op.node.content = std::string("node ") + words[i % 7] + " " + words[(i * 3) % 7] + " #" +
                      std::to_string(i);
    if (i % 5 == 0) op.node.meta = R"({"kind":"x","n":")" + std::to_string(i) + "\"}";
    if (i % 3 == 0) op.node.vector = {float(i), 0.5f, -1.0f, 0.25f};
    op.node.confidence = 0.1f + 0.03f * float(i);
    op.node.ts = 100 + i;
    op.node.run = i % 4 ? "run-" + std::to_string(i % 4) : "";
    op.node.task = i % 2 ? "t1" : "";
    op.node.scope = i % 3 ? "proj" : "";
    g.push_back(op);
    if (i % 4 == 1) {  // a later update
      op.node.content += " (revised)";
      op.node.confidence = 0.95f;
      op.node.ts = 500 + i;
      g.push_back(op);
    }
    if (i == 29) {  // and a delete
      Op del{Op::kDelNode, {}, {}, {}};
      del.node.key = op.node.key;
      del.node.ts = 900;
      g.push_back(del);
    }
    groups.push_back(g);
  }
  const char* rels[] = {"caused_by", "supports", "related_to", "part_of", "blocks", "calls"};
  for (int j = 0; j < 60; ++j) {
    Group g;
    Op op{Op::kEdge, {}, {}, {}};
    int a = j % 30, b = (j * 7 + 3) % 30;
    if (a == b) b = (b + 1) % 30;
    op.edge.src = "k:" + std::to_string(a * 7919 % 101);
    op.edge.dst = j % 13 == 0 ? "ghost:" + std::to_string(j) : "k:" + std::to_string(b * 7919 % 101);
    op.edge.rel = rels[(j + j / 30) % 6];  // j and j + 30 share endpoints
    op.edge.weight = 0.5f + 0.01f * float(j);
    if (j % 9 == 0) op.edge.payload = R"({"why":"test )" + std::to_string(j) + "\"}";
    op.edge.ts = 200 + j;
    op.edge.run = j % 2 ? "run-1" : "run-9";
    op.edge.task = j % 3 ? "t2" : "";
    g.push_back(op);
    if (j % 10 == 3) {
      op.edge.weight = 0.1f;
      op.edge.ts = 600 + j;
      g.push_back(op);
    }
    groups.push_back(g);
  }
  for (int k = 0; k < 6; ++k) {
    Group g;
    Op op{Op::kKv, {}, {}, {}};
    op.kv.scope = k % 2 ? "proj" : "other";
    op.kv.ns = k % 3 ? "decisions" : "constraints";
    op.kv.key = "key" + std::to_string(k);
    op.kv.value = "value " + std::to_string(k);
    op.kv.ts = 300 + k;
    op.kv.run = "run-2";
    g.push_back(op);
    if (k == 2) {
      op.kv.value = "newer";
      op.kv.ts = 700;
      g.push_back(op);
    }
    groups.push_back(g);
  }
  return groups;
}

std::vector<size_t> InOrder(size_t n) {
  std::vector<size_t> order(n);
  std::iota(order.begin(), order.end(), size_t{0});
  return order;
}

void Add(Batch* b, const Op& op) {
  switch (op.kind) {
    case Op::kNode: b->PutNode(op.node); break;
    case Op::kEdge: b->PutEdge(op.edge); break;
    case Op::kKv: b->PutKv(op.kv); break;
    case Op::kDelNode: b->DeleteNode(op.node.key); break;
  }
}

void ApplyOrDie(Store* s, const Batch& b, int64_t ts) {
  WriteOptions w;
  w.ts = ts;
  auto r = s->Apply(b, w);
  INFO(r.status().ToString());
  REQUIRE(r.ok());
}

std::unique_ptr<Store> NewStore(const std::string& dir) {
  StoreOptions o;
  o.dimension = 4;
  o.durable = false;
  return OpenStore(dir, o);
}

void DefineRelations(Store* s) {
  Batch b;
  b.DefineRelation("blocks");
  ApplyOrDie(s, b, 1);
}

// Applies the history: the k-th op of every group goes in phase k; within a phase
// groups are visited in `order`, and ops are cut into batches of `batch_size`.
void ApplyHistory(Store* s, const std::vector<Group>& groups, std::vector<size_t> order,
                  size_t batch_size) {
  DefineRelations(s);
  for (size_t phase = 0; phase < 3; ++phase) {
    Batch b;
    for (size_t g : order) {
      if (phase >= groups[g].size()) continue;
      Add(&b, groups[g][phase]);
      if (b.size() >= batch_size) {
        ApplyOrDie(s, b, 1000);
        b.Clear();
      }
    }
    if (!b.empty()) ApplyOrDie(s, b, 1000);
  }
}

std::string ExportBytes(const Store& s, const std::string& path, ReadView view = {}) {
  ExportOptions o;
  o.view = view;
  auto r = ExportSnapshot(s, path, o);
  INFO(r.status().ToString());
  REQUIRE(r.ok());
  std::string bytes = ReadFileBytes(path);
  CHECK(bytes.size() == r->bytes);
  return bytes;
}

}  // namespace

TEST_CASE("Export is deterministic across write order and batching", "[snapshot][export]") {
  TempDir dir;
  const auto groups = History();
  std::vector<size_t> order = InOrder(groups.size());

  auto a = NewStore(dir.Sub("a"));
  ApplyHistory(a.get(), groups, order, 1);
  std::string bytes_a = ExportBytes(*a, dir.Sub("a.amem"));
  CHECK(ExportBytes(*a, dir.Sub("a2.amem")) == bytes_a);  // exporting twice

  std::reverse(order.begin(), order.end());
  auto b = NewStore(dir.Sub("b"));
  ApplyHistory(b.get(), groups, order, 1000);
  CHECK(ExportBytes(*b, dir.Sub("b.amem")) == bytes_a);
  {
    auto ra = Reader::Open(dir.Sub("a.amem"));
    auto rb = Reader::Open(dir.Sub("b.amem"));
    REQUIRE(ra.ok());
    REQUIRE(rb.ok());
    DiffResult d = DiffSnapshots(**ra, **rb);
    INFO(DiffToText(d));
    CHECK(d.equal());
  }

  std::shuffle(order.begin(), order.end(), std::mt19937(42));
  auto c = NewStore(dir.Sub("c"));
  ApplyHistory(c.get(), groups, order, 7);
  CHECK(ExportBytes(*c, dir.Sub("c.amem")) == bytes_a);

  auto r = Reader::Open(dir.Sub("a.amem"));
  REQUIRE(r.ok());
  CHECK((*r)->stub_count() > 0);  // ghost:* endpoints and the deleted node
  CHECK((*r)->kv_count() == 6);
  CHECK((*r)->kv(*(*r)->FindKv("other", "decisions", "key2")).value == "newer");
  auto revised = (*r)->FindKey("k:" + std::to_string(1 * 7919 % 101));
  REQUIRE(revised.has_value());
  CHECK((*r)->created_ts(*revised) == 101);
  CHECK((*r)->updated_ts(*revised) == 501);
  CHECK((*r)->content(*revised).ends_with("(revised)"));
}

TEST_CASE("Export from the store's views equals the snapshot of the owned state",
          "[snapshot][export][determinism]") {
  TempDir dir;
  auto s = NewStore(dir.Sub("s"));
  ApplyHistory(s.get(), History(), InOrder(History().size()), 5);
  const uint64_t latest = s->revision().value();
  REQUIRE(latest > 3);
  for (uint64_t rev : {uint64_t{1}, latest / 2, latest - 1, latest}) {
    INFO("revision " << rev);
    const ReadView view = ReadView::AtRevision(rev);
    auto owned = BuildSnapshot(Must(s->ReadState(view)));
    REQUIRE(owned.ok());
    CHECK(ExportBytes(*s, dir.Sub("v.amem"), view) == *owned);
    // The store gives the edges' endpoint positions, the owned state does not;
    // the term index is built on a second thread or on this one.
    for (uint32_t threads : {1u, 2u}) {
      INFO("threads " << threads);
      WriterOptions o;
      o.threads = threads;
      std::string from_views;
      size_t edge_count = 0;
      REQUIRE(s->VisitState(view, [&](const StoreStateView& st) {
        edge_count = st.edges.size();
        StringSink sink(&from_views);
        return WriteSnapshot(st, o, &sink).status();
      }).ok());
      CHECK(from_views == *owned);
      // The edges as refs decoded on demand (what the export reads), kept or
      // freed by the writer as it goes: the same bytes.
      Store::VisitOptions refs;
      refs.edge_refs = true;
      for (bool release : {false, true}) {
        INFO("release " << release);
        std::string from_refs;
        REQUIRE(s->VisitState(view, refs, [&](StoreStateView& st) {
          CHECK(st.edges.empty());
          CHECK(st.edge_refs.size() == edge_count);
          StringSink sink(&from_refs);
          if (!release) {
            return WriteSnapshot(static_cast<const StoreStateView&>(st), o, &sink).status();
          }
          Status written = WriteSnapshot(std::move(st), o, &sink).status();
          CHECK(st.nodes.empty());
          CHECK(st.edge_refs.empty());
          CHECK(st.nodes.capacity() == 0);
          CHECK(st.edge_refs.capacity() == 0);
          return written;
        }).ok());
        CHECK(from_refs == *owned);
      }
      auto owned_here = BuildSnapshot(Must(s->ReadState(view)), o);
      REQUIRE(owned_here.ok());
      CHECK(*owned_here == *owned);
    }
  }
}

TEST_CASE("An edge ref decodes to the edge's view", "[snapshot][export]") {
  TempDir dir;
  auto s = NewStore(dir.Sub("s"));
  ApplyHistory(s.get(), History(), InOrder(History().size()), 5);
  std::vector<EdgeView> views;
  std::vector<std::string> keys;  // each view's strings, copied while its read is open
  REQUIRE(s->VisitState(ReadView(), [&](const StoreStateView& st) {
    for (const EdgeView& e : st.edges) {
      keys.push_back(std::string(e.src_key) + "|" + std::string(e.dst_key) + "|" +
                     std::string(e.payload) + "|" + std::string(e.run) + "|" + std::string(e.task));
    }
    views = st.edges;  // their ints only are compared below
    return Status::OK();
  }).ok());
  REQUIRE(views.size() > 10);
  Store::VisitOptions refs;
  refs.edge_refs = true;
  REQUIRE(s->VisitState(ReadView(), refs, [&](StoreStateView& st) {
    REQUIRE(st.edge_refs.size() == views.size());
    bool dangling = false;
    for (size_t j = 0; j < views.size(); ++j) {
      INFO("edge " << j);
      const EdgeView e = DecodeEdgeRef(st.edge_refs[j]);
      CHECK(std::string(e.src_key) + "|" + std::string(e.dst_key) + "|" + std::string(e.payload) +
                "|" + std::string(e.run) + "|" + std::string(e.task) == keys[j]);
      CHECK(e.rel == views[j].rel);
      CHECK(e.weight == views[j].weight);
      CHECK(e.created_ts == views[j].created_ts);
      CHECK(e.updated_ts == views[j].updated_ts);
      CHECK(e.rev == views[j].rev);
      CHECK(e.src_node == views[j].src_node);
      CHECK(e.dst_node == views[j].dst_node);
      dangling = dangling || e.dst_node == EdgeView::kUnknownNode;
    }
    CHECK(dangling);  // the ghost:* endpoints: positions not given
    return Status::OK();
  }).ok());
}

TEST_CASE("A state with both edge views and edge refs is refused", "[snapshot][export]") {
  StoreStateView st;
  st.dimension = 4;
  st.edges.resize(1);
  st.edge_refs.resize(1);
  CountingSink sink;
  Result<SnapshotSummary> r = WriteSnapshot(static_cast<const StoreStateView&>(st), {}, &sink);
  CHECK(r.status().IsInvalidArgument());
  CHECK(sink.bytes() == 0);
}

TEST_CASE("Export -> import -> export gives identical bytes", "[snapshot][export][import]") {
  TempDir dir;
  const auto groups = History();
  std::vector<size_t> order = InOrder(groups.size());
  auto a = NewStore(dir.Sub("a"));
  ApplyHistory(a.get(), groups, order, 13);
  std::string first = ExportBytes(*a, dir.Sub("first.amem"));

  auto b = NewStore(dir.Sub("b"));
  auto imported = ImportSnapshot(dir.Sub("first.amem"), b.get());
  INFO(imported.status().ToString());
  REQUIRE(imported.ok());
  CHECK(imported->kv == 6);
  CHECK(ExportBytes(*b, dir.Sub("second.amem")) == first);

  SECTION("import needs an empty store of the same dimension") {
    CHECK(ImportSnapshot(dir.Sub("first.amem"), b.get()).status().IsInvalidArgument());
    StoreOptions o;
    o.dimension = 8;
    auto c = OpenStore(dir.Sub("c"), o);
    CHECK(ImportSnapshot(dir.Sub("first.amem"), c.get()).status().IsInvalidArgument());
  }
  SECTION("import rejects a damaged file and leaves the store empty") {
    std::string bytes = first;
    bytes[bytes.size() / 2] ^= 1;
    REQUIRE(WriteFileAtomic(dir.Sub("bad.amem"), bytes).ok());
    auto c = NewStore(dir.Sub("c"));
    CHECK(ImportSnapshot(dir.Sub("bad.amem"), c.get()).status().IsCorruption());
    CHECK(c->revision().value() == 0);
  }
}

TEST_CASE("Import at a revision continues the source's history from there",
          "[snapshot][export][import]") {
  TempDir dir;
  const auto groups = History();
  auto a = NewStore(dir.Sub("a"));
  ApplyHistory(a.get(), groups, InOrder(groups.size()), 7);
  const uint64_t latest = Must(a->revision());
  REQUIRE(latest > 4);
  const uint64_t at = latest - 3;  // the snapshot's revision; three revisions follow it
  const std::string base = ExportBytes(*a, dir.Sub("base.amem"), ReadView::AtRevision(at));
  const std::string head = ExportBytes(*a, dir.Sub("head.amem"));
  int64_t at_ts = 0;
  std::vector<LoggedRevision> tail;
  REQUIRE(a->ReadHistory(at - 1, 0, [&](const LoggedRevision& r) {
    if (r.rev == at) {
      at_ts = r.ts;
    } else {
      tail.push_back(LoggedRevision{r.rev, r.ts, r.batch});
    }
    return Status::OK();
  }).ok());
  REQUIRE(tail.size() == 3);

  auto b = NewStore(dir.Sub("b"));
  ImportOptions options;
  options.revision = at;
  options.revision_ts = at_ts;
  auto imported = ImportSnapshot(dir.Sub("base.amem"), b.get(), options);
  INFO(imported.status().ToString());
  REQUIRE(imported.ok());
  CHECK(imported->revision == at);
  CHECK(Must(b->revision()) == at);
  CHECK(Must(b->Base()).rev == at);
  CHECK(Must(b->Base()).ts == at_ts);
  CHECK(Must(a->Base()).rev == 0);
  CHECK(ExportBytes(*b, dir.Sub("b-base.amem")) == base);
  CHECK(ExportBytes(*b, dir.Sub("b-at.amem"), ReadView::AtRevision(at)) == base);
  CHECK(b->RevisionIdentity(at).ok());

  // History before the snapshot is not there: every read of it is refused, never
  // answered from the imported state.
  const std::string gone = "imported from a snapshot of revision " + std::to_string(at);
  for (const ReadView& view : {ReadView::AtRevision(at - 1), ReadView::AtRevision(1),
                               ReadView::AtTime(at_ts - 1)}) {
    Status s = b->GetNode("k:0", view).status();
    CHECK(s.IsInvalidArgument());
    CHECK_THAT(s.message(), Catch::Contains(gone));
  }
  CHECK(b->ReadState(ReadView::AtRevision(at - 1)).status().IsInvalidArgument());
  Status log = b->ReadHistory(0, 0, [](const LoggedRevision&) { return Status::OK(); });
  CHECK(log.IsInvalidArgument());
  CHECK_THAT(log.message(), Catch::Contains("--since-rev " + std::to_string(at)));
  CHECK(b->ChangesSinceRevision(at - 1).status().IsInvalidArgument());
  CHECK(Must(b->ChangesSinceRevision(at)).empty());
  size_t logged = 0;
  REQUIRE(b->ReadHistory(at, 0, [&](const LoggedRevision&) {
    ++logged;
    return Status::OK();
  }).ok());
  CHECK(logged == 0);

  // The source's later revisions apply on top and give the source's bytes.
  CHECK(Must(b->ApplyRevisions(tail)) == latest);
  CHECK(ExportBytes(*b, dir.Sub("b-head.amem")) == head);
  CHECK(ExportBytes(*b, dir.Sub("b-at2.amem"), ReadView::AtRevision(at)) == base);

  SECTION("a plain import is revision 1, with nothing before it") {
    auto c = NewStore(dir.Sub("c"));
    auto plain = ImportSnapshot(dir.Sub("head.amem"), c.get());
    REQUIRE(plain.ok());
    CHECK(plain->revision == 1);
    CHECK(ExportBytes(*c, dir.Sub("c.amem")) == head);
    CHECK(c->GetNode("k:0", ReadView::AtRevision(0)).status().IsInvalidArgument());
  }
  SECTION("a store that is not empty is refused and unchanged") {
    CHECK(b->ImportBase({}, latest + 5, at_ts).status().IsInvalidArgument());
    CHECK(Must(b->revision()) == latest);
    CHECK(ExportBytes(*b, dir.Sub("b-again.amem")) == head);
  }
}

TEST_CASE("Custom relation ids do not depend on the order they were defined",
          "[snapshot][export]") {
  TempDir dir;
  auto build = [&](const std::string& name, std::vector<std::string> rels) {
    auto s = NewStore(dir.Sub(name));
    for (const std::string& rel : rels) {  // one revision each: ids 64, 65, 66 in this order
      Batch b;
      b.DefineRelation(rel);
      ApplyOrDie(s.get(), b, 10);
    }
    Batch b;
    b.PutNode(Node("a", "alpha"));
    b.PutNode(Node("b", "beta"));
    b.PutEdge(amem::testing::Edge("a", "owns", "b"));
    b.PutEdge(amem::testing::Edge("a", "likes", "b", 0.5f));
    b.PutEdge(amem::testing::Edge("b", "likes", "a"));
    b.PutEdge(amem::testing::Edge("b", "supports", "a"));
    ApplyOrDie(s.get(), b, 20);
    return s;
  };
  auto a = build("a", {"owns", "likes", "unused"});
  auto b = build("b", {"unused", "likes", "owns"});
  const std::string bytes_a = ExportBytes(*a, dir.Sub("a.amem"));
  CHECK(ExportBytes(*b, dir.Sub("b.amem")) == bytes_a);

  auto r = Reader::OpenBuffer(bytes_a);
  REQUIRE(r.ok());
  CHECK((*r)->relation_name(64) == "likes");  // 64 + rank in bytewise name order
  CHECK((*r)->relation_name(65) == "owns");
  CHECK((*r)->relation_name(66) == "unused");
  CHECK((*r)->relation_name(67).empty());
  const uint32_t na = *(*r)->FindKey("a"), nb = *(*r)->FindKey("b");
  CHECK((*r)->FindEdge(na, 65, nb).has_value());  // owns, stored as 64 in store a
  CHECK((*r)->edge_weight(*(*r)->FindEdge(na, 64, nb)) == 0.5f);
  CHECK((*r)->FindEdge(nb, 64, na).has_value());

  // The importer defines them in file-id order, so the copy re-exports the same bytes.
  auto c = NewStore(dir.Sub("c"));
  REQUIRE(ImportSnapshot(dir.Sub("b.amem"), c.get()).ok());
  CHECK(ExportBytes(*c, dir.Sub("c.amem")) == bytes_a);
}

TEST_CASE("As-of export equals the export of a store that stopped there", "[snapshot][export]") {
  TempDir dir;
  const auto groups = History();
  auto full = NewStore(dir.Sub("full"));
  auto part = NewStore(dir.Sub("part"));
  DefineRelations(full.get());
  DefineRelations(part.get());
  // Batch k holds groups [10k, 10k+10), committed at ts 2000 + k, and from batch 1
  // on some kv entries that the writes after the stop point overwrite and delete.
  uint64_t stop_rev = 0;
  for (size_t k = 0; k * 10 < groups.size(); ++k) {
    Batch b;
    for (size_t g = k * 10; g < std::min(groups.size(), k * 10 + 10); ++g) Add(&b, groups[g][0]);
    if (k == 1) {
      for (const char* key : {"keep", "overwrite", "delete"}) {
        KvInput kv;
        kv.scope = "proj";
        kv.ns = "notes";
        kv.key = key;
        kv.value = std::string("before ") + key;
        b.PutKv(kv);
      }
    }
    ApplyOrDie(full.get(), b, 2000 + static_cast<int64_t>(k));
    if (k <= 4) ApplyOrDie(part.get(), b, 2000 + static_cast<int64_t>(k));
    if (k == 4) stop_rev = full->revision().value();
  }
  // After the stop point: updates, deletes, kv overwrites and deletes, and new
  // relations, one of which sorts before "blocks" (it would renumber it) and one
  // of which an edge uses.
  {
    Batch b;
    b.DefineRelation("aardvark");
    b.DefineRelation("owns");
    ApplyOrDie(full.get(), b, 3000);
  }
  {
    Batch b;
    for (size_t g = 0; g < 10; ++g) {
      Op update = groups[g][0];
      update.node.content += " (changed after the stop)";
      update.node.confidence = 0.5f;
      update.node.ts = 3001;
      Add(&b, update);
    }
    for (size_t g = 10; g < 14; ++g) b.DeleteNode(groups[g][0].node.key);
    for (size_t g = 30; g < 34; ++g) {  // edges committed before the stop
      Op edge = groups[g][0];
      edge.edge.weight = 0.01f;
      edge.edge.payload = R"({"changed":"yes"})";
      edge.edge.ts = 3001;
      Add(&b, edge);
    }
    for (size_t g = 34; g < 38; ++g) {
      const EdgeInput& e = groups[g][0].edge;
      b.DeleteEdge(e.src, e.rel, e.dst);
    }
    b.PutEdge(amem::testing::Edge(groups[20][0].node.key, "owns", groups[21][0].node.key));
    b.PutEdge(amem::testing::Edge(groups[21][0].node.key, "aardvark", "ghost:after"));
    KvInput kv;
    kv.scope = "proj";
    kv.ns = "notes";
    kv.key = "overwrite";
    kv.value = "after";
    b.PutKv(kv);
    b.DeleteKv("proj", "notes", "delete");
    ApplyOrDie(full.get(), b, 3001);
  }
  REQUIRE(full->revision().value() > stop_rev);
  const int64_t stop_ts = 2004;
  REQUIRE(*full->ResolveRevision(ReadView::AtTime(stop_ts)) == stop_rev);

  std::string expected = ExportBytes(*part, dir.Sub("part.amem"));
  CHECK(ExportBytes(*full, dir.Sub("rev.amem"), ReadView::AtRevision(stop_rev)) == expected);
  CHECK(ExportBytes(*full, dir.Sub("ts.amem"), ReadView::AtTime(stop_ts)) == expected);
  auto state = full->ReadState(ReadView::AtRevision(stop_rev));
  REQUIRE(state.ok());
  for (const auto& [id, name] : state->relations) {
    CHECK(name != "aardvark");
    CHECK(name != "owns");
  }
  // The latest export has them (and differs).
  std::string latest = ExportBytes(*full, dir.Sub("latest.amem"));
  CHECK(latest != expected);
  auto r = Reader::OpenBuffer(latest);
  REQUIRE(r.ok());
  CHECK((*r)->FindRelation("aardvark") == RelationId{64});
  CHECK((*r)->FindRelation("blocks") == RelationId{65});
  CHECK((*r)->FindRelation("owns") == RelationId{66});
}

// Temp files WriteFileAtomic left next to `path` (a killed writer cannot remove its own).
std::vector<std::string> TempFilesOf(const std::string& path) {
  namespace fs = std::filesystem;
  const fs::path p(path);
  const std::string prefix = p.filename().string() + kTempInfix;
  std::vector<std::string> out;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(p.parent_path(), ec)) {
    if (entry.path().filename().string().starts_with(prefix)) out.push_back(entry.path().string());
  }
  return out;
}

TEST_CASE("WriteFileAtomic uses a temp file of its own and cleans up on failure",
          "[snapshot][export]") {
  TempDir dir;
  const std::string path = dir.Sub("x.amem");
  const std::string a = TempPathFor(path), b = TempPathFor(path);
  CHECK(a != b);
  CHECK(a.starts_with(path + ".tmp."));  // .gitignore: *.amem.tmp*

  SECTION("concurrent writers to one path never mix their files") {
    std::vector<std::string> payloads;
    for (int t = 0; t < 4; ++t) payloads.push_back(std::string((1 << 20) + t, char('a' + t)));
    std::vector<std::thread> threads;
    std::atomic<int> failures{0};
    for (int t = 0; t < 4; ++t) {
      threads.emplace_back([&, t] {
        for (int k = 0; k < 10; ++k) failures += !WriteFileAtomic(path, payloads[t]).ok();
      });
    }
    for (std::thread& t : threads) t.join();
    CHECK(failures == 0);
    const std::string now = ReadFileBytes(path);
    CHECK(std::find(payloads.begin(), payloads.end(), now) != payloads.end());
    CHECK(TempFilesOf(path).empty());
  }
  SECTION("a failed rename removes the temp file") {
    std::filesystem::create_directories(dir.Sub("d.amem/inside"));
    Status s = WriteFileAtomic(dir.Sub("d.amem"), "bytes");
    CHECK(s.IsIOError());
    CHECK(TempFilesOf(dir.Sub("d.amem")).empty());
  }
  SECTION("an unwritable directory is an IOError") {
    CHECK(WriteFileAtomic(dir.Sub("missing/x.amem"), "bytes").IsIOError());
  }
}

TEST_CASE("A state refused while its file streams leaves the previous file and no temp file",
          "[snapshot][export]") {
  // Vectors are checked as they are copied (StreamFile), after the header, records
  // and content went to the sink: the failure must still change nothing. Contents
  // of ~3 MB that LZ4 cannot shrink much fill the emitter's 1 MiB staging buffer, so
  // bytes really reach the sink before the error.
  StoreState state = snapshot_test::SmallState();
  std::mt19937 rnd(5);
  for (size_t k = 0; k < 3; ++k) {
    std::string& content = state.nodes[k].content;
    content.clear();
    while (content.size() < (1u << 20)) content += std::to_string(rnd()) + " ";
  }
  for (auto it = state.nodes.rbegin(); it != state.nodes.rend(); ++it) {
    if (it->vector.empty()) continue;
    it->vector.back() = INFINITY;
    break;
  }
  CountingSink counting;
  auto refused = WriteSnapshot(state, WriterOptions(), &counting);
  CHECK(refused.status().IsInvalidArgument());
  CHECK(counting.bytes() > (1u << 20));  // it failed mid-stream

  TempDir dir;
  const std::string path = dir.Sub("x.amem");
  REQUIRE(WriteFileAtomic(path, "previous").ok());
  Status s = WriteFileAtomic(path, [&](ByteSink* sink) -> Status {
    return WriteSnapshot(state, WriterOptions(), sink).status();
  });
  CHECK(s.IsInvalidArgument());
  CHECK(s.message().find(": vector not finite") != std::string::npos);
  CHECK(ReadFileBytes(path) == "previous");
  CHECK(TempFilesOf(path).empty());
}

TEST_CASE("A SIGKILLed export leaves the previous file intact", "[snapshot][export]") {
  TempDir dir;
  const std::string path = dir.Sub("x.amem");
  const std::string store_dir = dir.Sub("big");
  StoreOptions options;
  options.dimension = 1024;
  options.durable = false;
  {
    // ~40 MB of incompressible vectors: writing the snapshot takes a while.
    auto big = OpenStore(store_dir, options);
    std::mt19937 rng(1);
    std::uniform_real_distribution<float> unit(-1.0f, 1.0f);
    Batch b;
    for (int i = 0; i < 10000; ++i) {
      NodeInput n = Node("n:" + std::to_string(i), "node " + std::to_string(i));
      n.vector.resize(options.dimension);
      for (float& f : n.vector) f = unit(rng);
      b.PutNode(std::move(n));
    }
    ApplyOrDie(big.get(), b, 100);
    // The previous file: a small export of another state.
    auto small = OpenStore(dir.Sub("small"), options);
    Batch one;
    one.PutNode(Node("only", "the previous file"));
    ApplyOrDie(small.get(), one, 100);
    ExportBytes(*small, path);
  }  // both closed: the children open the store themselves (never across fork)
  const std::string old_bytes = ReadFileBytes(path);
  REQUIRE(!old_bytes.empty());

  int landed = 0, attempts = 0;
  for (; attempts < 40 && landed == 0; ++attempts) {
    pid_t pid = ::fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
      StoreOptions o = options;
      o.create_if_missing = false;
      auto store = Store::Open(store_dir, o);
      if (!store.ok()) ::_exit(2);
      ::_exit(ExportSnapshot(**store, path).ok() ? 0 : 1);
    }
    // Kill the child the moment its temp file appears.
    int status = 0;
    bool exited = false;
    while (TempFilesOf(path).empty()) {
      if (::waitpid(pid, &status, WNOHANG) == pid) {
        exited = true;
        break;
      }
    }
    if (!exited) {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, &status, 0);
    }
    INFO("attempt " << attempts);
    if (exited) CHECK((WIFEXITED(status) && WEXITSTATUS(status) == 0));
    const std::vector<std::string> temps = TempFilesOf(path);
    const std::string now = ReadFileBytes(path);
    if (!temps.empty()) {
      // Killed while the temp file existed: the rename never happened.
      ++landed;
      CHECK(WIFSIGNALED(status));
      CHECK(now == old_bytes);
      for (const std::string& t : temps) std::filesystem::remove(t);
    } else if (now != old_bytes) {
      // The child finished (or renamed just before the kill): the new file is
      // whole. Put the old one back and try again.
      auto r = Reader::Open(path);
      CHECK(r.ok());
      REQUIRE(WriteFileAtomic(path, old_bytes).ok());
    }
  }
  INFO("attempts " << attempts);
  REQUIRE(landed > 0);
  CHECK(ReadFileBytes(path) == old_bytes);
  ReadOptions verify;
  verify.verify_checksum = true;
  auto r = Reader::Open(path, verify);
  INFO(r.status().ToString());
  REQUIRE(r.ok());
  CHECK((*r)->FindKey("only").has_value());
}

}  // namespace amem::snapshot

namespace amem::snapshot {
namespace {

// Appends up to `limit` bytes, then fails every call (a full disk).
class LimitedSink : public ByteSink {
 public:
  LimitedSink(std::string* out, size_t limit) : out_(out), limit_(limit) {}
  Status Append(std::string_view bytes) override {
    if (out_->size() + bytes.size() > limit_) return Status::IOError("disk full");
    out_->append(bytes);
    return Status::OK();
  }
 private:
  std::string* out_;
  size_t limit_;
};

// Small appends, pieces just under and over the staging buffer, stable pieces
// of several sizes, zeros, blocks, and a digest in the middle; `big` is freed as
// soon as Append returns.
uint64_t EmitMixed(Emitter* out) {
  // AppendStable's pieces must outlive the emitter's Flush().
  static const std::string stable[3] = {std::string(5u << 20, 'x'), std::string(600000, 'y'),
                                        std::string(100, 'z')};
  std::mt19937 rnd(11);
  for (int round = 0; round < 40; ++round) {
    for (int k = 0; k < 1000; ++k) out->PutFixed32(rnd());
    out->PutFixed64(rnd());
    std::string big(static_cast<size_t>(rnd() % (3u << 20)), static_cast<char>('a' + round % 26));
    out->Append(big);
    out->AppendStable(stable[round % 3]);
    out->AppendZeros(rnd() % 70000);
  }
  const uint64_t middle = out->Digest();
  out->BeginBlock(BlockTag::kInfo, 5);
  out->Append("abcde");
  out->EndBlock();
  return middle;
}

}  // namespace

TEST_CASE("The emitter's background thread hands the sink the same bytes in order",
          "[snapshot][export][emitter]") {
  std::string plain, threaded;
  uint64_t middle[2], digest[2];
  {
    StringSink sink(&plain);
    Emitter out(&sink);
    middle[0] = EmitMixed(&out);
    REQUIRE(out.Flush().ok());
    digest[0] = out.Digest();
  }
  {
    StringSink sink(&threaded);
    Emitter out(&sink, /*background=*/true);
    middle[1] = EmitMixed(&out);
    REQUIRE(out.Flush().ok());
    digest[1] = out.Digest();
    CHECK(out.offset() == threaded.size());
  }
  CHECK(plain.size() > (40u << 20));
  CHECK(threaded == plain);
  CHECK(middle[1] == middle[0]);
  CHECK(digest[1] == digest[0]);
  CHECK(digest[0] == Hash64(plain));

  SECTION("dropped without Flush while the thread holds stable bytes, it waits for them") {
    // The writer's early return (a non-finite vector) destroys the emitter with a
    // hand-off in flight: the destructor must let the thread finish, and the sink
    // sees a prefix of the bytes, in order (ASan catches a use after free).
    std::string partial;
    {
      const std::string stable(24u << 20, 's');  // outlives the emitter, as in StreamFile
      StringSink sink(&partial);
      Emitter out(&sink, /*background=*/true);
      out.PutFixed64(7);
      out.AppendStable(stable);
      out.Append(std::string(3u << 20, 't'));
    }
    CHECK(partial.size() <= 8 + (24u << 20) + (3u << 20));
    if (partial.size() > 8) CHECK(partial[8] == 's');
  }
  SECTION("the sink's first error is kept and later bytes are dropped") {
    std::string partial;
    LimitedSink sink(&partial, 5u << 20);
    Emitter out(&sink, /*background=*/true);
    EmitMixed(&out);
    Status s = out.Flush();
    CHECK(s.IsIOError());
    CHECK(out.status().IsIOError());
    CHECK(partial.size() <= (5u << 20));
    CHECK(plain.compare(0, partial.size(), partial) == 0);
  }
}

}  // namespace amem::snapshot
