// Reader::CheckIndexes and Reader::ContentStatus (the reliability audit, defects 5 and 6): a
// damaged index block or content frame that still opens is reported, never turned
// into a wrong answer; FindSession's cost follows the data, not a declared count.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstring>
#include <string>

#include "common/coding.h"
#include "snapshot/reader.h"
#include "snapshot/writer.h"
#include "tests/snapshot/snapshot_test_util.h"
#include "tests/snapshot/test_state.h"

namespace amem::snapshot {
namespace {

// Without the page checksums block, which would report each change below where it
// is read (FORMAT.md §8.22): these checks are what files without it (and
// `amem verify`, which does not check pages at open) rely on.
std::string SmallFile() {
  auto b = BuildSnapshot(snapshot_test::SmallState(), {.page_checksums = false});
  REQUIRE(b.ok());
  return std::move(b).value();
}

// Offset of the body of block `tag` in `bytes`.
size_t BodyOf(const std::string& bytes, BlockTag tag) {
  auto r = Reader::OpenBuffer(bytes);
  REQUIRE(r.ok());
  for (const BlockInfo& b : (*r)->blocks()) {
    if (b.tag == static_cast<uint32_t>(tag)) return b.offset + kBlockHeaderLength;
  }
  FAIL("no block " << static_cast<uint32_t>(tag));
  return 0;
}

// Opens `bytes` (which must still open: only index content changed) and returns
// CheckIndexes' verdict; every accessor is also walked (ASan: no crash either way).
Status CheckDamaged(const std::string& bytes) {
  auto r = Reader::OpenBuffer(bytes);
  INFO(r.status().ToString());
  REQUIRE(r.ok());
  (void)snapshot_test::TouchEverything(**r);
  Status s = (*r)->CheckIndexes();
  CHECK((*r)->CheckIndexes().ToString() == s.ToString());  // cached, same verdict
  if (!s.ok()) {
    CHECK((*r)->Verify().IsCorruption());
    ReadOptions o;
    o.check_indexes = true;
    CHECK(Reader::OpenBuffer(bytes, o).status().IsCorruption());
  }
  return s;
}

void Swap32(std::string* bytes, size_t a, size_t b) {
  uint32_t x = DecodeFixed32(bytes->data() + a), y = DecodeFixed32(bytes->data() + b);
  EncodeFixed32(bytes->data() + a, y);
  EncodeFixed32(bytes->data() + b, x);
}

}  // namespace

TEST_CASE("CheckIndexes accepts what the writer writes", "[snapshot][hardening]") {
  const std::string bytes = SmallFile();
  auto r = Reader::OpenBuffer(bytes);
  REQUIRE(r.ok());
  CHECK((*r)->CheckIndexes().ok());
  CHECK((*r)->Verify().ok());
  ReadOptions o;
  o.check_indexes = true;
  CHECK(Reader::OpenBuffer(bytes, o).ok());
  // Without extensions the indexes are rebuilt, and pass too.
  auto plain = BuildSnapshot(snapshot_test::SmallState(),
                             {.term_index = false, .extensions = false, .checksum = false});
  REQUIRE(plain.ok());
  auto p = Reader::OpenBuffer(*plain);
  REQUIRE(p.ok());
  CHECK((*p)->CheckIndexes().ok());
}

TEST_CASE("A damaged index block that still opens is Corruption, not a wrong answer",
          "[snapshot][hardening]") {
  const std::string good = SmallFile();
  auto r = Reader::OpenBuffer(good);
  REQUIRE(r.ok());
  const size_t n = (*r)->node_count(), m = (*r)->edge_count();
  REQUIRE(n > 4);
  REQUIRE(m > 4);
  std::string bad = good;
  std::string where;

  SECTION("key order reversed") {
    const size_t body = BodyOf(good, BlockTag::kNodeKeys);
    for (size_t k = 0; k < n / 2; ++k) Swap32(&bad, body + 4 * k, body + 4 * (n - 1 - k));
    where = "node keys";
    // Before the check, FindKey trusted the order and missed keys that exist.
    auto d = Reader::OpenBuffer(bad);
    REQUIRE(d.ok());
    size_t missed = 0;
    for (uint32_t i = 0; i < n; ++i) missed += !(*d)->FindKey((*r)->key(i)).has_value();
    CHECK(missed > 0);
  }
  SECTION("key order names one node twice") {
    const size_t body = BodyOf(good, BlockTag::kNodeKeys);
    EncodeFixed32(bad.data() + body, DecodeFixed32(bad.data() + body + 4));
    where = "node keys";
  }
  SECTION("id order swapped") {
    const size_t body = BodyOf(good, BlockTag::kNodeIds) + 8 * n;
    Swap32(&bad, body, body + 4 * (n - 1));
    where = "node ids";
  }
  SECTION("an id that is not its key's") {
    const size_t body = BodyOf(good, BlockTag::kNodeIds);
    bad[body + 3] ^= 0x40;
    where = "node ids";
  }
  SECTION("in-edge list rotated") {
    const size_t list = BodyOf(good, BlockTag::kInIndex) + 4 * (n + 1);
    std::rotate(bad.begin() + static_cast<long>(list), bad.begin() + static_cast<long>(list + 4),
                bad.begin() + static_cast<long>(list + 4 * m));
    where = "in index";
  }
  SECTION("type bitsets zeroed") {
    const size_t body = BodyOf(good, BlockTag::kTypeIndex);
    const size_t slots = DecodeFixed32(bad.data() + body);
    std::memset(bad.data() + body + 4, 0, slots * ((n + 7) / 8));
    where = "type index";
  }
  SECTION("a node in two types' sets") {
    const size_t body = BodyOf(good, BlockTag::kTypeIndex);
    bad[body + 4] = static_cast<char>(0xFF);  // type 0's first eight nodes
    where = "type index";
  }
  SECTION("a time entry that is not its node's created_ts") {
    // Still sorted (the first entry only moves earlier), so it opens.
    const size_t body = BodyOf(good, BlockTag::kTimeIndex) + 4;
    EncodeFixed64(bad.data() + body, DecodeFixed64(bad.data() + body) - 1);
    where = "time index";
  }
  INFO(where);
  REQUIRE(bad != good);
  Status s = CheckDamaged(bad);
  CHECK(s.IsCorruption());
  CHECK(s.ToString().find(where) != std::string::npos);
}

TEST_CASE("ContentStatus reports a content frame that does not decode",
          "[snapshot][hardening]") {
  std::string bytes = SmallFile();
  Header h;
  REQUIRE(h.DecodeFrom(bytes).ok());
  bytes[h.content_offset + h.content_length / 2] ^= 0x10;
  auto r = Reader::OpenBuffer(bytes);
  REQUIRE(r.ok());
  CHECK((*r)->ContentStatus().ok());  // not needed yet
  CHECK((*r)->CheckIndexes().ok());   // indexes are intact
  CHECK((*r)->content(0).empty());    // reads as "" ...
  CHECK((*r)->ContentStatus().IsCorruption());  // ... and says why
  CHECK((*r)->ContentStatus().ToString().find("content block") != std::string::npos);

  auto fine = Reader::OpenBuffer(SmallFile());
  REQUIRE(fine.ok());
  CHECK(!(*fine)->content(0).empty());
  CHECK((*fine)->ContentStatus().ok());
}

TEST_CASE("FindSession of a file without run names parses the run",
          "[snapshot][hardening]") {
  // A plain (seed-layout) file whose header declares many more sessions than its
  // nodes use: FindSession must not scan them (the fuzzer's 40 s input).
  auto built = BuildSnapshot(snapshot_test::SmallState(),
                             {.term_index = false, .extensions = false, .checksum = false});
  REQUIRE(built.ok());
  std::string bytes = *built;
  Header h;
  REQUIRE(h.DecodeFrom(bytes).ok());
  h.session_count = 60000;
  h.flags &= static_cast<uint16_t>(~kFlagHasIndexes);  // no session index to match
  std::string head;
  h.EncodeTo(&head);
  bytes.replace(0, head.size(), head);
  auto r = Reader::OpenBuffer(bytes);
  INFO(r.status().ToString());
  REQUIRE(r.ok());
  REQUIRE((*r)->session_count() == 60000);
  for (uint32_t s = 0; s < (*r)->session_count(); ++s) {
    auto f = (*r)->FindSession((*r)->session_run(s));
    REQUIRE(f.has_value());
    REQUIRE(*f == s);
  }
  CHECK(!(*r)->FindSession("60000").has_value());
  CHECK(!(*r)->FindSession("007").has_value());
  CHECK(!(*r)->FindSession("12x").has_value());
  CHECK(!(*r)->FindSession("99999999999").has_value());
}

}  // namespace amem::snapshot
