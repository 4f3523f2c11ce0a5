// The writer: every field and index round-trips through a snapshot, output is
// independent of input order, and states the model forbids are refused.
#include "snapshot/writer.h"

#include "snapshot/reader.h"

#include <algorithm>
#include <catch2/catch.hpp>
#include <cfloat>
#include <cstring>
#include <limits>
#include <random>

#include "common/coding.h"
#include "common/tokenizer.h"
#include "snapshot/writer.h"
#include "tests/snapshot/snapshot_test_util.h"
#include "tests/snapshot/test_state.h"

namespace amem::snapshot {
namespace {

using snapshot_test::SmallState;
using snapshot_test::TouchEverything;

using snapshot_test::Build;
using snapshot_test::OpenOrDie;

}  // namespace

TEST_CASE("Every node field round-trips through the snapshot", "[snapshot][reader]") {
  StoreState s = SmallState();
  std::string bytes = Build(s);
  auto r = OpenOrDie(bytes);
  REQUIRE(r->node_count() == s.nodes.size() + 1);  // + the stub "module:missing"
  CHECK(r->edge_count() == s.edges.size());
  CHECK(r->dimension() == 4);
  CHECK(r->session_count() == 4);  // "", run-a, run-b, run-c
  CHECK(r->newest_timestamp() == 4001);
  CHECK(r->has_vectors());
  CHECK(r->has_term_index());
  CHECK(r->has_doc_lengths());
  CHECK(r->has_extensions());
  CHECK(r->has_checksum());
  CHECK(r->stub_count() == 1);
  CHECK(r->Verify().ok());
  for (const NodeRecord& n : s.nodes) {
    INFO(n.key);
    auto i = r->FindKey(n.key);
    REQUIRE(i.has_value());
    CHECK(r->FindId(n.id) == i);
    CHECK(r->key(*i) == n.key);
    CHECK(r->id(*i) == n.id);
    CHECK(r->type(*i) == n.type);
    CHECK(r->content(*i) == n.content);
    CHECK(r->meta(*i) == n.meta);
    CHECK(r->confidence(*i) == n.confidence);
    CHECK(r->created_ts(*i) == n.created_ts);
    CHECK(r->updated_ts(*i) == n.updated_ts);
    CHECK(r->scope(*i) == n.scope);
    CHECK(r->run(*i) == n.run);
    CHECK(r->task(*i) == n.task);
    CHECK(r->session_run(r->session(*i)) == n.run);
    CHECK_FALSE(r->is_stub(*i));
    if (n.vector.empty()) {
      CHECK(r->vector(*i) == nullptr);
    } else {
      REQUIRE(r->vector(*i) != nullptr);
      CHECK(reinterpret_cast<uintptr_t>(r->vector(*i)) % alignof(float) == 0);
      CHECK(std::vector<float>(r->vector(*i), r->vector(*i) + 4) == n.vector);
    }
    CHECK(r->doc_length(*i) == Tokenize(n.content).size());
  }
  auto stub = r->FindKey("module:missing");
  REQUIRE(stub.has_value());
  CHECK(r->is_stub(*stub));
  CHECK(r->type(*stub) == NodeType::kEntity);
  CHECK(r->meta(*stub) == R"({"stub":"true"})");
  CHECK(r->content(*stub).empty());
  CHECK(r->id(*stub) == NodeIdForKey("module:missing"));
  CHECK(r->created_ts(*stub) == 3200);
  CHECK_FALSE(r->FindKey("nope").has_value());
  CHECK_FALSE(r->FindKey("").has_value());
  CHECK_FALSE(r->FindId(12345).has_value());
}

TEST_CASE("Every edge field round-trips and adjacency is sorted", "[snapshot][reader]") {
  StoreState s = SmallState();
  auto r = OpenOrDie(Build(s));
  for (const EdgeRecord& e : s.edges) {
    INFO(e.src_key << " " << int(e.rel) << " " << e.dst_key);
    uint32_t src = *r->FindKey(e.src_key), dst = *r->FindKey(e.dst_key);
    auto j = r->FindEdge(src, e.rel, dst);
    REQUIRE(j.has_value());
    CHECK(r->edge_source(*j) == src);
    CHECK(r->edge_target(*j) == dst);
    CHECK(r->edge_rel(*j) == e.rel);
    CHECK(r->edge_weight(*j) == e.weight);
    CHECK(r->edge_payload(*j) == e.payload);
    CHECK(r->edge_created_ts(*j) == e.created_ts);
    CHECK(r->edge_updated_ts(*j) == e.updated_ts);
    CHECK(r->edge_run(*j) == e.run);
    CHECK(r->edge_task(*j) == e.task);
    CHECK(*j >= r->out_begin(src));
    CHECK(*j < r->out_end(src));
    bool found_in = false;
    for (uint32_t k = r->in_begin(dst); k < r->in_end(dst); ++k) found_in |= r->in_edge(k) == *j;
    CHECK(found_in);
  }
  CHECK(r->relation_name(64) == "blocks");
  CHECK(r->FindRelation("blocks") == RelationId{64});
  CHECK(r->FindRelation("supports") == RelationId{kSupports});
  CHECK_FALSE(r->FindRelation("nope").has_value());
  CHECK(r->relation_name(65).empty());
  CHECK(r->relations().size() == kBuiltinRelationCount + 1);
  CHECK(r->type_name(7) == "file");
  CHECK(r->type_name(200).empty());
  // Out-edges sorted by (rel, target); in-edges by (rel, source).
  uint32_t total_in = 0;
  for (uint32_t i = 0; i < r->node_count(); ++i) {
    for (uint32_t j = r->out_begin(i); j + 1 < r->out_end(i); ++j) {
      CHECK(std::make_pair(r->edge_rel(j), r->edge_target(j)) <
            std::make_pair(r->edge_rel(j + 1), r->edge_target(j + 1)));
    }
    for (uint32_t k = r->in_begin(i); k < r->in_end(i); ++k) {
      CHECK(r->edge_target(r->in_edge(k)) == i);
      if (k + 1 < r->in_end(i)) {
        CHECK(std::make_pair(r->edge_rel(r->in_edge(k)), r->in_source(k)) <
              std::make_pair(r->edge_rel(r->in_edge(k + 1)), r->in_source(k + 1)));
      }
    }
    total_in += r->in_degree(i);
    auto [b, e] = r->OutEdgesWithRel(i, kImports);
    for (uint32_t j = b; j < e; ++j) CHECK(r->edge_rel(j) == kImports);
  }
  CHECK(total_in == r->edge_count());
  CHECK_FALSE(r->FindEdge(r->node_count(), 0, 0).has_value());
}

TEST_CASE("Indexes agree with the records", "[snapshot][reader]") {
  StoreState s = SmallState();
  auto r = OpenOrDie(Build(s));
  // Type index.
  uint32_t typed = 0;
  for (int t = 0; t < kNodeTypeCount; ++t) {
    for (uint32_t i : r->NodesOfType(static_cast<uint8_t>(t))) {
      CHECK(r->type_code(i) == t);
      ++typed;
    }
  }
  CHECK(typed == r->node_count());
  // Sessions are contiguous ranges in run-name order, "" first.
  CHECK(r->session_run(0).empty());
  CHECK(r->FindSession("run-b").has_value());
  CHECK_FALSE(r->FindSession("zzz").has_value());
  for (uint32_t s2 = 0; s2 < r->session_count(); ++s2) {
    SessionRange range = r->session_range(s2);
    for (uint32_t i = range.begin; i < range.end; ++i) CHECK(r->session(i) == s2);
  }
  CHECK(r->session_range(*r->FindSession("run-c")).begin == r->session_range(*r->FindSession("run-c")).end);
  // Time index sorted, a permutation.
  std::vector<uint32_t> seen;
  for (uint32_t k = 0; k < r->time_entry_count(); ++k) {
    TimeEntry e = r->time_entry(k);
    CHECK(e.ts == r->created_ts(e.node));
    if (k > 0) CHECK(r->time_entry(k - 1).ts <= e.ts);
    seen.push_back(e.node);
  }
  std::sort(seen.begin(), seen.end());
  for (uint32_t i = 0; i < seen.size(); ++i) CHECK(seen[i] == i);
  uint32_t lb = r->TimeLowerBound(1500);
  CHECK(r->time_entry(lb).ts >= 1500);
  CHECK(r->time_entry(lb - 1).ts < 1500);
  CHECK(r->cluster_count() == 0);
  // Term index: postings equal a scan with the same tokenizer.
  auto t = r->FindTerm("lmdb");
  REQUIRE(t.has_value());
  CHECK(r->term(*t) == "lmdb");
  uint32_t scan_df = 0;
  for (uint32_t i = 0; i < r->node_count(); ++i) {
    auto toks = Tokenize(r->content(i));
    scan_df += std::count(toks.begin(), toks.end(), "lmdb") > 0;
  }
  CHECK(r->doc_frequency(*t) == scan_df);
  PostingList p = r->postings(*t, Field::kContent);
  CHECK(p.size() == scan_df);
  for (uint32_t k = 0; k < p.size(); ++k) {
    CHECK(p.field(k) == Field::kContent);
    CHECK(p.tf(k) == 1);
  }
  CHECK_FALSE(r->FindTerm("the").has_value());  // stop word
  CHECK(r->FindTerm("日本語").has_value());
  auto src = r->FindTerm("source");  // only in file:n7's meta
  REQUIRE(src.has_value());
  CHECK(r->doc_frequency(*src) == 0);
  REQUIRE(r->postings(*src, Field::kMeta).size() == 1);
  CHECK(r->postings(*src, Field::kMeta).node(0) == *r->FindKey("file:n7"));
  for (uint32_t k = 1; k < r->term_count(); ++k) CHECK(r->term(k - 1) < r->term(k));
  double sum = 0;
  for (uint32_t i = 0; i < r->node_count(); ++i) sum += r->doc_length(i);
  CHECK(r->average_doc_length() == Approx(sum / r->node_count()));
  // Kv.
  REQUIRE(r->kv_count() == 2);
  auto k = r->FindKv("proj", "decisions", "db");
  REQUIRE(k.has_value());
  KvEntry e = r->kv(*k);
  CHECK(e.value == "use lmdb");
  CHECK(e.ts == 4000);
  CHECK(e.run == "run-a");
  CHECK(e.task.empty());
  CHECK(r->kv(0).ns == "constraints");  // sorted by (scope, ns, key)
  CHECK(r->kv(0).task == "task-1");
  CHECK_FALSE(r->FindKv("proj", "decisions", "nope").has_value());
}

TEST_CASE("Output does not depend on input order", "[snapshot][writer]") {
  StoreState s = SmallState();
  std::string a = Build(s);
  CHECK(Build(s) == a);
  std::mt19937 rng(7);
  for (int round = 0; round < 5; ++round) {
    std::shuffle(s.nodes.begin(), s.nodes.end(), rng);
    std::shuffle(s.edges.begin(), s.edges.end(), rng);
    std::shuffle(s.kv.begin(), s.kv.end(), rng);
    CHECK(Build(s) == a);
  }
}

TEST_CASE("Custom relations are numbered by name, whatever their store ids",
          "[snapshot][writer]") {
  // One logical state, its relations defined in two different orders.
  StoreState s = SmallState();  // "blocks" is store id 64
  s.relations.push_back({65, "zebra"});
  s.relations.push_back({66, "alpha"});
  StoreState t = SmallState();
  t.relations = {{64, "zebra"}, {65, "alpha"}, {70, "blocks"}};
  for (EdgeRecord& e : t.edges) {
    if (e.rel == 64) e.rel = 70;
  }
  const std::string bytes = Build(s);
  CHECK(Build(t) == bytes);
  auto r = OpenOrDie(bytes);
  CHECK(r->relation_name(64) == "alpha");
  CHECK(r->relation_name(65) == "blocks");
  CHECK(r->relation_name(66) == "zebra");
  CHECK(r->relation_name(67).empty());
  auto j = r->FindEdge(*r->FindKey("decision:n1"), 65, *r->FindKey("fact:ünïcödé"));
  CHECK(j.has_value());
}

TEST_CASE("Writer rejects states the model forbids", "[snapshot][writer]") {
  StoreState s = SmallState();
  SECTION("duplicate key") { s.nodes.push_back(s.nodes[0]); }
  SECTION("bad type") { s.nodes[0].type = static_cast<NodeType>(11); }
  SECTION("nan confidence") { s.nodes[0].confidence = std::nanf(""); }
  SECTION("confidence above 1") { s.nodes[0].confidence = 1.5f; }
  SECTION("vector dimension") { s.nodes[0].vector = {1.0f}; }
  SECTION("vector not finite") { s.nodes[0].vector = {1.0f, 2.0f, INFINITY, 0.0f}; }
  SECTION("undefined relation") { s.edges[0].rel = 65; }
  SECTION("reserved relation") { s.relations.push_back({20, "x"}); }
  SECTION("relation name defined twice") { s.relations.push_back({65, "blocks"}); }
  SECTION("relation id defined twice") { s.relations.push_back({64, "other"}); }
  SECTION("weight") { s.edges[0].weight = NAN; }
  SECTION("duplicate edge") { s.edges.push_back(s.edges[0]); }
  SECTION("duplicate kv") { s.kv.push_back(s.kv[0]); }
  SECTION("dimension 0") { s.dimension = 0; }
  SECTION("empty key") { s.nodes[0].key.clear(); }
  auto b = BuildSnapshot(s);
  CHECK(b.status().IsInvalidArgument());
}

TEST_CASE("A non-finite float anywhere in any vector is refused, naming its node",
          "[snapshot][writer]") {
  // The floats are checked as they are copied to the file (StreamFile), not
  // beforehand: every node and every position, not only the first.
  const float bad[] = {std::nanf(""), -std::nanf(""), INFINITY, -INFINITY};
  StoreState base = SmallState();
  std::vector<size_t> with_vector;
  for (size_t k = 0; k < base.nodes.size(); ++k) {
    if (!base.nodes[k].vector.empty()) with_vector.push_back(k);
  }
  REQUIRE(with_vector.size() >= 3);
  for (size_t k : with_vector) {
    for (size_t at = 0; at < 4; ++at) {
      for (float f : bad) {
        StoreState s = base;
        s.nodes[k].vector[at] = f;
        INFO(s.nodes[k].key << " [" << at << "] = " << f);
        auto b = BuildSnapshot(s);
        REQUIRE(b.status().IsInvalidArgument());
        CHECK(b.status().message() == "node " + s.nodes[k].key + ": vector not finite");
      }
    }
  }
}

TEST_CASE("Finite extremes in vectors are kept bit for bit", "[snapshot][writer]") {
  StoreState s = SmallState();
  const float kept[] = {FLT_MAX, -FLT_MAX, FLT_MIN, std::numeric_limits<float>::denorm_min(),
                        -0.0f, 0.0f, 1e-40f, -1e-30f};
  size_t next = 0;
  for (NodeRecord& n : s.nodes) {
    if (n.vector.empty()) continue;
    for (float& f : n.vector) f = kept[next++ % std::size(kept)];
  }
  auto r = OpenOrDie(Build(s));
  for (const NodeRecord& n : s.nodes) {
    if (n.vector.empty()) continue;
    auto i = r->FindKey(n.key);
    REQUIRE(i.has_value());
    const float* v = r->vector(*i);
    REQUIRE(v != nullptr);
    CHECK(std::memcmp(v, n.vector.data(), 4 * n.vector.size()) == 0);
  }
}

TEST_CASE("Empty state gives a valid empty snapshot", "[snapshot][writer]") {
  StoreState s;
  auto r = OpenOrDie(Build(s));
  CHECK(r->node_count() == 0);
  CHECK(r->edge_count() == 0);
  CHECK(r->session_count() == 1);
  CHECK(r->term_count() == 0);
  CHECK(r->average_doc_length() == 0);
  CHECK_FALSE(r->has_vectors());
  CHECK_FALSE(r->FindKey("x").has_value());
  CHECK(r->Verify().ok());
}

}  // namespace amem::snapshot
