// The lazy reader (docs/FORMAT.md §9): a file with amem's blocks opens without
// reading its records; each structure is checked when first read; damage read
// gives a blank answer and a sticky Corruption, never a different answer.
#include <catch2/catch.hpp>

#include <string>

#include "common/coding.h"
#include "snapshot/reader.h"
#include "snapshot/writer.h"
#include "tests/snapshot/snapshot_test_util.h"
#include "tests/snapshot/test_state.h"

namespace amem::snapshot {
namespace {

std::string LazySmallFile(bool extensions = true) {
  auto b = BuildSnapshot(snapshot_test::SmallState(),
                         {.extensions = extensions, .checksum = false});
  REQUIRE(b.ok());
  return std::move(b).value();
}

size_t NodeRecordOffset(uint32_t i) { return Header::kEncodedLength + size_t{i} * NodeEntry::kEncodedLength; }

}  // namespace

TEST_CASE("A damaged node record opens, reads blank and is reported when read",
          "[snapshot][reader][lazy]") {
  std::string bytes = LazySmallFile();
  const uint32_t n = snapshot_test::OpenOrDie(bytes)->node_count();
  REQUIRE(n > 2);
  bytes[NodeRecordOffset(n - 1) + NodeEntry::kReservedOffset] = 7;  // reserved bytes must be zero
  auto r = Reader::OpenBuffer(bytes);
  REQUIRE(r.ok());  // the records are not read at open
  CHECK((*r)->ReadStatus().ok());
  CHECK((*r)->content(0).empty());  // node 0 shares the damaged chunk: blank too
  CHECK((*r)->ReadStatus().IsCorruption());
  CHECK_THAT((*r)->ReadStatus().ToString(), Catch::Contains("node record " + std::to_string(n - 1)));
  CHECK((*r)->confidence(n - 1) == 0.0f);  // blank, not the damaged record
  CHECK((*r)->CheckRecords().IsCorruption());
  CHECK((*r)->Verify().IsCorruption());
  // Checked whole at open, as before.
  CHECK(Reader::OpenBuffer(bytes, {.check_records = true}).status().IsCorruption());
  // A file without amem's blocks is checked whole at open, as before.
  std::string plain = LazySmallFile(/*extensions=*/false);
  plain[NodeRecordOffset(n - 1) + NodeEntry::kReservedOffset] = 7;
  CHECK_THAT(Reader::OpenBuffer(plain).status().ToString(), Catch::Contains("node record"));
}

TEST_CASE("Damaged adjacency, time and order entries are reported when read",
          "[snapshot][reader][lazy]") {
  const std::string good = LazySmallFile();
  auto clean = snapshot_test::OpenOrDie(good);
  const uint32_t n = clean->node_count(), m = clean->edge_count();
  REQUIRE(m > 2);
  auto body = [&](BlockTag tag) -> size_t {
    for (const BlockInfo& b : clean->blocks()) {
      if (b.tag == static_cast<uint32_t>(tag)) return b.offset + kBlockHeaderLength;
    }
    FAIL("no block");
    return 0;
  };
  const uint32_t src = clean->edge_source(0);
  SECTION("an edge record") {
    std::string bytes = good;
    EncodeFixed32(bytes.data() + NodeRecordOffset(n) + EdgeEntry::kTargetOffset, n + 5);  // edge 0
    auto r = snapshot_test::OpenOrDie(bytes);
    CHECK(r->edge_target(0) == 0);  // blank
    CHECK_THAT(r->ReadStatus().ToString(), Catch::Contains("edge record 0"));
  }
  SECTION("an out offset") {
    std::string bytes = good;
    const size_t at = body(BlockTag::kOutIndex) + 4 * (size_t{src} + 1);
    EncodeFixed32(bytes.data() + at, DecodeFixed32(bytes.data() + at) - 1);  // drops src's last edge
    auto r = snapshot_test::OpenOrDie(bytes);
    CHECK(r->out_degree(src) == 0);  // blank: no edges, never one fewer
    CHECK_THAT(r->ReadStatus().ToString(), Catch::Contains("out index"));
  }
  SECTION("an in-list entry") {
    std::string bytes = good;
    const size_t list = body(BlockTag::kInIndex) + 4 * (size_t{n} + 1);
    const uint32_t tgt = clean->edge_target(clean->in_edge(0));
    EncodeFixed32(bytes.data() + list, DecodeFixed32(bytes.data() + list) == 0 ? 1 : 0);
    auto r = snapshot_test::OpenOrDie(bytes);
    CHECK(r->in_degree(tgt) == 0);
    CHECK_THAT(r->ReadStatus().ToString(), Catch::Contains("in index"));
  }
  SECTION("a time entry") {
    std::string bytes = good;
    const size_t first = body(BlockTag::kTimeIndex) + 4;
    EncodeFixed64(bytes.data() + first, DecodeFixed64(bytes.data() + first) + 1);
    auto r = snapshot_test::OpenOrDie(bytes);
    CHECK(r->time_entry(0).ts == 0);
    CHECK_THAT(r->ReadStatus().ToString(), Catch::Contains("time index"));
  }
  SECTION("the key order") {
    std::string bytes = good;
    const size_t order = body(BlockTag::kNodeKeys);
    const uint32_t a = DecodeFixed32(bytes.data() + order), b = DecodeFixed32(bytes.data() + order + 4);
    EncodeFixed32(bytes.data() + order, b);
    EncodeFixed32(bytes.data() + order + 4, a);
    auto r = snapshot_test::OpenOrDie(bytes);
    CHECK_FALSE(r->FindKey(clean->key(a)).has_value());  // found nothing ...
    CHECK_THAT(r->ReadStatus().ToString(), Catch::Contains("node keys"));  // ... and says why
  }
  SECTION("a term directory entry") {
    std::string bytes = good;
    REQUIRE(clean->term_count() > 1);
    const size_t entry1 = body(BlockTag::kTermIndex) + 8 + kTermEntryLength;
    EncodeFixed32(bytes.data() + entry1 + 4, 0xFFFFFF);  // term 1's postings begin
    auto r = snapshot_test::OpenOrDie(bytes);
    CHECK(r->postings(1).empty());
    CHECK_THAT(r->ReadStatus().ToString(), Catch::Contains("term index"));
  }
}

TEST_CASE("Every flipped byte read lazily answers as the whole check or is Corruption",
          "[snapshot][reader][lazy]") {
  for (bool extensions : {true, false}) {
    const std::string good = LazySmallFile(extensions);
    CHECK(snapshot_test::LazyAgreesWithEager(good).empty());
    for (uint8_t mask : {0xFF, 0x01}) {
      for (size_t at = 0; at < good.size(); ++at) {
        std::string bytes = good;
        bytes[at] = static_cast<char>(bytes[at] ^ mask);
        const std::string why = snapshot_test::LazyAgreesWithEager(bytes);
        INFO("byte " << at << " ^ " << int{mask} << (extensions ? "" : " (no extensions)"));
        CHECK(why.empty());
        if (!why.empty()) FAIL(why);
      }
    }
  }
}

TEST_CASE("check_records checks everything at open and leaves nothing pending",
          "[snapshot][reader][lazy]") {
  const std::string good = LazySmallFile();
  auto whole = Reader::OpenBuffer(good, {.check_records = true});
  REQUIRE(whole.ok());
  auto lazy = snapshot_test::OpenOrDie(good);
  CHECK(snapshot_test::TouchEverything(**whole) == snapshot_test::TouchEverything(*lazy));
  CHECK(lazy->ReadStatus().ok());
  CHECK(lazy->CheckRecords().ok());
  CHECK(lazy->Verify().ok());
}

}  // namespace amem::snapshot
