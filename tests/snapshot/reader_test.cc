#include "snapshot/reader.h"

#include <algorithm>
#include <catch2/catch.hpp>
#include <cstring>
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

TEST_CASE("Spec-only file without amem blocks opens and degrades", "[snapshot][reader]") {
  StoreState s = SmallState();
  auto full = OpenOrDie(Build(s));
  WriterOptions spec;
  spec.extensions = false;
  spec.term_index = false;
  spec.checksum = false;
  std::string bytes = Build(s, spec);
  auto check_graph = [&](const Reader& r) {
    REQUIRE(r.node_count() == full->node_count());
    REQUIRE(r.edge_count() == full->edge_count());
    CHECK_FALSE(r.has_extensions());
    CHECK_FALSE(r.has_term_index());
    CHECK_FALSE(r.has_doc_lengths());
    CHECK(r.key(0).empty());
    CHECK(r.id(0) == 0);
    CHECK_FALSE(r.FindKey(full->key(0)).has_value());
    CHECK(r.edge_payload(0) == "{}");
    CHECK(r.newest_timestamp() == 3200);  // newest created_ts of a node (the stub)
    for (uint32_t i = 0; i < r.node_count(); ++i) {
      CHECK(r.content(i) == full->content(i));
      CHECK(r.meta(i) == full->meta(i));
      CHECK(r.type(i) == full->type(i));
      CHECK(r.updated_ts(i) == r.created_ts(i));
      CHECK((r.vector(i) == nullptr) == (full->vector(i) == nullptr));
      CHECK(r.out_begin(i) == full->out_begin(i));
      CHECK(r.out_end(i) == full->out_end(i));
      REQUIRE(r.in_degree(i) == full->in_degree(i));
      for (uint32_t k = r.in_begin(i); k < r.in_end(i); ++k) CHECK(r.in_edge(k) == full->in_edge(k));
    }
    for (uint32_t t = 0; t < kNodeTypeCount; ++t) {
      CHECK(r.NodesOfType(static_cast<uint8_t>(t)) == full->NodesOfType(static_cast<uint8_t>(t)));
    }
    for (uint32_t k = 0; k < r.time_entry_count(); ++k) {
      CHECK(r.time_entry(k).node == full->time_entry(k).node);
    }
    for (uint32_t s2 = 0; s2 < r.session_count(); ++s2) {
      SessionRange range = r.session_range(s2);
      for (uint32_t i = 0; i < r.node_count(); ++i) {
        if (r.session(i) == s2) CHECK((i >= range.begin && i < range.end));
      }
    }
    CHECK(r.run(r.node_count() - 1) == std::to_string(r.session(r.node_count() - 1)));
    CHECK(r.Verify().ok());
    TouchEverything(r);
  };
  SECTION("seed-spec index blocks only") {
    auto r = OpenOrDie(bytes);
    check_graph(*r);
  }
  SECTION("no index section, uncompressed content") {
    spec.compress = false;
    bytes = Build(s, spec);
    Header h;
    REQUIRE(h.DecodeFrom(bytes).ok());
    h.flags &= static_cast<uint16_t>(~kFlagHasIndexes);
    std::string plain;
    h.EncodeTo(&plain);
    plain.append(bytes, Header::kEncodedLength, h.index_offset - Header::kEncodedLength);
    auto r = OpenOrDie(plain);
    CHECK_FALSE(r->content_compressed());
    check_graph(*r);
  }
}

// A file as a seed-spec (v0.1) writer makes it: no feature flags, and index
// blocks that are a tag followed directly by the body, without a length field.

TEST_CASE("Seed v0.1 file whose index blocks have no length opens", "[snapshot][reader]") {
  StoreState s;
  s.dimension = 4;
  const char* runs[] = {"", "run-a", "run-b"};
  for (int t = 0; t < 6; ++t) {  // the seed's six event types
    NodeRecord n = snapshot_test::MakeNode("n" + std::to_string(t), static_cast<NodeType>(t),
                                           "seed node " + std::to_string(t), 100 - t);
    n.run = runs[t % 3];
    if (t % 2 == 0) n.vector = {1.0f, 0.0f, float(t), 0.5f};
    if (t == 3) n.meta = R"({"k":"v"})";
    s.nodes.push_back(std::move(n));
  }
  for (int rel = 0; rel <= kTemporalNext; ++rel) {  // the seed's seven edge types
    s.edges.push_back(snapshot_test::MakeEdge("n" + std::to_string(rel % 6), static_cast<RelationId>(rel),
                                              "n" + std::to_string((rel + 2) % 6), 200));
  }
  WriterOptions spec;
  spec.extensions = false;
  spec.term_index = false;
  spec.checksum = false;
  const std::string ours = Build(s, spec);  // features 0, blocks with lengths
  auto ref = OpenOrDie(ours);
  CHECK_FALSE(ref->index_section_ignored());
  Header h;
  REQUIRE(h.DecodeFrom(ours).ok());
  REQUIRE(h.features == 0);
  const uint32_t n = ref->node_count();
  std::string seed = ours.substr(0, h.index_offset);
  PutFixed32(&seed, 0x01);  // type index: num_types, bitsets
  PutFixed32(&seed, 6);
  for (uint8_t t = 0; t < 6; ++t) {
    std::string bits((n + 7) / 8, '\0');
    for (uint32_t i : ref->NodesOfType(t)) bits[i / 8] |= static_cast<char>(1u << (i % 8));
    seed += bits;
  }
  PutFixed32(&seed, 0x02);  // session index
  PutFixed32(&seed, ref->session_count());
  for (uint32_t k = 0; k < ref->session_count(); ++k) {
    PutFixed32(&seed, k);
    PutFixed32(&seed, ref->session_range(k).begin);
    PutFixed32(&seed, ref->session_range(k).end);
  }
  PutFixed32(&seed, 0x03);  // time index
  PutFixed32(&seed, n);
  for (uint32_t k = 0; k < n; ++k) {
    PutFixed64(&seed, static_cast<uint64_t>(ref->time_entry(k).ts));
    PutFixed32(&seed, ref->time_entry(k).node);
  }
  PutFixed32(&seed, 0x04);  // cluster map, no clusters
  PutFixed32(&seed, 0);
  PutFixed32(&seed, 4);

  auto r = OpenOrDie(seed);
  CHECK(r->index_section_ignored());
  CHECK(r->blocks().empty());
  REQUIRE(r->node_count() == n);
  REQUIRE(r->edge_count() == ref->edge_count());
  CHECK(r->session_count() == ref->session_count());
  for (uint32_t i = 0; i < n; ++i) {
    CHECK(r->content(i) == ref->content(i));
    CHECK(r->meta(i) == ref->meta(i));
    CHECK((r->vector(i) == nullptr) == (ref->vector(i) == nullptr));
    CHECK(r->out_begin(i) == ref->out_begin(i));
    CHECK(r->out_end(i) == ref->out_end(i));
    REQUIRE(r->in_degree(i) == ref->in_degree(i));
    for (uint32_t k = r->in_begin(i); k < r->in_end(i); ++k) CHECK(r->in_edge(k) == ref->in_edge(k));
  }
  for (uint8_t t = 0; t < kNodeTypeCount; ++t) CHECK(r->NodesOfType(t) == ref->NodesOfType(t));
  for (uint32_t k = 0; k < n; ++k) CHECK(r->time_entry(k).node == ref->time_entry(k).node);
  for (uint32_t k = 0; k < r->session_count(); ++k) {
    CHECK(r->session_range(k).begin == ref->session_range(k).begin);
    CHECK(r->session_range(k).end == ref->session_range(k).end);
  }
  CHECK(r->relation_name(kTemporalNext) == "temporal_next");
  CHECK(r->Verify().ok());
  TouchEverything(*r);

  // Only a file without feature flags gets this leniency: amem's own files (any
  // feature bit) must have an index section that parses.
  Header flagged = h;
  flagged.features = kFeatureChecksum;
  std::string bad;
  flagged.EncodeTo(&bad);
  bad.append(seed, Header::kEncodedLength);
  CHECK(Reader::OpenBuffer(bad).status().IsCorruption());
}

TEST_CASE("Open reports missing and non-snapshot files", "[snapshot][reader]") {
  auto r = Reader::Open("/nonexistent/dir/x.amem");
  CHECK(r.status().IsIOError());
  CHECK(Reader::OpenBuffer("").status().IsCorruption());
  CHECK(Reader::OpenBuffer(std::string(200, 'x')).status().IsCorruption());
}

TEST_CASE("Checksum block detects a changed content byte", "[snapshot][reader]") {
  std::string bytes = Build(SmallState());
  Header h;
  REQUIRE(h.DecodeFrom(bytes).ok());
  bytes[h.content_offset + h.content_length / 2] ^= 0x10;
  auto r = Reader::OpenBuffer(bytes);
  if (r.ok()) {
    Status v = (*r)->Verify();
    CHECK(v.IsCorruption());
    TouchEverything(**r);
    ReadOptions o;
    o.verify_checksum = true;
    CHECK(Reader::OpenBuffer(bytes, o).status().IsCorruption());
  } else {
    CHECK(r.status().IsCorruption());
  }
}

}  // namespace amem::snapshot
