#include "snapshot/format.h"

#include <catch2/catch.hpp>
#include <string>

namespace amem::snapshot {

TEST_CASE("Header survives EncodeTo/DecodeFrom", "[snapshot][format]") {
  Header h;
  h.flags = kFlagHasVectors | kFlagCompressed;
  h.node_count = 0xFFFFFFFFu;
  h.edge_count = 7;
  h.dimension = 128;
  h.session_count = 3;
  h.content_offset = 1ull << 40;
  h.content_length = 12345;
  h.vector_offset = 0x0102030405060708ull;
  h.index_offset = 99;
  h.content_uncompressed = 0x80000001u;
  h.features = kFeatureTermIndex | kFeatureChecksum;
  std::string buf;
  h.EncodeTo(&buf);
  REQUIRE(buf.size() == Header::kEncodedLength);
  REQUIRE(buf.substr(0, 4) == "AMEM");
  Header d;
  REQUIRE(d.DecodeFrom(buf).ok());
  CHECK(d.flags == h.flags);
  CHECK(d.node_count == h.node_count);
  CHECK(d.edge_count == h.edge_count);
  CHECK(d.dimension == h.dimension);
  CHECK(d.session_count == h.session_count);
  CHECK(d.content_offset == h.content_offset);
  CHECK(d.content_length == h.content_length);
  CHECK(d.vector_offset == h.vector_offset);
  CHECK(d.index_offset == h.index_offset);
  CHECK(d.content_uncompressed == h.content_uncompressed);
  CHECK(d.features == h.features);

  for (size_t n = 0; n < buf.size(); ++n) {
    CHECK(d.DecodeFrom(std::string_view(buf).substr(0, n)).IsCorruption());
  }
  std::string bad = buf;
  bad[0] = 'X';
  CHECK(d.DecodeFrom(bad).IsCorruption());
  bad = buf;
  bad[Header::kVersionOffset] = kFormatVersion + 1;  // a newer format: maybe fine, not ours to read
  CHECK(d.DecodeFrom(bad).IsNotSupported());
  bad[Header::kVersionOffset] = 0;
  CHECK(d.DecodeFrom(bad).IsCorruption());
  bad = buf;
  bad[Header::kReservedOffset + 3] = 1;
  CHECK(d.DecodeFrom(bad).IsCorruption());
}

TEST_CASE("Node and edge records survive EncodeTo/DecodeFrom", "[snapshot][format]") {
  NodeEntry n;
  n.type = 10;
  n.session = 0xFFFFFFFFu;
  n.confidence = 0.25f;
  n.timestamp = -5;
  n.content_offset = 1ull << 33;
  n.content_length = 17;
  n.meta_offset = 4;
  n.meta_length = 9;
  std::string buf;
  n.EncodeTo(&buf);
  REQUIRE(buf.size() == NodeEntry::kEncodedLength);
  NodeEntry d;
  REQUIRE(d.DecodeFrom(buf).ok());
  CHECK(d.type == 10);
  CHECK(d.session == n.session);
  CHECK(d.confidence == 0.25f);
  CHECK(d.timestamp == -5);
  CHECK(d.content_offset == n.content_offset);
  CHECK(d.content_length == 17);
  CHECK(d.vector_offset == kNone);
  CHECK(d.meta_offset == 4);
  CHECK(d.meta_length == 9);
  buf[NodeEntry::kReservedOffset + 11] = 1;
  CHECK(d.DecodeFrom(buf).IsCorruption());

  EdgeEntry e{0x01020304u, 5, 200, -1.5f};
  std::string eb;
  e.EncodeTo(&eb);
  REQUIRE(eb.size() == EdgeEntry::kEncodedLength);
  EdgeEntry de;
  de.DecodeFrom(eb.data());
  CHECK(de.source == e.source);
  CHECK(de.target == 5);
  CHECK(de.rel == 200);
  CHECK(de.weight == -1.5f);
}

TEST_CASE("InBounds rejects overflowing extents", "[snapshot][format]") {
  CHECK(InBounds(0, 10, 10));
  CHECK(InBounds(10, 0, 10));
  CHECK_FALSE(InBounds(11, 0, 10));
  CHECK_FALSE(InBounds(1, 10, 10));
  CHECK_FALSE(InBounds(~0ull, 2, 10));
  CHECK_FALSE(InBounds(2, ~0ull, 10));
  CHECK(AlignUp(0, 8) == 0);
  CHECK(AlignUp(9, 8) == 16);
  CHECK(BlockName(0x05) == "term index");
  CHECK(BlockName(0x2a) == "block 0x2a");
}

}  // namespace amem::snapshot
