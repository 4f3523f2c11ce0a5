// The golden file tests/data/small.amem: the writer reproduces it byte for byte and
// every later reader opens it. Regenerate (only together with a format change in
// docs/FORMAT.md, snapshot/format.h and kFormatVersion) with
//   AMEM_REGENERATE_GOLDEN=1 ./build/amem_tests "[golden]"
// The corruption sweep flips and truncates every byte of it.
#include <catch2/catch.hpp>
#include <cstdlib>
#include <memory>

#include "snapshot/reader.h"
#include "snapshot/writer.h"
#include "tests/snapshot/snapshot_test_util.h"
#include "tests/snapshot/test_state.h"
#include "tests/test_paths.h"

namespace amem::snapshot {
namespace {

const std::string kGoldenPath = std::string(AMEM_SOURCE_DIR) + "/tests/data/small.amem";

std::string Golden() {
  std::string bytes = snapshot_test::ReadFileBytes(kGoldenPath);
  REQUIRE(!bytes.empty());
  return bytes;
}

// tests/data/NAME, the golden file as an earlier amem wrote it: it opens and
// verifies in this reader, and it is the golden state written with `options`,
// byte for byte.
std::unique_ptr<Reader> EarlierGolden(const std::string& name, const WriterOptions& options) {
  const std::string path = std::string(AMEM_SOURCE_DIR) + "/tests/data/" + name;
  auto r = Reader::Open(path);
  INFO(name << ": " << r.status().ToString());
  REQUIRE(r.ok());
  CHECK((*r)->Verify().ok());
  auto built = BuildSnapshot(snapshot_test::SmallState(), options);
  REQUIRE(built.ok());
  CHECK(*built == snapshot_test::ReadFileBytes(path));
  return std::move(*r);
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
  CHECK((*r)->version() == kFormatVersion);
  auto i = (*r)->FindKey("fact:ünïcödé");
  REQUIRE(i.has_value());
  CHECK((*r)->content(*i) == "Grüße 日本語 テキスト — naïve café");
}

TEST_CASE("A golden file written before the page checksums opens and verifies",
          "[snapshot][golden][pages]") {
  // tests/data/small-no-page-checksums.amem: small.amem as amem wrote it before
  // block 0x1E (FORMAT.md §8.22). It opens in this reader, checked as before.
  // The same state written without the block is that file, byte for byte; with
  // it, the golden file is that file plus the block (and its feature bit and
  // checksum).
  auto r = EarlierGolden("small-no-page-checksums.amem",
                         {.entity_search = false, .page_checksums = false});
  CHECK_FALSE(r->features() & kFeaturePageChecksums);
  CHECK(r->has_checksum());
  auto with_pages = BuildSnapshot(snapshot_test::SmallState(), {.entity_search = false});
  REQUIRE(with_pages.ok());
  auto current = Reader::OpenBuffer(*with_pages);
  REQUIRE(current.ok());
  CHECK((*current)->features() == (r->features() | kFeaturePageChecksums));
  CHECK(snapshot_test::AllAnswers(**current) == snapshot_test::AllAnswers(*r));
}

TEST_CASE("A golden file written before the entity search block opens and verifies",
          "[snapshot][golden]") {
  // tests/data/small-no-entity-search.amem: small.amem as amem wrote it before
  // block 0x07 (FORMAT.md §8.23). It opens in this reader, with no entity search
  // (the memory server builds its search in memory instead).
  // The same state written without the block is that file, byte for byte; the
  // golden file has the block, and its feature bit, besides.
  auto r = EarlierGolden("small-no-entity-search.amem", {.entity_search = false});
  CHECK_FALSE(r->has_entity_search());
  CHECK(r->search_entity_count() == 0);
  auto current = Reader::Open(kGoldenPath);
  REQUIRE(current.ok());
  CHECK((*current)->features() == (r->features() | kFeatureEntitySearch | kFeatureEntityLabels));
  CHECK((*current)->has_entity_search());
  CHECK((*current)->search_entity_count() > 0);
}

TEST_CASE("A golden file written before the entity labels block opens and verifies",
          "[snapshot][golden]") {
  // tests/data/small-no-entity-labels.amem: small.amem as amem wrote it before
  // block 0x08 (FORMAT.md §8.24). It opens in this reader, with its entity search
  // and no list of odd labels (the memory server scans the entities instead).
  // The same state written without the block is that file, byte for byte; the
  // golden file has the block, and its feature bit, besides.
  auto r = EarlierGolden("small-no-entity-labels.amem", {.entity_labels = false});
  CHECK(r->has_entity_search());
  CHECK_FALSE(r->search_odd_labels().has_value());
  CHECK(r->ReadStatus().ok());
  auto current = Reader::Open(kGoldenPath);
  REQUIRE(current.ok());
  CHECK((*current)->features() == (r->features() | kFeatureEntityLabels));
  CHECK((*current)->search_entity_count() == r->search_entity_count());
  const auto odd = (*current)->search_odd_labels();
  REQUIRE(odd.has_value());
  CHECK(odd->size() == r->search_entity_count());  // its one entity's content is not its name
}

// Flips every byte of [begin, end) of the golden file (XOR 0xFF, and XOR 0x01 so a
// one-bit change is covered too). Each flipped file fails at open with Corruption,
// or opens, survives every accessor and fails Verify().
static void FlipSweep(size_t part, size_t parts) {
  const std::string golden = Golden();
  const size_t begin = golden.size() * part / parts, end = golden.size() * (part + 1) / parts;
  for (size_t pos = begin; pos < end; ++pos) {
    for (unsigned char mask : {0xFF, 0x01}) {
      std::string bytes = golden;
      bytes[pos] = static_cast<char>(bytes[pos] ^ mask);
      auto r = Reader::OpenBuffer(bytes);
      if (!r.ok()) {
        INFO("byte " << pos << ": " << r.status().ToString());
        // The version field may read as a newer format (NotSupported).
        const bool version_byte = pos >= Header::kVersionOffset && pos < Header::kVersionOffset + 2;
        CHECK((r.status().IsCorruption() || (version_byte && r.status().IsNotSupported())));
        continue;
      }
      snapshot_test::TouchEverything(**r);
      INFO("byte " << pos << " mask " << int(mask) << " opened; Verify() must fail");
      CHECK((*r)->Verify().IsCorruption());
    }
  }
}

TEST_CASE("Flipping any byte of the golden file is caught (part 1/4)", "[snapshot][golden][corruption]") {
  FlipSweep(0, 4);
}
TEST_CASE("Flipping any byte of the golden file is caught (part 2/4)", "[snapshot][golden][corruption]") {
  FlipSweep(1, 4);
}
TEST_CASE("Flipping any byte of the golden file is caught (part 3/4)", "[snapshot][golden][corruption]") {
  FlipSweep(2, 4);
}
TEST_CASE("Flipping any byte of the golden file is caught (part 4/4)", "[snapshot][golden][corruption]") {
  FlipSweep(3, 4);
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
  CHECK(patched([](Header& c) { c.version = kFormatVersion + 1; }).IsNotSupported());
  CHECK(patched([](Header& c) { c.version = 0; }).IsCorruption());
}

}  // namespace amem::snapshot
