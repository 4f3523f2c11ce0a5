// Delta segments (snapshot/delta.h): a base file plus the delta compiled from the
// change log must describe exactly the state a full export at the head revision
// writes, for random histories of puts, overwrites, deletes, dangling edges,
// custom relations, run changes and kv.
#include "snapshot/delta.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cstring>
#include <map>
#include <memory>
#include <tuple>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "snapshot/reader.h"
#include "snapshot/writer.h"
#include "tests/sanitizer.h"
#include "tests/snapshot/reader_compare.h"
#include "tests/store/random_history.h"
#include "tests/store/store_test_util.h"

using namespace amem;
using namespace amem::snapshot;
using amem::testing::History;
using amem::testing::TempDir;

namespace {

std::string Export(const Store& store, uint64_t rev) {
  auto state = store.ReadState(ReadView::AtRevision(rev));
  INFO(state.status().ToString());
  REQUIRE(state.ok());
  auto bytes = BuildSnapshot(*state);
  INFO(bytes.status().ToString());
  REQUIRE(bytes.ok());
  return *bytes;
}

std::unique_ptr<Reader> Open(const std::string& bytes) {
  auto r = Reader::OpenBuffer(bytes);
  INFO(r.status().ToString());
  REQUIRE(r.ok());
  return std::move(*r);
}

// The base + delta Reader answers every accessor as the full export's Reader does
// (CheckSameReader).
void CheckLayeredView(const std::string& base_bytes, const std::string& delta_bytes,
                      const Reader& head, bool bulk) {
  INFO((bulk ? "bulk tables" : "sequences"));
  std::shared_ptr<const Reader> base = Open(base_bytes);
  auto delta = Delta::OpenBuffer(delta_bytes, *base);
  REQUIRE(delta.ok());
  auto view_or = Reader::OpenLayered(base, std::shared_ptr<const Delta>(std::move(*delta)));
  INFO(view_or.status().ToString());
  REQUIRE(view_or.ok());
  const Reader& v = **view_or;
  CHECK(v.layered());
  amem::snapshot_test::CheckSameReader(v, head, bulk);
}

void CheckLayered(const std::string& base_bytes, const std::string& delta_bytes,
                  const Reader& head) {
  CheckLayeredView(base_bytes, delta_bytes, head, false);
  CheckLayeredView(base_bytes, delta_bytes, head, true);
}

// Checks one (base revision, head revision) pair against full exports.
void CheckPair(const Store& store, uint64_t base_rev, uint64_t head_rev) {
  INFO("base " << base_rev << " head " << head_rev);
  const std::string base_bytes = Export(store, base_rev);
  const std::string head_bytes = Export(store, head_rev);
  auto base = Open(base_bytes);
  auto head = Open(head_bytes);

  std::string bytes, again;
  auto summary = CompileDelta(store, *base, base_rev, head_rev, &bytes);
  INFO(summary.status().ToString());
  REQUIRE(summary.ok());
  REQUIRE(CompileDelta(store, *base, base_rev, head_rev, &again).ok());
  CHECK(again == bytes);  // deterministic

  CheckLayered(base_bytes, bytes, *head);

  auto delta_or = Delta::OpenBuffer(bytes, *base);
  INFO(delta_or.status().ToString());
  REQUIRE(delta_or.ok());
  const Delta& delta = **delta_or;

  // 1. Base + delta is the state at H, to the byte.
  auto merged = MergeState(*base, delta);
  INFO(merged.status().ToString());
  REQUIRE(merged.ok());
  auto merged_bytes = BuildSnapshot(*merged);
  REQUIRE(merged_bytes.ok());
  CHECK(*merged_bytes == head_bytes);

  // 2. Totals as the full export at H has them.
  const DeltaTotals& t = delta.totals();
  CHECK(t.node_count == head->node_count());
  CHECK(t.edge_count == head->edge_count());
  CHECK(t.stub_count == head->stub_count());
  CHECK(t.kv_count == head->kv_count());
  CHECK(t.session_count == head->session_count());
  CHECK(t.newest_ts == head->newest_timestamp());
  int64_t base_len = 0, head_len = 0;
  for (uint32_t i = 0; i < base->node_count(); ++i) base_len += base->doc_length(i);
  for (uint32_t i = 0; i < head->node_count(); ++i) head_len += head->doc_length(i);
  CHECK(base_len + t.doc_length_change == head_len);
  // The runs at H, spelled out from the base's and the delta's edit of them.
  std::vector<std::string_view> runs_at_h;
  auto removed_runs = delta.removed_sessions();
  for (uint32_t s = 0, k = 0; s <= base->session_count(); ++s) {
    for (; k < delta.new_runs().size() && delta.new_run_gaps()[k] == s; ++k) {
      runs_at_h.push_back(delta.new_runs()[k]);
    }
    if (s < base->session_count() &&
        !std::binary_search(removed_runs.begin(), removed_runs.end(), s)) {
      runs_at_h.push_back(base->session_run(s));
    }
  }
  REQUIRE(runs_at_h.size() == head->session_count());
  for (uint32_t s = 0; s < head->session_count(); ++s) CHECK(runs_at_h[s] == head->session_run(s));
  for (int r = 0; r <= kMaxRelationId; ++r) {
    CHECK(delta.relation_name(static_cast<RelationId>(r)) ==
          head->relation_name(static_cast<RelationId>(r)));
  }

  // 3. Every node and edge has the number a full export gives it.
  auto nodes = NodeSequence(*base, delta);
  REQUIRE(nodes.ok());
  REQUIRE(nodes->size() == head->node_count());
  auto node_key = [&](MergedSequence::Item it) {
    return it.delta ? delta.nodes().key(it.index) : base->key(it.index);
  };
  for (uint32_t m = 0; m < head->node_count(); ++m) {
    auto it = nodes->At(m);
    CHECK(node_key(it) == head->key(m));
    CHECK((it.delta ? delta.is_stub(it.index) : base->is_stub(it.index)) == head->is_stub(m));
    CHECK((it.delta ? nodes->OfDelta(it.index) : nodes->OfBase(it.index)) == m);
  }
  auto edges = EdgeSequence(*base, delta);
  INFO(edges.status().ToString());
  REQUIRE(edges.ok());
  REQUIRE(edges->size() == head->edge_count());
  std::vector<std::string_view> list_source(delta.edge_count());
  for (uint32_t k = 0; k < delta.out_list_count(); ++k) {
    uint32_t s = delta.out_source(k);
    for (uint32_t x = delta.out_begin(k); x < delta.out_begin(k + 1); ++x) {
      list_source[x] = IsDeltaRef(s) ? delta.nodes().key(s & ~kDeltaNode) : base->key(s);
    }
  }
  for (uint32_t m = 0; m < head->edge_count(); ++m) {
    auto it = edges->At(m);
    std::string_view src, dst, rel;
    if (it.delta) {
      DeltaEdge e = delta.edge(it.index);
      src = list_source[it.index];
      dst = IsDeltaRef(e.target) ? delta.nodes().key(e.target & ~kDeltaNode) : base->key(e.target);
      rel = delta.relation_name(e.rel);
    } else {
      src = base->key(base->edge_source(it.index));
      dst = base->key(base->edge_target(it.index));
      rel = base->relation_name(base->edge_rel(it.index));
    }
    CHECK(src == head->key(head->edge_source(m)));
    CHECK(dst == head->key(head->edge_target(m)));
    CHECK(rel == head->relation_name(head->edge_rel(m)));
  }

  // 4. Inserted kv entries land where a full export puts them.
  for (uint32_t k = 0; k < delta.kv_count(); ++k) {
    const DeltaKvEntry& e = delta.kv(k);
    auto rk = delta.removed_kv();
    uint32_t removed_below =
        static_cast<uint32_t>(std::lower_bound(rk.begin(), rk.end(), e.gap) - rk.begin());
    auto want = head->FindKv(e.scope, e.ns, e.key);
    REQUIRE(want);
    CHECK(e.gap - removed_below + k == *want);
    CHECK(head->kv(*want).value == e.value);
  }

  // 5. Out- and in-lists hold a full export's lists, in its order.
  auto key_of = [&](uint32_t ref) -> std::string_view {
    return IsDeltaRef(ref) ? delta.nodes().key(ref & ~kDeltaNode) : base->key(ref);
  };
  std::vector<std::string_view> edge_source(delta.edge_count());
  for (uint32_t k = 0; k < delta.out_list_count(); ++k) {
    std::string_view src = key_of(delta.out_source(k));
    auto h = head->FindKey(src);
    REQUIRE(h);
    REQUIRE(delta.out_begin(k + 1) - delta.out_begin(k) == head->out_degree(*h));
    for (uint32_t x = delta.out_begin(k); x < delta.out_begin(k + 1); ++x) {
      edge_source[x] = src;
      DeltaEdge e = delta.edge(x);
      uint32_t j = head->out_begin(*h) + (x - delta.out_begin(k));
      CHECK(key_of(e.target) == head->key(head->edge_target(j)));
      CHECK(delta.relation_name(e.rel) == head->relation_name(head->edge_rel(j)));
      if (e.base_edge != kNoNode) {
        CHECK(base->key(base->edge_source(e.base_edge)) == src);
        CHECK(base->key(base->edge_target(e.base_edge)) == key_of(e.target));
        CHECK(base->edge_weight(e.base_edge) == e.weight);
      }
    }
  }
  for (uint32_t k = 0; k < delta.in_list_count(); ++k) {
    std::string_view dst = key_of(delta.in_target(k));
    auto h = head->FindKey(dst);
    REQUIRE(h);
    REQUIRE(delta.in_begin(k + 1) - delta.in_begin(k) == head->in_degree(*h));
    for (uint32_t p = delta.in_begin(k); p < delta.in_begin(k + 1); ++p) {
      uint32_t ref = delta.in_entry(p);
      uint32_t want = head->in_edge(head->in_begin(*h) + (p - delta.in_begin(k)));
      std::string_view src;
      std::string_view rel;
      if (IsDeltaRef(ref)) {
        src = edge_source[ref & ~kDeltaNode];
        rel = delta.relation_name(delta.edge(ref & ~kDeltaNode).rel);
      } else {
        src = base->key(base->edge_source(ref));
        rel = base->relation_name(base->edge_rel(ref));
      }
      CHECK(src == head->key(head->edge_source(want)));
      CHECK(rel == head->relation_name(head->edge_rel(want)));
    }
  }
}

// The delta's edit of the base's runs (block 0x09): the base sessions it removes,
// and its new runs with the base session each goes before.
void CheckRunEdit(const Delta& delta, const std::vector<uint32_t>& removed,
                  const std::vector<std::string_view>& runs, const std::vector<uint32_t>& gaps) {
  const auto r = delta.removed_sessions();
  CHECK(std::vector<uint32_t>(r.begin(), r.end()) == removed);
  const auto n = delta.new_runs();
  CHECK(std::vector<std::string_view>(n.begin(), n.end()) == runs);
  const auto g = delta.new_run_gaps();
  CHECK(std::vector<uint32_t>(g.begin(), g.end()) == gaps);
}

}  // namespace

TEST_CASE("delta: base + delta is the full export at the head revision", "[snapshot][delta]") {
  for (uint32_t seed : {1u, 2u, 3u, 4u, 5u, 6u}) {
    INFO("seed " << seed);
    TempDir dir;
    auto store = amem::testing::OpenStore(dir.path());
    History history(seed);
    std::vector<uint64_t> revs = {0};
    for (int round = 0; round < 60; ++round) {
      if (history.Step(store.get())) revs.push_back(store->revision().value());
      if (round % 10 == 9) {
        uint64_t head = store->revision().value();
        // Several delta sizes: from the previous revision, from the middle, from 0.
        for (uint64_t base : {revs[revs.size() > 1 ? revs.size() - 2 : 0], revs[revs.size() / 2],
                              uint64_t{0}}) {
          CheckPair(*store, base, head);
        }
      }
    }
  }
}

TEST_CASE("delta: an empty delta changes nothing", "[snapshot][delta]") {
  TempDir dir;
  auto store = amem::testing::OpenStore(dir.path());
  REQUIRE(store->PutNode(amem::testing::Node("fact:a", "first")).ok());
  REQUIRE(store->PutEdge(amem::testing::Edge("fact:a", "supports", "fact:ghost")).ok());
  CheckPair(*store, 2, 2);
}

TEST_CASE("delta: damaged or mismatched files are refused", "[snapshot][delta]") {
  TempDir dir;
  auto store = amem::testing::OpenStore(dir.path());
  REQUIRE(store->PutNode(amem::testing::Node("fact:a", "first")).ok());
  const std::string base_bytes = Export(*store, 1);
  auto base = Open(base_bytes);
  REQUIRE(store->PutNode(amem::testing::Node("fact:b", "second")).ok());
  REQUIRE(store->PutEdge(amem::testing::Edge("fact:a", "supports", "fact:b")).ok());
  std::string bytes;
  REQUIRE(CompileDelta(*store, *base, 1, 3, &bytes).ok());
  REQUIRE(Delta::OpenBuffer(bytes, *base).ok());

  SECTION("every flipped byte and every cut is Corruption, never a crash") {
    for (size_t k = 0; k < bytes.size(); ++k) {
      std::string bad = bytes;
      bad[k] = static_cast<char>(bad[k] ^ 0x01);
      auto d = Delta::OpenBuffer(bad, *base);
      CHECK_FALSE(d.ok());
    }
    for (size_t len = 0; len < bytes.size(); len += 7) {
      CHECK_FALSE(Delta::OpenBuffer(bytes.substr(0, len), *base).ok());
    }
  }
  SECTION("a delta of another base is refused") {
    REQUIRE(store->PutNode(amem::testing::Node("fact:c", "third")).ok());
    auto other = Open(Export(*store, 4));
    auto d = Delta::OpenBuffer(bytes, *other);
    REQUIRE_FALSE(d.ok());
    CHECK(d.status().ToString().find("another base") != std::string::npos);
  }
  SECTION("a head before the base is refused") {
    auto d = CompileDelta(*store, *base, 2, 1, &bytes);
    CHECK_FALSE(d.ok());
  }
}

namespace {

// Compiles base_rev -> the store's head with `compiler` and checks the bytes are
// CompileDelta's from scratch; returns them.
std::string CheckExtended(DeltaCompiler* compiler, const Store& store, const Reader& base,
                          uint64_t base_rev) {
  const uint64_t head = store.revision().value();
  INFO("base " << base_rev << " head " << head);
  std::string extended, whole;
  auto a = compiler->Compile(store, base, base_rev, head, &extended);
  INFO(a.status().ToString());
  REQUIRE(a.ok());
  REQUIRE(CompileDelta(store, base, base_rev, head, &whole).ok());
  CHECK(extended == whole);
  return extended;
}

}  // namespace

TEST_CASE("delta: a DeltaCompiler extended write by write gives CompileDelta's bytes",
          "[snapshot][delta][incremental]") {
  // Eight histories; four under the sanitizers (both attributions still).
  const uint32_t seeds = amem::testing::kSanitizerBuild ? 4 : 8;
  for (uint32_t seed = 1; seed <= seeds; ++seed) {
    INFO("seed " << seed);
    TempDir dir;
    auto store = amem::testing::OpenStore(dir.path());
    History history(seed, /*per_op_attribution=*/seed % 2 == 0);
    history.Grow(store.get(), 12);
    const uint64_t base_rev = store->revision().value();
    const std::string base_bytes = Export(*store, base_rev);
    auto base = Open(base_bytes);
    DeltaCompiler compiler;
    for (int round = 0; round < 50; ++round) {
      history.Step(store.get());  // a refused batch leaves the head: compiled again as is
      const std::string bytes = CheckExtended(&compiler, *store, *base, base_rev);
      if (round % 10 == 9) {
        CheckLayered(base_bytes, bytes, *Open(Export(*store, store->revision().value())));
      }
      if (round % 17 == 16) {
        // A head before the kept one starts over, and so does the next one.
        const uint64_t earlier = store->revision().value() - 1;
        std::string before, whole;
        REQUIRE(compiler.Compile(*store, *base, base_rev, earlier, &before).ok());
        REQUIRE(CompileDelta(*store, *base, base_rev, earlier, &whole).ok());
        CHECK(before == whole);
      }
    }
    // A bound the change log passes stops without compiling; the next compile
    // starts over.
    std::string untouched = "x";
    auto stopped = compiler.Compile(*store, *base, base_rev, store->revision().value(),
                                    &untouched, 1);
    REQUIRE(stopped.ok());
    CHECK(stopped->over_bound);
    CHECK(untouched == "x");
    CheckExtended(&compiler, *store, *base, base_rev);
  }
}

TEST_CASE("delta: an extended delta drops a node the previous one added, and its stub",
          "[snapshot][delta][incremental]") {
  using amem::testing::Edge;
  using amem::testing::Kv;
  using amem::testing::Node;
  TempDir dir;
  auto store = amem::testing::OpenStore(dir.path());
  REQUIRE(store->PutNode(Node("fact:a", "first retry note")).ok());
  REQUIRE(store->PutNode(Node("fact:b", "second cache note")).ok());
  REQUIRE(store->PutEdge(Edge("fact:a", "supports", "fact:b")).ok());
  const uint64_t base_rev = store->revision().value();
  const std::string base_bytes = Export(*store, base_rev);
  auto base = Open(base_bytes);
  DeltaCompiler compiler;
  auto step = [&](const char* what, auto&& write) {
    INFO(what);
    REQUIRE(write().ok());
    const std::string bytes = CheckExtended(&compiler, *store, *base, base_rev);
    CheckLayered(base_bytes, bytes, *Open(Export(*store, store->revision().value())));
  };
  step("a new node", [&] { return store->PutNode(Node("fact:new", "a new timeout note")).status(); });
  step("an edge from it",
       [&] { return store->PutEdge(Edge("fact:new", "supports", "fact:a")).status(); });
  step("the new node deleted: a stub for its edge",
       [&] { return store->DeleteNode("fact:new").status(); });
  step("its edge deleted: no stub",
       [&] { return store->DeleteEdge("fact:new", "supports", "fact:a").status(); });
  step("a base node rewritten",
       [&] { return store->PutNode(Node("fact:a", "rewritten note")).status(); });
  step("a base node deleted", [&] { return store->DeleteNode("fact:b").status(); });
  step("a kv entry", [&] { return store->PutKv(Kv("proj", "ns", "k", "v1")).status(); });
  step("the kv entry rewritten", [&] { return store->PutKv(Kv("proj", "ns", "k", "v2")).status(); });
  step("the kv entry deleted", [&] { return store->DeleteKv("proj", "ns", "k").status(); });
  step("a node moved to another run", [&] {
    WriteOptions w;
    w.run = "run-x";
    return store->PutNode(Node("fact:a", "moved note"), w).status();
  });
  step("another handle's write (another process)", [&] {
    auto other = Store::Open(dir.path());
    if (!other.ok()) return other.status();
    return (*other)->PutNode(Node("fact:other", "written elsewhere")).status();
  });
}

TEST_CASE("delta: the runs at H are the base's, less the unused ones, with the new ones at their "
          "gaps", "[snapshot][delta]") {
  using amem::testing::Edge;
  using amem::testing::Node;
  TempDir dir;
  auto store = amem::testing::OpenStore(dir.path());
  auto in_run = [](const char* run) {
    WriteOptions w;
    w.run = run;
    return w;
  };
  REQUIRE(store->PutNode(Node("fact:plain", "no run")).ok());
  REQUIRE(store->PutNode(Node("fact:b1", "run b"), in_run("run-b")).ok());
  REQUIRE(store->PutNode(Node("fact:d1", "run d"), in_run("run-d")).ok());
  REQUIRE(store->PutNode(Node("fact:f1", "run f"), in_run("run-f")).ok());
  REQUIRE(store->PutNode(Node("fact:f2", "run f too"), in_run("run-f")).ok());
  // A run only an edge uses: a session without nodes.
  REQUIRE(store->PutEdge(Edge("fact:b1", "supports", "fact:f1"), in_run("run-h")).ok());
  const uint64_t base_rev = store->revision().value();
  const std::string base_bytes = Export(*store, base_rev);
  std::shared_ptr<const Reader> base = Open(base_bytes);
  REQUIRE(base->session_count() == 5);  // "", run-b, run-d, run-f, run-h

  REQUIRE(store->PutNode(Node("fact:a1", "run a"), in_run("run-a")).ok());  // before run-b
  REQUIRE(store->PutNode(Node("fact:c1", "run c"), in_run("run-c")).ok());  // between b and d
  REQUIRE(store->DeleteNode("fact:d1").ok());                               // run-d unused
  REQUIRE(store->DeleteNode("fact:f2").ok());                               // run-f still used
  REQUIRE(store->DeleteEdge("fact:b1", "supports", "fact:f1").ok());        // run-h unused
  REQUIRE(store->PutNode(Node("fact:z1", "run z"), in_run("run-z")).ok());  // after them all
  const uint64_t mid_rev = store->revision().value();
  std::string bytes;
  REQUIRE(CompileDelta(*store, *base, base_rev, mid_rev, &bytes).ok());
  auto delta_or = Delta::OpenBuffer(bytes, *base);
  INFO(delta_or.status().ToString());
  REQUIRE(delta_or.ok());
  std::shared_ptr<const Delta> delta(std::move(*delta_or));
  CheckRunEdit(*delta, {2, 4}, {"run-a", "run-c", "run-z"}, {1, 2, 5});
  auto mid_head = Open(Export(*store, mid_rev));
  REQUIRE(mid_head->session_count() == 6);  // "", run-a, run-b, run-c, run-f, run-z
  CheckLayered(base_bytes, bytes, *mid_head);

  // A level over that view (the live view's stack): its base's runs are the view's.
  auto view_or = Reader::OpenLayered(base, delta);
  REQUIRE(view_or.ok());
  std::shared_ptr<const Reader> view = std::move(*view_or);
  REQUIRE(store->PutNode(Node("fact:b2", "run b again"), in_run("run-b")).ok());
  REQUIRE(store->DeleteNode("fact:c1").ok());                                 // run-c unused
  REQUIRE(store->PutNode(Node("fact:e1", "run e"), in_run("run-e")).ok());  // between c and f
  const uint64_t head_rev = store->revision().value();
  std::string top;
  REQUIRE(CompileDelta(*store, *view, mid_rev, head_rev, &top).ok());
  auto top_delta = Delta::OpenBuffer(top, *view);
  INFO(top_delta.status().ToString());
  REQUIRE(top_delta.ok());
  CheckRunEdit(**top_delta, {3}, {"run-e"}, {4});
  auto stacked = Reader::OpenLayered(view, std::shared_ptr<const Delta>(std::move(*top_delta)));
  INFO(stacked.status().ToString());
  REQUIRE(stacked.ok());
  amem::snapshot_test::CheckSameReader(**stacked, *Open(Export(*store, head_rev)), false);
}

TEST_CASE("delta: a DeltaCompiler starts over on another history at the same revisions",
          "[snapshot][delta][incremental]") {
  // Both stores are empty at revision 0, so one base (the empty export) serves both;
  // their revisions after it are other commits.
  TempDir a_dir, b_dir;
  auto a = amem::testing::OpenStore(a_dir.path());
  auto b = amem::testing::OpenStore(b_dir.path());
  const std::string base_bytes = Export(*a, 0);
  auto base = Open(base_bytes);
  History ha(11), hb(12);
  ha.Grow(a.get(), 10);
  hb.Grow(b.get(), 14);
  DeltaCompiler compiler;
  CheckExtended(&compiler, *a, *base, 0);
  CheckExtended(&compiler, *b, *base, 0);
  CheckExtended(&compiler, *a, *base, 0);
}
