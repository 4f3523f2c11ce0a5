// The lazy reader (docs/FORMAT.md §9): a file with amem's blocks opens without
// reading its records; each structure is checked when first read, and each page it
// reads against the page checksums (§8.22); damage read gives a blank answer and a
// sticky Corruption, never a different answer.
#include <catch2/catch.hpp>

#include <atomic>
#include <set>
#include <string>
#include <vector>

#include "common/coding.h"
#include "common/hash.h"
#include "snapshot/internal/emitter.h"
#include "snapshot/reader.h"
#include "snapshot/writer.h"
#include "tests/sanitizer.h"
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

// SmallState and 240 more nodes with their edges: a file of several pages, most
// of which an open does not read (the small file's two pages each hold a block
// header, so its open checks them both).
StoreState PagedState() {
  StoreState s = snapshot_test::SmallState();
  constexpr int kMore = 240;
  auto key = [](int k) { return "fact:page-" + std::to_string(k); };
  for (int k = 0; k < kMore; ++k) {
    NodeRecord n = snapshot_test::MakeNode(
        key(k), NodeType::kFact,
        "note " + std::to_string(k) + " on pages and checksums " + std::string(k % 40, 'x'), 5000 + k);
    n.confidence = static_cast<float>(k % 10) / 10.0f;
    n.run = k % 5 ? "run-p" : "";
    n.scope = k % 3 ? "proj" : "";
    n.updated_ts = 6000 + k;
    if (k % 7 == 0) n.vector = {0.1f * static_cast<float>(k), 1.0f, -1.0f, 0.5f};
    s.nodes.push_back(std::move(n));
    EdgeRecord e = snapshot_test::MakeEdge(key(k), static_cast<RelationId>(k % kBuiltinRelationCount),
                                           key((k + kMore - 1) % kMore), 7000 + k);
    if (k % 4 == 0) e.payload = R"({"page":")" + std::to_string(k) + "\"}";
    s.edges.push_back(std::move(e));
    s.edges.push_back(snapshot_test::MakeEdge(
        key(k), static_cast<RelationId>((k + 5) % kBuiltinRelationCount), key((k + 13) % kMore), 8000 + k));
  }
  return s;
}

// What amem writes: with the checksum and the page checksums blocks.
std::string PagedFile(const StoreState& state, bool page_checksums = true) {
  auto b = BuildSnapshot(state, {.page_checksums = page_checksums});
  REQUIRE(b.ok());
  return std::move(b).value();
}

std::string PagedSmallFile(bool page_checksums = true) {
  return PagedFile(snapshot_test::SmallState(), page_checksums);
}

// Flips every `stride`-th byte of `good` (XOR 0xFF, and XOR 0x01 half a stride
// further on), reads each lazily
// with every accessor over every element and compares every answer in full with
// the undamaged file's: each flip must fail the open, or report Corruption in
// ReadStatus(), or answer exactly the same. Returns the flips that answered
// differently with ReadStatus() OK.
std::vector<std::string> UnreportedFlips(const std::string& good, size_t stride) {
  const std::string want = snapshot_test::AllAnswers(*snapshot_test::OpenOrDie(good));
  std::vector<std::string> unreported;
  for (uint8_t mask : {0xFF, 0x01}) {
    for (size_t at = mask == 0xFF ? 0 : stride / 2; at < good.size(); at += stride) {
      std::string bytes = good;
      bytes[at] = static_cast<char>(bytes[at] ^ mask);
      auto r = Reader::OpenBuffer(bytes);
      if (!r.ok()) {
        INFO("byte " << at << " ^ " << int{mask} << ": " << r.status().ToString());
        CHECK((r.status().IsCorruption() || r.status().IsNotSupported()));
        continue;
      }
      const std::string got = snapshot_test::AllAnswers(**r);
      const Status status = (*r)->ReadStatus();
      INFO("byte " << at << " ^ " << int{mask} << ": " << status.ToString());
      CHECK((status.ok() || status.IsCorruption()));
      if (status.ok() && got != want) {
        unreported.push_back("byte " + std::to_string(at) + " ^ " + std::to_string(mask));
      }
    }
  }
  return unreported;
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

TEST_CASE("Warm and CheckRecords stop when asked; what they did not reach is checked when read",
          "[snapshot][reader][lazy]") {
  const std::string good = PagedFile(PagedState());
  const std::string want = snapshot_test::AllAnswers(*snapshot_test::OpenOrDie(good));
  std::atomic<bool> stop{true};
  {
    auto r = Reader::OpenBuffer(good);
    REQUIRE(r.ok());
    CHECK((*r)->Warm(&stop).IsAborted());
    CHECK((*r)->CheckRecords(&stop).IsAborted());
    CHECK((*r)->DecodeAllContent(&stop).IsAborted());
    CHECK((*r)->ReadStatus().ok());  // stopping is no damage
    CHECK(snapshot_test::AllAnswers(**r) == want);
    stop = false;  // and a later warming goes to its end
    CHECK((*r)->Warm(&stop).ok());
    CHECK((*r)->Warm().ok());
  }
  // A damaged node record past the stop: not found by the stopped warming, found
  // when read, and by a warming that is not stopped.
  std::string bytes = good;
  const uint32_t n = snapshot_test::OpenOrDie(good)->node_count();
  bytes[NodeRecordOffset(n - 1) + NodeEntry::kReservedOffset] = 7;
  stop = true;
  auto r = Reader::OpenBuffer(bytes);
  REQUIRE(r.ok());
  CHECK((*r)->Warm(&stop).IsAborted());
  CHECK((*r)->ReadStatus().ok());
  CHECK((*r)->confidence(n - 1) == 0.0f);  // blank, not the damaged record
  CHECK((*r)->ReadStatus().IsCorruption());
  auto again = Reader::OpenBuffer(bytes);
  REQUIRE(again.ok());
  CHECK((*again)->Warm().IsCorruption());
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
  SECTION("the run names' order") {
    // Few names: checked whole at the first search of them, then probed one
    // name at a time; out of order, each probe checks its neighbours again.
    REQUIRE(clean->RunsSorted());
    for (uint32_t s = 0; s < clean->session_count(); ++s) {
      CHECK(clean->FindSession(clean->session_run(s)) == std::optional<uint32_t>(s));
    }
    CHECK_FALSE(clean->FindSession("run-zz").has_value());
    std::string bytes = good;
    const size_t names = bytes.find("run-arun-b", body(BlockTag::kRuns));
    REQUIRE(names != std::string::npos);
    std::swap(bytes[names + 4], bytes[names + 9]);  // run-b, run-a
    auto r = snapshot_test::OpenOrDie(bytes);
    CHECK_FALSE(r->RunsSorted());
    CHECK_FALSE(r->FindSession("run-a").has_value());  // found nothing ...
    CHECK_THAT(r->ReadStatus().ToString(), Catch::Contains("runs"));  // ... and says why
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

TEST_CASE("Warm checks the term order; out of order, the term searches check their probes",
          "[snapshot][reader][lazy]") {
  const std::string good = LazySmallFile();
  auto clean = snapshot_test::OpenOrDie(good);
  CHECK_FALSE(clean->TermsSorted());  // an open reads no term
  REQUIRE(clean->Warm().ok());
  CHECK(clean->TermsSorted());
  REQUIRE(clean->term_count() > 2);
  for (uint32_t t = 0; t < clean->term_count(); ++t) {
    CHECK(clean->FindTerm(clean->term(t)) == std::optional<uint32_t>(t));
  }
  CHECK_FALSE(clean->FindTerm("zzzz-none").has_value());
  CHECK(clean->HasTermStartingWith(""));
  CHECK(clean->ReadStatus().ok());
  // The first term's first byte raised above every other (no page checksums):
  // Warm leaves the probes checking, and the search that reaches it says so.
  const std::string first(clean->term(0)), second(clean->term(1));
  std::string bytes = good;
  const size_t at = bytes.find(first + second);
  REQUIRE(at != std::string::npos);
  bytes[at] = '\x7f';
  auto r = snapshot_test::OpenOrDie(bytes);
  (void)r->Warm();  // what it returns is not the point here: the probes after it are
  CHECK_FALSE(r->TermsSorted());
  CHECK_FALSE(r->HasTermStartingWith(""));  // found nothing ...
  CHECK_THAT(r->ReadStatus().ToString(), Catch::Contains("term index"));  // ... and says why
}

TEST_CASE("More than 65,536 run names: their order is known once CheckIndexes has passed",
          "[snapshot][reader][lazy]") {
  // Too many to read whole at the first search, so each probe checks its
  // neighbours until the full index check has read them all in order.
  StoreState s;
  constexpr int kRuns = 65537 + 3;
  auto run = [](int k) {
    std::string digits = std::to_string(k);
    return "run-" + std::string(6 - digits.size(), '0') + digits;
  };
  for (int k = 0; k < kRuns; ++k) {
    NodeRecord n = snapshot_test::MakeNode("fact:r" + std::to_string(k), NodeType::kFact, "n", 1000 + k);
    n.run = run(k);
    s.nodes.push_back(std::move(n));
  }
  auto built = BuildSnapshot(s, {.checksum = false});
  REQUIRE(built.ok());
  auto r = snapshot_test::OpenOrDie(*built);
  REQUIRE(r->session_count() > 65536);
  CHECK_FALSE(r->RunsSorted());
  CHECK(r->FindSession(run(65536)).has_value());  // found by probes that check their neighbours
  CHECK_FALSE(r->FindSession("run-x").has_value());
  CHECK_FALSE(r->RunsSorted());
  REQUIRE(r->CheckIndexes().ok());
  CHECK(r->RunsSorted());
  for (int k : {0, 1, 4242, 65536, kRuns - 1}) {
    auto found = r->FindSession(run(k));
    REQUIRE(found.has_value());
    CHECK(r->session_run(*found) == run(k));
  }
  CHECK(r->ReadStatus().ok());
}

TEST_CASE("Every flipped byte read lazily answers as the whole check or is Corruption",
          "[snapshot][reader][lazy]") {
  // Without extensions, with them, and with the page checksums as amem writes.
  const std::string files[] = {LazySmallFile(true), LazySmallFile(false), PagedSmallFile()};
  for (const std::string& good : files) {
    const bool extensions = &good != &files[1];
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

TEST_CASE("With page checksums no flipped byte gives a different answer without Corruption",
          "[snapshot][reader][lazy][pages]") {
  // The guarantee of the page checksums (docs/FORMAT.md §9): a damaged byte that
  // a query reads is Corruption, never a different answer. Every byte of the
  // small file (whose two pages an open checks, each holding a block header), and
  // every 11th of an 88 KB file (most of whose pages are checked on first read).
  // Under the sanitizers every 3rd and every 61st byte: each flip opens and reads
  // the whole file, and the Release build sweeps every byte.
  const size_t thin = testing::kSanitizerBuild ? 3 : 1;
  const std::vector<std::string> small = UnreportedFlips(PagedSmallFile(), thin);
  INFO(small.size() << " flips answered differently without Corruption, first: "
                    << (small.empty() ? "" : small[0]));
  CHECK(small.empty());
  const std::string paged = PagedFile(PagedState());
  REQUIRE(paged.size() > 8 * PageChecksumBlock::kPageSize);
  const std::vector<std::string> larger = UnreportedFlips(paged, testing::kSanitizerBuild ? 61 : 11);
  INFO(larger.size() << " flips of the larger file answered differently without Corruption, first: "
                     << (larger.empty() ? "" : larger[0]));
  CHECK(larger.empty());
  // Without the block the same sweep finds flips that change an answer unreported
  // (a confidence, a timestamp, a byte of a key: only Verify() saw those), so the
  // sweep can see what the pages catch.
  CHECK(UnreportedFlips(PagedSmallFile(/*page_checksums=*/false), thin).size() > 20 / thin);
}

TEST_CASE("A changed value that still fits is reported where it is read",
          "[snapshot][reader][lazy][pages]") {
  const std::string good = PagedFile(PagedState());
  auto clean = snapshot_test::OpenOrDie(good);
  const uint32_t n = clean->node_count();
  REQUIRE(NodeRecordOffset(n - 1) >= 3 * PageChecksumBlock::kPageSize);  // a page open does not read
  // Node n-1's confidence, still in 0..1: the structure checks accept it.
  auto damage = [&](std::string bytes) {
    char* c = bytes.data() + NodeRecordOffset(n - 1) + NodeEntry::kConfidenceOffset;
    EncodeFloat(c, DecodeFloat(c) == 0.5f ? 0.25f : 0.5f);
    return bytes;
  };
  const std::string bytes = damage(good);
  auto r = snapshot_test::OpenOrDie(bytes);  // the records are not read at open
  CHECK(r->ReadStatus().ok());
  CHECK(r->confidence(n - 1) == 0.0f);  // blank, not the changed value
  CHECK_THAT(r->ReadStatus().ToString(), Catch::Contains("page checksums"));
  CHECK(r->CheckRecords().IsCorruption());
  CHECK(Reader::OpenBuffer(bytes, {.check_records = true}).status().IsCorruption());
  // Reads elsewhere in the file are not blocked by the damaged page.
  auto other = snapshot_test::OpenOrDie(bytes);
  CHECK(other->key(0) == clean->key(0));
  CHECK(other->ReadStatus().ok());

  // A file written without the block (as amem wrote before it) still opens and is
  // checked as before: the structure lazily, a changed value only by Verify().
  const std::string old_bytes = damage(PagedFile(PagedState(), /*page_checksums=*/false));
  auto old_file = snapshot_test::OpenOrDie(old_bytes);
  CHECK_FALSE(old_file->features() & kFeaturePageChecksums);
  CHECK(old_file->confidence(n - 1) != clean->confidence(n - 1));
  CHECK(old_file->ReadStatus().ok());
  CHECK(old_file->CheckRecords().ok());
  CHECK(old_file->Verify().IsCorruption());
}

TEST_CASE("Open records nothing for the content frame's pages and counts them without a walk",
          "[snapshot][reader][lazy][pages]") {
  // docs/FORMAT.md §9: open costs the same at any file size. The pages wholly
  // inside a compressed content frame count as good without a verdict written for
  // each: open's records are the few pages it reads, fewer than the frame's.
  StoreState s = snapshot_test::SmallState();
  for (int k = 0; k < 200; ++k) {
    std::string text;  // hex of a hash chain: LZ4 cannot shrink it much
    for (uint64_t h = Hash64(std::to_string(k)); text.size() < 400; h = Hash64(&h, sizeof(h), 1)) {
      static constexpr char kHex[] = "0123456789abcdef";
      for (int d = 0; d < 16; ++d) text += kHex[(h >> (4 * d)) & 15];
    }
    s.nodes.push_back(snapshot_test::MakeNode("fact:frame-" + std::to_string(k), NodeType::kFact, text, 9000 + k));
  }
  const std::string bytes = PagedFile(s);
  Header h;
  REQUIRE(h.DecodeFrom(bytes).ok());
  REQUIRE((h.flags & kFlagCompressed));
  constexpr uint64_t kPage = PageChecksumBlock::kPageSize;
  const uint64_t frame_first = (h.content_offset + 19 + kPage - 1) / kPage;  // past the frame's header
  const uint64_t frame_last = (h.content_offset + h.content_length) / kPage;
  REQUIRE(frame_last >= frame_first + 16);
  const uint32_t frame_pages = static_cast<uint32_t>(frame_last - frame_first);

  auto r = snapshot_test::OpenOrDie(bytes);
  uint64_t paged = 0;
  for (const BlockInfo& b : r->blocks()) {
    if (b.tag == static_cast<uint32_t>(BlockTag::kPageChecksums)) paged = b.offset;
  }
  const uint32_t page_count = PageChecksumBlock::PageCount(paged);
  const uint32_t at_open = r->PagesRecorded();
  CHECK(at_open > 0);  // the header's page at least
  CHECK(at_open < frame_pages);
  CHECK(r->PagesLeft() == page_count - frame_pages - at_open);
  // Content reads go through the frame's decoder; the node records they read have
  // their pages hashed, the frame's pages still none.
  std::multiset<std::string> got;
  for (uint32_t i = 0; i < r->node_count(); ++i) got.emplace(r->content(i));
  for (size_t k = s.nodes.size() - 200; k < s.nodes.size(); ++k) CHECK(got.count(s.nodes[k].content) == 1);
  CHECK(r->ReadStatus().ok());
  CHECK(r->PagesRecorded() > at_open);
  CHECK(r->PagesRecorded() + r->PagesLeft() + frame_pages == page_count);
  // The full check hashes every other page, and never a frame page.
  CHECK(r->CheckRecords().ok());
  CHECK(r->PagesLeft() == 0);
  CHECK(r->PagesRecorded() == page_count - frame_pages);
  // A changed byte inside the frame is still found, by the frame's own checksums.
  std::string damaged = bytes;
  damaged[(frame_first + frame_pages / 2) * kPage + 100] ^= 0x01;
  auto d = snapshot_test::OpenOrDie(damaged);
  for (uint32_t i = 0; i < d->node_count(); ++i) (void)d->content(i);
  CHECK(d->ReadStatus().IsCorruption());
  CHECK(d->Verify().IsCorruption());
}

TEST_CASE("The doc lengths are summed and checked on first use, not at open",
          "[snapshot][reader][lazy][pages]") {
  // 3,000 nodes: 12 KB of doc lengths, whose middle page holds nothing else.
  StoreState s = PagedState();
  for (int k = 0; s.nodes.size() < 3000; ++k) {
    s.nodes.push_back(snapshot_test::MakeNode("fact:len-" + std::to_string(k), NodeType::kFact,
                                              std::string("words ") + std::string(k % 7, 'w'), 20000 + k));
  }
  const std::string good = PagedFile(s);
  auto clean = snapshot_test::OpenOrDie(good);
  size_t body = 0;
  for (const BlockInfo& b : clean->blocks()) {
    if (b.tag == static_cast<uint32_t>(BlockTag::kDocLengths)) body = b.offset + kBlockHeaderLength;
  }
  REQUIRE(body > 0);
  const uint32_t mid = clean->node_count() / 2;
  std::string bytes = good;  // a node's length, one more: still a length
  EncodeFixed32(bytes.data() + body + 4 * size_t{mid}, DecodeFixed32(good.data() + body + 4 * size_t{mid}) + 1);
  auto r = snapshot_test::OpenOrDie(bytes);  // open does not read them
  CHECK(r->ReadStatus().ok());
  CHECK(r->average_doc_length() == 0);  // blank, not the changed sum
  CHECK(r->doc_length(mid) == 0);
  CHECK_THAT(r->ReadStatus().ToString(), Catch::Contains("page checksums"));
  // Undamaged: the sum of the lengths, whichever accessor comes first.
  auto a = snapshot_test::OpenOrDie(good), b = snapshot_test::OpenOrDie(good);
  uint64_t sum = 0;
  for (uint32_t i = 0; i < b->node_count(); ++i) sum += b->doc_length(i);
  CHECK(sum > 0);
  CHECK(a->average_doc_length() == Approx(static_cast<double>(sum) / a->node_count()));
  CHECK(b->average_doc_length() == a->average_doc_length());
  CHECK((a->ReadStatus().ok() && b->ReadStatus().ok()));
}

TEST_CASE("The page checksums block must match the bytes before it",
          "[snapshot][reader][pages]") {
  const std::string good = PagedFile(PagedState());
  auto clean = snapshot_test::OpenOrDie(good);
  CHECK(clean->features() & kFeaturePageChecksums);
  size_t body = 0, pos = 0;
  for (const BlockInfo& b : clean->blocks()) {
    if (b.tag == static_cast<uint32_t>(BlockTag::kPageChecksums)) {
      body = b.offset + kBlockHeaderLength;
      pos = b.offset;
    }
  }
  REQUIRE(body > 0);
  CHECK(DecodeFixed32(good.data() + body) == PageChecksumBlock::kPageSize);
  CHECK(DecodeFixed32(good.data() + body + 4) == PageChecksumBlock::PageCount(pos));
  // Each hash is the XXH3-64 of its page.
  for (uint32_t k = 0; k * uint64_t{4096} < pos; ++k) {
    const size_t len = std::min<size_t>(4096, pos - size_t{k} * 4096);
    CHECK(DecodeFixed64(good.data() + body + 8 + 8 * k) == Hash64(good.data() + size_t{k} * 4096, len, 0));
  }
  std::string bytes = good;
  EncodeFixed32(bytes.data() + body, 8192);
  CHECK_THAT(Reader::OpenBuffer(bytes).status().ToString(), Catch::Contains("page checksums"));
  bytes = good;
  EncodeFixed32(bytes.data() + body + 4, DecodeFixed32(good.data() + body + 4) + 1);
  CHECK_THAT(Reader::OpenBuffer(bytes).status().ToString(), Catch::Contains("page checksums"));
  // The feature bit and the block go together.
  bytes = good;
  EncodeFixed32(bytes.data() + Header::kFeaturesOffset,
                DecodeFixed32(good.data() + Header::kFeaturesOffset) & ~kFeaturePageChecksums);
  CHECK(Reader::OpenBuffer(bytes).status().IsCorruption());
  // Without the checksum block no page checksums are written either (a delta's
  // node file: the delta's checksum covers it).
  auto bare = BuildSnapshot(snapshot_test::SmallState(), {.checksum = false});
  REQUIRE(bare.ok());
  CHECK_FALSE(snapshot_test::OpenOrDie(*bare)->features() & kFeaturePageChecksums);
}

TEST_CASE("The emitter hashes pages as the bytes stream, in either mode",
          "[snapshot][writer][pages]") {
  for (bool background : {false, true}) {
    std::string out;
    StringSink sink(&out);
    std::vector<uint64_t> pages;
    {
      Emitter e(&sink, background);
      e.HashPages(PageChecksumBlock::kPageSize);
      // Small appends, pieces that cross pages, and pieces large enough to bypass
      // the buffer (handed to the thread in background mode).
      std::string big(3 << 20, '\0');
      for (size_t k = 0; k < big.size(); ++k) big[k] = static_cast<char>(k * 2654435761u >> 13);
      e.PutFixed32(7);
      e.Append(std::string_view(big).substr(0, 5000));
      e.AppendStable(std::string_view(big).substr(0, big.size() - 123));
      e.AppendZeros(10000);
      e.Append(std::string_view(big).substr(17, 700000));
      pages = e.TakePageHashes();
      e.PutFixed64(99);  // after: not hashed by pages
      REQUIRE(e.Flush().ok());
    }
    const uint64_t paged = out.size() - 8;
    REQUIRE(pages.size() == PageChecksumBlock::PageCount(paged));
    for (size_t k = 0; k < pages.size(); ++k) {
      const size_t len = std::min<size_t>(4096, paged - k * 4096);
      INFO("page " << k << (background ? " (background)" : ""));
      CHECK(pages[k] == Hash64(out.data() + k * 4096, len, 0));
    }
  }
}

}  // namespace amem::snapshot
