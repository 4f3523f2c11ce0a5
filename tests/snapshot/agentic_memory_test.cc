// snapshot/agentic_memory.cc: the reader of AgenticMemory's own files, on files
// from tests/snapshot/agentic_memory_writer.h, the golden empty file of the
// description, and damaged copies.
#include <catch2/catch.hpp>
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <tuple>
#include <vector>

#include "common/coding.h"
#include "snapshot/agentic_memory.h"
#include "tests/snapshot/agentic_memory_writer.h"
#include "tests/snapshot/snapshot_test_util.h"
#include "tests/test_paths.h"

namespace amem::snapshot::agentic {
namespace {

namespace aw = amem::agentic_test;

const std::string kDataDir = std::string(AMEM_SOURCE_DIR) + "/tests/data/agentic_memory/";

// The annotated 120-byte empty file (docs/AGENTIC_MEMORY.md §2.7), spelled out byte by byte.
std::string AnnotatedEmptyFile() {
  std::string b;
  b.append("AMEM", 4);
  PutFixed32(&b, 1);    // version
  PutFixed32(&b, 128);  // dimension
  PutFixed32(&b, 0);    // flags
  PutFixed64(&b, 0);    // N
  PutFixed64(&b, 0);    // E
  for (int i = 0; i < 4; ++i) PutFixed64(&b, 64);  // node, edge, content, fvec offsets
  b.push_back(0x01);  // type index, empty
  PutFixed64(&b, 0);
  b.push_back(0x02);  // temporal: count 0
  PutFixed64(&b, 8);
  PutFixed64(&b, 0);
  b.push_back(0x03);  // session: count 0 (u32)
  PutFixed64(&b, 4);
  PutFixed32(&b, 0);
  b.push_back(0x04);  // cluster map: k 0, dim 128
  PutFixed64(&b, 8);
  PutFixed32(&b, 0);
  PutFixed32(&b, 128);
  return b;
}

File MustParse(const std::string& bytes) {
  Result<File> f = Parse(bytes);
  INFO(f.status().ToString());
  REQUIRE(f.ok());
  return std::move(*f);
}

// The error of a damaged copy; it must be Corruption.
std::string ErrorOf(const std::string& bytes) {
  Result<File> f = Parse(bytes);
  REQUIRE(!f.ok());
  CHECK(f.status().IsCorruption());
  return f.status().ToString();
}

// Byte offset of node record i / edge record j in a file of `g`.
size_t NodeAt(size_t i) { return kHeaderLength + i * kNodeRecordLength; }
size_t EdgeAt(const aw::Graph& g, size_t j) {
  return kHeaderLength + g.nodes.size() * kNodeRecordLength + j * kEdgeRecordLength;
}

void CheckMatchesGraph(const File& f, const aw::Graph& g) {
  REQUIRE(f.nodes.size() == g.nodes.size());
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const Node& n = f.nodes[i];
    const aw::Node& w = g.nodes[i];
    CHECK(n.id == w.id);
    CHECK(n.event_type == w.event_type);
    CHECK(n.created_at == w.created_at);
    CHECK(n.session == w.session);
    CHECK(n.confidence == w.confidence);
    CHECK(n.access_count == w.access_count);
    CHECK(n.last_accessed == w.last_accessed);
    CHECK(n.decay_score == w.decay_score);
    CHECK(n.content == w.content);
    CHECK(n.vector == w.vector);
  }
  REQUIRE(f.edges.size() == g.edges.size());
  auto sorted = [](std::vector<Edge> edges) {
    auto key = [](const Edge& e) {
      return std::make_tuple(e.source, e.target, e.edge_type, e.weight, e.created_at);
    };
    std::sort(edges.begin(), edges.end(),
              [&](const Edge& a, const Edge& b) { return key(a) < key(b); });
    return edges;
  };
  const std::vector<Edge> got = sorted(f.edges), want = sorted(g.edges);
  for (size_t j = 0; j < got.size(); ++j) {
    CHECK(got[j].source == want[j].source);
    CHECK(got[j].target == want[j].target);
    CHECK(got[j].edge_type == want[j].edge_type);
    CHECK(got[j].weight == want[j].weight);
    CHECK(got[j].created_at == want[j].created_at);
  }
}

}  // namespace

TEST_CASE("AgenticMemory golden empty file matches the description byte by byte",
          "[agentic][golden]") {
  const std::string annotated = AnnotatedEmptyFile();
  REQUIRE(annotated.size() == 120);
  const std::string golden = snapshot_test::ReadFileBytes(kDataDir + "v1_empty.amem");
  CHECK(golden == annotated);
  CHECK(aw::Write(aw::Graph{}) == annotated);
  CHECK(MatchHeader(golden) == HeaderMatch::kYes);
  File f = MustParse(golden);
  CHECK(f.version == 1);
  CHECK(f.dimension == 128);
  CHECK(f.flags == 0);
  CHECK(f.nodes.empty());
  CHECK(f.edges.empty());
  CHECK(f.sessions.empty());
  REQUIRE(f.index.size() == 4);
  CHECK(f.index[0].offset == 0x40);
  CHECK(f.index[1].offset == 0x49);
  CHECK(f.index[2].offset == 0x5A);
  CHECK(f.index[3].offset == 0x67);
}

TEST_CASE("AgenticMemory v1 and v0.1 files parse into what was written", "[agentic]") {
  for (uint32_t version : {0u, 1u}) {
    for (bool matches : {false, true}) {
      aw::Graph g = aw::SampleGraph(version);
      g.lz4_matches = matches;
      INFO("version " << version << " lz4 matches " << matches);
      const std::string bytes = aw::Write(g);
      CHECK(MatchHeader(bytes) == HeaderMatch::kYes);
      File f = MustParse(bytes);
      CHECK(f.version == version);
      CHECK(f.flags == (version == 1 ? kKnownFlags : 0u));
      CHECK(f.index.size() == (version == 1 ? 6u : 4u));
      CHECK(f.dimension == 4);
      CHECK(f.sessions == std::vector<uint32_t>{1, 2, 3});
      CHECK(f.vector_count == 5);
      CHECK(f.content_uncompressed == [&] {
        uint64_t total = 0;
        for (const aw::Node& n : g.nodes) total += n.content.size();
        return total;
      }());
      // The file's edges are sorted by (source, target): compared in one order.
      CheckMatchesGraph(f, g);
      CHECK(f.edges.front().source == 0);
      if (matches) CHECK(f.content_bytes < 20000);  // the 64 KiB content compressed
    }
  }
}

TEST_CASE("AgenticMemory header detection tells the layouts apart", "[agentic]") {
  const std::string amem_own =
      snapshot_test::ReadFileBytes(std::string(AMEM_SOURCE_DIR) + "/tests/data/small.amem");
  REQUIRE(!amem_own.empty());
  CHECK(MatchHeader(amem_own) == HeaderMatch::kNo);
  CHECK(MatchHeader("AMEM") == HeaderMatch::kNo);
  std::string bytes = aw::Write(aw::SampleGraph());
  CHECK(MatchHeader(bytes) == HeaderMatch::kYes);
  std::string bad = bytes;
  EncodeFixed64(bad.data() + HeaderLayout::kNodeCount, 1000000);
  CHECK(MatchHeader(bad) == HeaderMatch::kClaimed);
  bad = bytes;
  EncodeFixed32(bad.data() + HeaderLayout::kVersion, 2);
  CHECK(MatchHeader(bad) == HeaderMatch::kNo);
  Result<File> f = Parse(bad);
  REQUIRE(!f.ok());
  CHECK(f.status().IsNotSupported());
}

TEST_CASE("AgenticMemory damaged files give errors naming record and byte",
          "[agentic][corruption]") {
  aw::Graph g = aw::SampleGraph();
  const std::string good = aw::Write(g);
  MustParse(good);
  auto damaged = [&](size_t at, char value) {
    std::string b = good;
    b[at] = value;
    return ErrorOf(b);
  };
  std::string e = damaged(NodeAt(3) + NodeLayout::kEventType, 9);
  CHECK(e.find("node record 3 (id 3, byte " + std::to_string(NodeAt(3) + 8) + ")") !=
        std::string::npos);
  CHECK(e.find("unknown event type 9") != std::string::npos);

  e = damaged(EdgeAt(g, 2) + EdgeLayout::kEdgeType, 7);
  CHECK(e.find("edge record 2 (byte " + std::to_string(EdgeAt(g, 2) + 16) + ")") !=
        std::string::npos);
  CHECK(e.find("unknown edge type 7") != std::string::npos);

  e = damaged(EdgeAt(g, 4) + EdgeLayout::kTarget, 42);
  CHECK(e.find("edge record 4") != std::string::npos);
  CHECK(e.find("target id 42 is not a node") != std::string::npos);

  // Node 0's content "The store is LMDB": prefix, token, one length byte, literals.
  const uint64_t content = DecodeFixed64(good.data() + HeaderLayout::kContent);
  e = damaged(content + 6, static_cast<char>(0xFF));
  CHECK(e.find("node record 0") != std::string::npos);
  CHECK(e.find("not valid UTF-8") != std::string::npos);
  CHECK(e.find("byte " + std::to_string(content)) != std::string::npos);

  // A 4 GiB size prefix is refused before anything is allocated.
  std::string b = good;
  EncodeFixed32(b.data() + content, 0xFFFFFFFFu);
  e = ErrorOf(b);
  CHECK(e.find("size prefix 4294967295") != std::string::npos);
  // A prefix LZ4 could not produce from the block, under amem's limit.
  EncodeFixed32(b.data() + content, 100000);
  CHECK(ErrorOf(b).find("more than a") != std::string::npos);
  // A prefix that disagrees with the block.
  EncodeFixed32(b.data() + content, 18);
  CHECK(ErrorOf(b).find("not an LZ4 block") != std::string::npos);

  // Huge counts.
  b = good;
  EncodeFixed64(b.data() + HeaderLayout::kNodeCount, uint64_t{1} << 62);
  CHECK(ErrorOf(b).find("node count") != std::string::npos);
  b = good;
  EncodeFixed64(b.data() + HeaderLayout::kEdgeCount, std::numeric_limits<uint64_t>::max());
  CHECK(ErrorOf(b).find("edge count") != std::string::npos);
  b = good;
  EncodeFixed32(b.data() + HeaderLayout::kDimension, 0xFFFFFFFFu);
  CHECK(ErrorOf(b).find("dimension") != std::string::npos);

  // A content offset that does not follow the previous block.
  b = good;
  EncodeFixed64(b.data() + NodeAt(2) + NodeLayout::kContentOffset, 3);
  CHECK(ErrorOf(b).find("content offset 3") != std::string::npos);

  // Values amem cannot store.
  b = good;
  EncodeFloat(b.data() + NodeAt(1) + NodeLayout::kConfidence,
              std::numeric_limits<float>::quiet_NaN());
  CHECK(ErrorOf(b).find("confidence") != std::string::npos);
  b = good;
  EncodeFloat(b.data() + EdgeAt(g, 0) + EdgeLayout::kWeight,
              std::numeric_limits<float>::infinity());
  CHECK(ErrorOf(b).find("weight") != std::string::npos);

  // Duplicate ids.
  b = good;
  EncodeFixed64(b.data() + NodeAt(4) + NodeLayout::kId, 1);
  CHECK(ErrorOf(b).find("id 1 is used twice") != std::string::npos);

  // Unknown flags; short files.
  b = good;
  EncodeFixed32(b.data() + HeaderLayout::kFlags, 0x10);
  CHECK(ErrorOf(b).find("unknown flags 0x10") != std::string::npos);
  CHECK(ErrorOf(good.substr(0, 63)).find("needs 64") != std::string::npos);
}

TEST_CASE("AgenticMemory: every cut of a v1 file is an error", "[agentic][corruption]") {
  aw::Graph g = aw::SampleGraph();
  g.nodes[7].content = "short again";  // keep the sweep quick
  const std::string good = aw::Write(g);
  MustParse(good);
  for (size_t n = 0; n < good.size(); ++n) {
    Result<File> f = Parse(std::string_view(good).substr(0, n));
    INFO("cut at " << n);
    REQUIRE(!f.ok());
    CHECK(f.status().IsCorruption());
  }
}

TEST_CASE("AgenticMemory: flipping any byte never crashes", "[agentic][corruption]") {
  aw::Graph g = aw::SampleGraph(1, 2);
  g.nodes[7].content = "flip me";
  const std::string good = aw::Write(g);
  size_t failed = 0;
  for (size_t i = 0; i < good.size(); ++i) {
    for (uint8_t mask : {0x01, 0x80}) {
      std::string b = good;
      b[i] = static_cast<char>(b[i] ^ mask);
      Result<File> f = Parse(b);
      if (!f.ok()) {
        ++failed;
        CHECK((f.status().IsCorruption() || f.status().IsNotSupported()));
      }
    }
  }
  CHECK(failed > good.size() / 4);
}

}  // namespace amem::snapshot::agentic
