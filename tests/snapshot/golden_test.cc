// The golden file tests/data/small.amem: the writer reproduces it byte for byte and
// every later reader opens it. Regenerate (only together with a format change in
// docs/FORMAT.md, snapshot/format.h and kFormatVersion) with
//   AMEM_REGENERATE_GOLDEN=1 ./build/amem_tests "[golden]"
// The corruption sweep flips and truncates every byte of it.
#include <catch2/catch.hpp>
#include <cstdlib>

#include "snapshot/reader.h"
#include "snapshot/writer.h"
#include "tests/snapshot/snapshot_test_util.h"
#include "tests/snapshot/test_state.h"

namespace amem::snapshot {
namespace {

const std::string kGoldenPath = std::string(AMEM_SOURCE_DIR) + "/tests/data/small.amem";

std::string Golden() {
  std::string bytes = snapshot_test::ReadFileBytes(kGoldenPath);
  REQUIRE(!bytes.empty());
  return bytes;
}

}  // namespace

TEST_CASE("Writer reproduces the golden file", "[snapshot][golden]") {
  auto built = BuildSnapshot(snapshot_test::SmallState());
  REQUIRE(built.ok());
  if (std::getenv("AMEM_REGENERATE_GOLDEN")) {
    REQUIRE(WriteFileAtomic(kGoldenPath, *built).ok());
  }
  std::string golden = Golden();
  CHECK(golden.size() == built->size());
  CHECK(golden == *built);
}

TEST_CASE("Golden file opens and verifies", "[snapshot][golden]") {
  auto r = Reader::Open(kGoldenPath, ReadOptions{true, false});
  INFO(r.status().ToString());
  REQUIRE(r.ok());
  CHECK((*r)->node_count() == 14);
  CHECK((*r)->edge_count() == 18);
  CHECK((*r)->version() == 1);
  auto i = (*r)->FindKey("fact:ünïcödé");
  REQUIRE(i.has_value());
  CHECK((*r)->content(*i) == "Grüße 日本語 テキスト — naïve café");
}

TEST_CASE("Every single-byte flip of the golden file is caught", "[snapshot][golden][corruption]") {
  const std::string golden = Golden();
  size_t at_open = 0, at_verify = 0;
  for (size_t pos = 0; pos < golden.size(); ++pos) {
    for (unsigned char mask : {0x01, 0x80}) {
      std::string bytes = golden;
      bytes[pos] = static_cast<char>(bytes[pos] ^ mask);
      auto r = Reader::OpenBuffer(bytes);
      if (!r.ok()) {
        INFO("byte " << pos << ": " << r.status().ToString());
        CHECK(r.status().IsCorruption());
        ++at_open;
        continue;
      }
      snapshot_test::TouchEverything(**r);
      Status v = (*r)->Verify();
      INFO("byte " << pos << " mask " << int(mask) << " opened and verified");
      CHECK(v.IsCorruption());
      ++at_verify;
    }
  }
  CHECK(at_open + at_verify == 2 * golden.size());
  CHECK(at_open > 0);
}

TEST_CASE("Every truncation of the golden file fails at open", "[snapshot][golden][corruption]") {
  const std::string golden = Golden();
  for (size_t len = 0; len < golden.size(); ++len) {
    auto r = Reader::OpenBuffer(std::string_view(golden).substr(0, len));
    INFO("length " << len);
    CHECK(r.status().IsCorruption());
  }
}

TEST_CASE("Hostile header lengths are rejected without allocating", "[snapshot][corruption]") {
  std::string golden = Golden();
  Header h;
  REQUIRE(h.DecodeFrom(golden).ok());
  auto patched = [&](auto edit) {
    Header c = h;
    edit(c);
    std::string out;
    c.EncodeTo(&out);
    out.append(golden, Header::kEncodedLength);
    return Reader::OpenBuffer(out).status();
  };
  CHECK(patched([](Header& c) { c.node_count = 0xFFFFFFFFu; }).IsCorruption());
  CHECK(patched([](Header& c) { c.edge_count = 0xFFFFFFFFu; }).IsCorruption());
  CHECK(patched([](Header& c) { c.content_offset = ~0ull - 3; }).IsCorruption());
  CHECK(patched([](Header& c) { c.content_length = ~0ull; }).IsCorruption());
  CHECK(patched([](Header& c) { c.content_uncompressed = 0xFFFFFFFFu; }).IsCorruption());
  CHECK(patched([](Header& c) { c.vector_offset = ~0ull; }).IsCorruption());
  CHECK(patched([](Header& c) { c.index_offset = ~0ull - 7; }).IsCorruption());
  CHECK(patched([](Header& c) { c.dimension = 0; }).IsCorruption());
  CHECK(patched([](Header& c) { c.dimension = 0xFFFF; }).IsCorruption());
  CHECK(patched([](Header& c) { c.features = 0; }).IsCorruption());
  CHECK(patched([](Header& c) { c.version = 2; }).IsCorruption());
}

}  // namespace amem::snapshot
