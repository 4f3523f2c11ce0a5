// The content block is decompressed block by block (docs/FORMAT.md §6): a text is
// read after decoding only the LZ4 blocks it lies in, each block once, from any
// thread; a damaged block spoils only its own texts and is reported (each block's
// checksum); frames the block walk does not take (no block checksums, linked
// blocks, blocks shorter than the maximum, ...) are decompressed whole, as before.
#include <catch2/catch.hpp>
#include <lz4.h>
#include <lz4frame.h>
#include <xxhash.h>

#include <cstring>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "common/coding.h"
#include "common/hash.h"
#include "snapshot/reader.h"
#include "snapshot/writer.h"
#include "tests/snapshot/snapshot_test_util.h"
#include "tests/snapshot/test_state.h"

namespace amem::snapshot {
namespace {

constexpr uint32_t kNodes = 30000;

// 30K nodes of ~300 bytes (~9 MB of text: 64 KB blocks, texts straddling the
// boundaries), every third with metadata.
const StoreState& BigState() {
  static const StoreState state = [] {
    StoreState s;
    s.dimension = 8;
    std::mt19937 rnd(7);
    const char* words[] = {"lmdb", "snapshot", "retry", "policy", "cache", "graph",
                           "memory", "block", "frame", "query", "node", "edge"};
    for (uint32_t k = 0; k < kNodes; ++k) {
      std::string text = "node " + std::to_string(k);
      while (text.size() < 280) {
        text += ' ';
        text += words[rnd() % 12];
        text += std::to_string(rnd() % 1000);
      }
      NodeRecord n = snapshot_test::MakeNode("fact:k" + std::to_string(k), NodeType::kFact,
                                             std::move(text), 1000 + k);
      if (k % 3 == 0) n.meta = R"({"k":")" + std::to_string(k) + R"("})";
      s.nodes.push_back(std::move(n));
    }
    return s;
  }();
  return state;
}

std::string Build(bool compress) {
  WriterOptions o;
  o.compress = compress;
  auto b = BuildSnapshot(BigState(), o);
  REQUIRE(b.ok());
  return std::move(b).value();
}

const std::string& Compressed() {
  static const std::string bytes = Build(true);
  return bytes;
}
const std::string& Raw() {
  static const std::string bytes = Build(false);
  return bytes;
}

Header HeaderOf(const std::string& bytes) {
  Header h;
  REQUIRE(h.DecodeFrom(bytes).ok());
  return h;
}

void PutHeader(const Header& h, std::string* bytes) {
  std::string enc;
  h.EncodeTo(&enc);
  REQUIRE(enc.size() == Header::kEncodedLength);
  bytes->replace(0, enc.size(), enc);
}

// Rewrites the page checksums and the checksum block over the changed bytes, so
// that the reads and Verify() look at the content frame.
void Reseal(std::string* bytes) {
  snapshot_test::RedoPageChecksums(bytes);
  auto r = Reader::OpenBuffer(*bytes);
  REQUIRE(r.ok());
  for (const BlockInfo& b : (*r)->blocks()) {
    if (b.tag != static_cast<uint32_t>(BlockTag::kChecksum)) continue;
    std::string sum;
    PutFixed64(&sum, Hash64(bytes->data(), b.offset, 0));
    bytes->replace(b.offset + kBlockHeaderLength, 8, sum);
    return;
  }
  FAIL("no checksum block");
}

// Offsets (in the file) of the data of each block of the content frame.
std::vector<size_t> BlockData(const std::string& bytes) {
  const Header h = HeaderOf(bytes);
  const char* f = bytes.data() + h.content_offset;
  size_t pos = 4 + 2 + ((f[4] & 0x08) ? 8 : 0) + 1;
  std::vector<size_t> out;
  for (;;) {
    uint32_t word;
    std::memcpy(&word, f + pos, 4);
    pos += 4;
    if (word == 0) break;
    out.push_back(h.content_offset + pos);
    pos += (word & 0x7FFFFFFF) + ((f[4] & 0x10) ? 4 : 0);
  }
  return out;
}

// The raw content block, from the uncompressed build.
std::string RawContent() {
  const Header h = HeaderOf(Raw());
  return Raw().substr(h.content_offset, h.content_length);
}

// The uncompressed build with its content block replaced by `frame` (flag bit 2
// set): the frame must be shorter than the raw block, whose place it takes.
std::string WithFrame(const std::string& frame) {
  std::string bytes = Raw();
  Header h = HeaderOf(bytes);
  REQUIRE(frame.size() <= h.content_length);
  bytes.replace(h.content_offset, frame.size(), frame);
  h.content_length = frame.size();
  h.flags |= kFlagCompressed;
  PutHeader(h, &bytes);
  Reseal(&bytes);
  return bytes;
}

// Frame preferences with the content size and content checksum (as amem writes).
LZ4F_preferences_t Prefs(size_t size) {
  LZ4F_preferences_t prefs;
  std::memset(&prefs, 0, sizeof(prefs));
  prefs.frameInfo.contentSize = size;
  prefs.frameInfo.contentChecksumFlag = LZ4F_contentChecksumEnabled;
  return prefs;
}

std::string Frame(const std::string& raw, const LZ4F_preferences_t& prefs, size_t chunk) {
  std::string out(LZ4F_compressBound(raw.size(), &prefs) * 2 + 64 + raw.size() / 1000, '\0');
  LZ4F_cctx* cctx = nullptr;
  REQUIRE(!LZ4F_isError(LZ4F_createCompressionContext(&cctx, LZ4F_VERSION)));
  size_t pos = LZ4F_compressBegin(cctx, out.data(), out.size(), &prefs);
  REQUIRE(!LZ4F_isError(pos));
  for (size_t at = 0; at < raw.size(); at += chunk) {
    const size_t n = std::min(chunk, raw.size() - at);
    size_t w = LZ4F_compressUpdate(cctx, out.data() + pos, out.size() - pos, raw.data() + at, n,
                                   nullptr);
    REQUIRE(!LZ4F_isError(w));
    pos += w;
  }
  size_t w = LZ4F_compressEnd(cctx, out.data() + pos, out.size() - pos, nullptr);
  REQUIRE(!LZ4F_isError(w));
  LZ4F_freeCompressionContext(cctx);
  out.resize(pos + w);
  return out;
}

// Every content and meta equal to the uncompressed build's, read in `order`.
void CheckAll(const Reader& r, const std::vector<uint32_t>& order) {
  auto raw = Reader::OpenBuffer(Raw());
  REQUIRE(raw.ok());
  REQUIRE(r.node_count() == (*raw)->node_count());
  size_t bad = 0;
  for (uint32_t i : order) {
    if (r.content(i) != (*raw)->content(i) || r.meta(i) != (*raw)->meta(i)) ++bad;
  }
  CHECK(bad == 0);
  CHECK(r.ContentStatus().ok());
}

std::vector<uint32_t> Reversed() {
  std::vector<uint32_t> order;
  for (uint32_t i = kNodes; i-- > 0;) order.push_back(i);
  return order;
}

TEST_CASE("Content is read block by block, equal to the whole frame", "[snapshot][content]") {
  const std::string& bytes = Compressed();
  const Header h = HeaderOf(bytes);
  REQUIRE(h.content_uncompressed > 8u << 20);
  REQUIRE(BlockData(bytes).size() == (h.content_uncompressed + 65535) / 65536);  // 64 KB blocks
  auto r = Reader::OpenBuffer(bytes);
  REQUIRE(r.ok());
  // Some text straddles a 64 KB boundary.
  bool straddles = false;
  auto raw = Reader::OpenBuffer(Raw());
  REQUIRE(raw.ok());
  const char* base = (*raw)->content(0).data();
  for (uint32_t i = 0; i < kNodes; ++i) {
    const uint64_t at = (*raw)->content(i).data() - base, end = at + (*raw)->content(i).size();
    if (end > at && (at >> 16) != ((end - 1) >> 16)) straddles = true;
  }
  CHECK(straddles);
  REQUIRE((*r)->EnsureContent().ok());
  CheckAll(**r, Reversed());  // the last block first
  CHECK((*r)->Verify().ok());

  auto again = Reader::OpenBuffer(bytes);
  REQUIRE(again.ok());
  REQUIRE((*again)->DecodeAllContent().ok());
  CheckAll(**again, Reversed());
}

// The writer compresses the texts a block at a time, without joining them first;
// the frame must be the one LZ4F_compressFrame makes of the joined texts, whose
// blocks are 64 KB.
TEST_CASE("The content frame is LZ4F_compressFrame's frame of the joined texts",
          "[snapshot][content]") {
  auto frame_of = [](std::string_view raw) {
    LZ4F_preferences_t prefs;
    std::memset(&prefs, 0, sizeof(prefs));
    prefs.frameInfo.blockSizeID = LZ4F_max64KB;
    prefs.frameInfo.blockMode = LZ4F_blockIndependent;
    prefs.frameInfo.contentChecksumFlag = LZ4F_contentChecksumEnabled;
    prefs.frameInfo.blockChecksumFlag = LZ4F_blockChecksumEnabled;
    prefs.frameInfo.contentSize = raw.size();
    std::string out(LZ4F_compressFrameBound(raw.size(), &prefs), '\0');
    const size_t n = LZ4F_compressFrame(out.data(), out.size(), raw.data(), raw.size(), &prefs);
    REQUIRE(!LZ4F_isError(n));
    out.resize(n);
    return out;
  };
  auto content_of = [](const std::string& file) {
    const Header h = HeaderOf(file);
    return file.substr(h.content_offset, h.content_length);
  };
  auto check = [&](const StoreState& state) {
    WriterOptions o;
    o.compress = false;
    auto raw = BuildSnapshot(state, o);
    REQUIRE(raw.ok());
    auto compressed = BuildSnapshot(state);
    REQUIRE(compressed.ok());
    const std::string texts = content_of(*raw);
    CHECK(content_of(*compressed) == frame_of(texts));
    return texts.size();
  };
  SECTION("many 64 KB blocks") { CHECK(check(BigState()) > 8u << 20); }
  // Sizes at and around each block size's limit, and an empty content.
  for (uint32_t size : {0u, 100u, 65536u, 65537u, 262144u, 262145u, 1048577u, 4194304u, 4194305u}) {
    INFO("content bytes " << size);
    StoreState s;
    s.dimension = 4;
    std::mt19937 rnd(size);
    std::string text(size, ' ');
    for (char& c : text) c = static_cast<char>('a' + rnd() % 8);
    // Split over two nodes, so a piece boundary falls inside a block.
    s.nodes.push_back(snapshot_test::MakeNode("fact:a", NodeType::kFact, text.substr(0, size / 3), 1));
    s.nodes.push_back(snapshot_test::MakeNode("fact:b", NodeType::kFact, text.substr(size / 3), 2));
    CHECK(check(s) == size);
  }
}

TEST_CASE("Content is read from several threads at once", "[snapshot][content]") {
  auto r = Reader::OpenBuffer(Compressed());
  REQUIRE(r.ok());
  auto raw = Reader::OpenBuffer(Raw());
  REQUIRE(raw.ok());
  std::vector<size_t> bad(6);
  std::vector<std::thread> threads;
  for (size_t t = 0; t < bad.size(); ++t) {
    threads.emplace_back([&, t] {
      for (uint32_t k = 0; k < kNodes; ++k) {
        // Each thread starts elsewhere, so blocks are first touched concurrently.
        const uint32_t i = static_cast<uint32_t>((k + t * 7919) % kNodes);
        if ((*r)->content(i) != (*raw)->content(i) || (*r)->meta(i) != (*raw)->meta(i)) ++bad[t];
      }
    });
  }
  for (auto& t : threads) t.join();
  for (size_t b : bad) CHECK(b == 0);
  CHECK((*r)->ContentStatus().ok());
}

TEST_CASE("A damaged block spoils only its own texts", "[snapshot][content]") {
  std::string bytes = Compressed();
  const std::vector<size_t> blocks = BlockData(bytes);
  REQUIRE(blocks.size() > 3);
  auto raw = Reader::OpenBuffer(Raw());
  REQUIRE(raw.ok());
  const uint32_t mid = kNodes / 2;  // ~4.5 MB into the texts
  const size_t damaged = ((*raw)->content(mid).data() - (*raw)->content(0).data()) >> 16;
  REQUIRE(damaged > 0);
  REQUIRE(damaged + 1 < blocks.size());
  // 0xFF tokens: literal runs far longer than the block, which LZ4 refuses.
  for (size_t k = 0; k < 16; ++k) bytes[blocks[damaged] + k] = '\xFF';
  Reseal(&bytes);
  auto r = Reader::OpenBuffer(bytes);
  REQUIRE(r.ok());
  CHECK((*r)->EnsureContent().ok());  // the frame and its block table are fine
  CHECK((*r)->content(0) == (*raw)->content(0));  // block 0
  CHECK((*r)->meta(0) == (*raw)->meta(0));
  CHECK((*r)->content(kNodes - 1) == (*raw)->content(kNodes - 1));  // meta in the last block
  CHECK((*r)->ContentStatus().ok());  // the damaged block not touched yet
  CHECK((*r)->content(mid).empty());
  CHECK((*r)->ContentStatus().IsCorruption());
  CHECK((*r)->ContentStatus().ToString().find("content block: block " + std::to_string(damaged) + " ") !=
        std::string::npos);
  CHECK((*r)->EnsureContent().IsCorruption());
  CHECK((*r)->content(0) == (*raw)->content(0));  // still read
  CHECK((*r)->Verify().IsCorruption());

  auto fresh = Reader::OpenBuffer(bytes);
  REQUIRE(fresh.ok());
  CHECK((*fresh)->Verify().IsCorruption());
  CHECK((*fresh)->DecodeAllContent().IsCorruption());
}

TEST_CASE("A changed byte is found by its block's checksum on first use",
          "[snapshot][content]") {
  std::string bytes = Compressed();
  const std::vector<size_t> blocks = BlockData(bytes);
  // The last byte of block 0's data, before its checksum and block 1's size: a
  // literal (LZ4 ends every block with them), which would decode unnoticed.
  bytes[blocks[1] - 9] ^= 0x01;
  Reseal(&bytes);
  auto r = Reader::OpenBuffer(bytes);
  REQUIRE(r.ok());
  auto raw = Reader::OpenBuffer(Raw());
  REQUIRE(raw.ok());
  CHECK((*r)->content(kNodes - 1) == (*raw)->content(kNodes - 1));
  CHECK((*r)->ContentStatus().ok());
  CHECK((*r)->content(0).empty());
  CHECK((*r)->ContentStatus().ToString().find("content block: block 0 checksum") !=
        std::string::npos);
  CHECK((*r)->Verify().IsCorruption());
}

TEST_CASE("A frame without block checksums is decoded whole, its checksum checked",
          "[snapshot][content]") {
  // What amem wrote before block checksums: a changed literal must still be
  // found on first use, so such a frame is not read block by block.
  const std::string raw = RawContent();
  LZ4F_preferences_t prefs = Prefs(raw.size());
  prefs.frameInfo.blockSizeID = LZ4F_max4MB;
  prefs.frameInfo.blockMode = LZ4F_blockIndependent;
  std::string bytes = WithFrame(Frame(raw, prefs, raw.size()));
  auto fine = Reader::OpenBuffer(bytes);
  REQUIRE(fine.ok());
  CheckAll(**fine, Reversed());
  CHECK((*fine)->Verify().ok());
  const std::vector<size_t> blocks = BlockData(bytes);
  REQUIRE(blocks.size() == 3);
  bytes[blocks[1] - 5] ^= 0x01;  // block 0's last literal
  Reseal(&bytes);
  auto r = Reader::OpenBuffer(bytes);
  REQUIRE(r.ok());
  CHECK((*r)->content(kNodes - 1).empty());
  CHECK((*r)->ContentStatus().IsCorruption());
  CHECK((*r)->Verify().IsCorruption());
}

TEST_CASE("A truncated content frame is Corruption", "[snapshot][content]") {
  for (int cut : {0, 1, 2, 3}) {
    std::string bytes = Compressed();
    Header h = HeaderOf(bytes);
    const uint64_t lengths[] = {5, 11, h.content_length / 2, h.content_length - 3};
    h.content_length = lengths[cut];
    PutHeader(h, &bytes);
    auto r = Reader::OpenBuffer(bytes);
    if (!r.ok()) {
      CHECK(r.status().IsCorruption());  // a frame header cut short fails at open
      continue;
    }
    INFO(cut);
    CHECK((*r)->content(0).empty());
    CHECK((*r)->ContentStatus().IsCorruption());
    CHECK((*r)->EnsureContent().IsCorruption());
    CHECK((*r)->Verify().IsCorruption());
  }
}

TEST_CASE("Other shapes of LZ4 frame read the same",
          "[snapshot][content]") {
  const std::string raw = RawContent();
  LZ4F_preferences_t prefs = Prefs(raw.size());
  SECTION("linked blocks") {
    prefs.frameInfo.blockSizeID = LZ4F_max64KB;
    prefs.frameInfo.blockMode = LZ4F_blockLinked;
    auto r = Reader::OpenBuffer(WithFrame(Frame(raw, prefs, 1 << 20)));
    REQUIRE(r.ok());
    CheckAll(**r, Reversed());
    CHECK((*r)->Verify().ok());
  }
  SECTION("blocks shorter than the maximum") {
    // Flushed every `chunk` bytes: as many blocks as 64 KB ones would need, but
    // each short, so block 1 does not start at 64 KB: found when decoding.
    prefs.frameInfo.blockSizeID = LZ4F_max64KB;
    prefs.frameInfo.blockMode = LZ4F_blockIndependent;
    prefs.frameInfo.blockChecksumFlag = LZ4F_blockChecksumEnabled;
    prefs.autoFlush = 1;
    const size_t count = (raw.size() + 65535) / 65536;
    const size_t chunk = (raw.size() + count - 1) / count;
    REQUIRE(chunk < 65536);
    std::string frame = Frame(raw, prefs, chunk);
    REQUIRE(BlockData(WithFrame(frame)).size() == count);
    auto r = Reader::OpenBuffer(WithFrame(frame));
    REQUIRE(r.ok());
    CHECK((*r)->EnsureContent().ok());
    CheckAll(**r, Reversed());
    CHECK((*r)->Verify().ok());
    // Also when a later block is the first one read.
    auto later = Reader::OpenBuffer(WithFrame(frame));
    REQUIRE(later.ok());
    CHECK(!(*later)->content(kNodes - 1).empty());
    CheckAll(**later, Reversed());
  }
  SECTION("independent 64 KB blocks with block checksums, no content checksum") {
    prefs.frameInfo.blockSizeID = LZ4F_max64KB;
    prefs.frameInfo.blockMode = LZ4F_blockIndependent;
    prefs.frameInfo.blockChecksumFlag = LZ4F_blockChecksumEnabled;
    prefs.frameInfo.contentChecksumFlag = LZ4F_noContentChecksum;
    std::string frame = Frame(raw, prefs, 1 << 20);
    auto r = Reader::OpenBuffer(WithFrame(frame));
    REQUIRE(r.ok());
    CheckAll(**r, Reversed());
    CHECK((*r)->Verify().ok());
    // A changed byte is caught by its block's checksum on first use.
    std::string bytes = WithFrame(frame);
    const std::vector<size_t> blocks = BlockData(bytes);
    REQUIRE(blocks.size() > 10);
    bytes[blocks[5] + 100] ^= 0x01;
    Reseal(&bytes);
    auto bad = Reader::OpenBuffer(bytes);
    REQUIRE(bad.ok());
    CHECK((*bad)->content(0) == (*r)->content(0));
    CHECK((*bad)->ContentStatus().ok());
    CHECK((*bad)->DecodeAllContent().IsCorruption());
    CHECK((*bad)->ContentStatus().ToString().find("checksum") != std::string::npos);
  }
  SECTION("blocks stored raw") {
    // Written by hand: 64 KB blocks with checksums, every third stored raw.
    std::string frame("\x04\x22\x4D\x18", 4);
    std::string desc;
    desc += '\x7C';  // version 1, independent blocks, block checksums, content size and checksum
    desc += '\x40';  // 64 KB blocks
    for (int k = 0; k < 8; ++k) desc += static_cast<char>((uint64_t{raw.size()} >> (8 * k)) & 0xFF);
    frame += desc;
    frame += static_cast<char>((XXH32(desc.data(), desc.size(), 0) >> 8) & 0xFF);
    auto put32 = [&](uint32_t v) {
      for (int k = 0; k < 4; ++k) frame += static_cast<char>((v >> (8 * k)) & 0xFF);
    };
    std::string buf(LZ4_compressBound(65536), '\0');
    for (size_t at = 0, b = 0; at < raw.size(); at += 65536, ++b) {
      const size_t n = std::min<size_t>(65536, raw.size() - at);
      if (b % 3 == 1) {
        put32(static_cast<uint32_t>(n) | 0x80000000u);
        frame.append(raw, at, n);
        put32(XXH32(raw.data() + at, n, 0));
      } else {
        int c = LZ4_compress_default(raw.data() + at, buf.data(), static_cast<int>(n),
                                     static_cast<int>(buf.size()));
        REQUIRE(c > 0);
        put32(static_cast<uint32_t>(c));
        frame.append(buf.data(), c);
        put32(XXH32(buf.data(), c, 0));
      }
    }
    put32(0);
    put32(XXH32(raw.data(), raw.size(), 0));
    auto r = Reader::OpenBuffer(WithFrame(frame));
    REQUIRE(r.ok());
    CheckAll(**r, Reversed());
    CHECK((*r)->Verify().ok());
  }
}

}  // namespace
}  // namespace amem::snapshot
