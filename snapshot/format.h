// The .amem snapshot format: constants, record layouts and block tags shared by the
// writer and the reader (docs/FORMAT.md, section by section). Neither side spells an
// offset or a size literally; they come from here.
//
// A format change edits docs/FORMAT.md, this file, kFormatVersion (or a feature bit)
// and tests/data/small.amem together.
#ifndef AMEM_SNAPSHOT_FORMAT_H_
#define AMEM_SNAPSHOT_FORMAT_H_

#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>

#include "common/status.h"

namespace amem::snapshot {

// ---- FORMAT.md §1 Conventions ----
// Little-endian everywhere. Offsets are from the start of the file unless a field
// says "within the decompressed content block" or "within the block body".
inline constexpr char kMagic[4] = {'A', 'M', 'E', 'M'};
// Version 1: the seed spec's layout; amem's additions are feature bits and block
// tags that a seed-spec reader skips. Version 2: the same layout, with the term
// index, doc lengths and embeddings made by the code-aware tokenizer
// (common/tokenizer.h); a file without them is still written as version 1. Both
// are read; a version-1 file's term blocks answer with the words the former
// tokenizer made (FORMAT.md §10).
inline constexpr uint16_t kFormatVersion = 2;
inline constexpr uint16_t kSeedFormatVersion = 1;
inline constexpr uint64_t kNone = std::numeric_limits<uint64_t>::max();  // u64::MAX

// ---- FORMAT.md §3 Header: the first 64 bytes ----
// Header.flags
inline constexpr uint16_t kFlagHasVectors = 1u << 0;
inline constexpr uint16_t kFlagHasIndexes = 1u << 1;
inline constexpr uint16_t kFlagCompressed = 1u << 2;
// Header.features (the paper's v0.2 feature flags; bytes 56..59)
inline constexpr uint32_t kFeatureTermIndex = 1u << 0;   // block 0x05 present
inline constexpr uint32_t kFeatureDocLengths = 1u << 1;  // block 0x06 present
inline constexpr uint32_t kFeatureExtensions = 1u << 2;  // amem blocks 0x10..0x1C present
inline constexpr uint32_t kFeatureChecksum = 1u << 3;    // block 0x1F is the last block
inline constexpr uint32_t kFeatureEmbeddings = 1u << 4;  // block 0x1D present
inline constexpr uint32_t kFeaturePageChecksums = 1u << 5;  // block 0x1E present
inline constexpr uint32_t kFeatureEntitySearch = 1u << 6;   // block 0x07 present
inline constexpr uint32_t kFeatureEntityLabels = 1u << 7;   // block 0x08 present

struct Header {
  static constexpr size_t kEncodedLength = 64;
  // Field offsets within the header.
  static constexpr size_t kMagicOffset = 0;
  static constexpr size_t kVersionOffset = 4;
  static constexpr size_t kFlagsOffset = 6;
  static constexpr size_t kNodeCountOffset = 8;
  static constexpr size_t kEdgeCountOffset = 12;
  static constexpr size_t kDimensionOffset = 16;
  static constexpr size_t kSessionCountOffset = 18;
  static constexpr size_t kContentOffsetOffset = 20;
  static constexpr size_t kContentLengthOffset = 28;
  static constexpr size_t kVectorOffsetOffset = 36;
  static constexpr size_t kIndexOffsetOffset = 44;
  static constexpr size_t kContentUncompressedOffset = 52;
  static constexpr size_t kFeaturesOffset = 56;
  static constexpr size_t kReservedOffset = 60;  // 4 bytes, zero

  uint16_t version = kFormatVersion;
  uint16_t flags = 0;
  uint32_t node_count = 0;
  uint32_t edge_count = 0;
  uint16_t dimension = 0;
  uint16_t session_count = 0;  // min(true count, 0xFFFF); the Info block has the truth
  uint64_t content_offset = 0;
  uint64_t content_length = 0;  // bytes in the file (compressed size)
  uint64_t vector_offset = 0;
  uint64_t index_offset = 0;
  uint32_t content_uncompressed = 0;
  uint32_t features = 0;

  void EncodeTo(std::string* dst) const;
  // Checks magic, version and that the reserved bytes are zero; not the extents.
  Status DecodeFrom(std::string_view input);
};

// ---- FORMAT.md §4 Node records: 64 bytes each, right after the header ----
struct NodeEntry {
  static constexpr size_t kEncodedLength = 64;
  static constexpr size_t kTypeOffset = 0;  // u8; bytes 1..3 zero
  static constexpr size_t kSessionOffset = 4;
  static constexpr size_t kConfidenceOffset = 8;
  static constexpr size_t kTimestampOffset = 12;  // created_ts
  static constexpr size_t kContentOffsetOffset = 20;
  static constexpr size_t kContentLengthOffset = 28;
  static constexpr size_t kVectorOffsetOffset = 32;
  static constexpr size_t kMetaOffsetOffset = 40;
  static constexpr size_t kMetaLengthOffset = 48;
  static constexpr size_t kReservedOffset = 52;  // 12 bytes, zero

  uint8_t type = 0;
  uint32_t session = 0;
  float confidence = 1.0f;
  int64_t timestamp = 0;
  uint64_t content_offset = 0;  // within the decompressed content block
  uint32_t content_length = 0;
  uint64_t vector_offset = kNone;  // within the vector block; kNone: no vector
  uint64_t meta_offset = kNone;    // within the decompressed content block
  uint32_t meta_length = 0;

  void EncodeTo(std::string* dst) const;
  // Decodes exactly kEncodedLength bytes; checks only the zero bytes.
  Status DecodeFrom(std::string_view input);
};

// ---- FORMAT.md §5 Edge records: 13 bytes each, sorted by (source, rel, target) ----
struct EdgeEntry {
  static constexpr size_t kEncodedLength = 13;
  static constexpr size_t kSourceOffset = 0;
  static constexpr size_t kTargetOffset = 4;
  static constexpr size_t kRelOffset = 8;
  static constexpr size_t kWeightOffset = 9;

  uint32_t source = 0;
  uint32_t target = 0;
  uint8_t rel = 0;
  float weight = 1.0f;

  void EncodeTo(std::string* dst) const;
  void DecodeFrom(const char* p);  // REQUIRES: kEncodedLength readable bytes
};

// ---- FORMAT.md §6-7 Content and vectors ----
// The vector block starts on a kVectorAlignment boundary (zero padding before it).
inline constexpr size_t kVectorAlignment = 64;

// ---- FORMAT.md §8 Index blocks ----
// Every block: tag u32, length u32 (body bytes, a multiple of kBlockAlignment,
// zero padding included), then the body. Blocks start kBlockAlignment-aligned and
// follow each other to the end of the file, tags strictly ascending.
inline constexpr size_t kBlockHeaderLength = 8;
inline constexpr size_t kBlockAlignment = 8;

enum class BlockTag : uint32_t {
  // Seed spec (v0.1) and paper (v0.2).
  kTypeIndex = 0x01,     // num_types u32, num_types bitsets of ceil(n/8) bytes
  kSessionIndex = 0x02,  // num u32, num x (session u32, begin u32, end u32) [begin,end)
  kTimeIndex = 0x03,     // num u32, num x (ts i64, node u32), sorted by (ts, node)
  kClusterMap = 0x04,    // k u32, dim u32, k x dim f32, assignments (cluster u32, node u32)
  kTermIndex = 0x05,     // see TermIndex below
  kDocLengths = 0x06,    // n x u32 content token counts
  kEntitySearch = 0x07,  // the memory server's entities and their grams: see EntitySearchBlock
  kEntityLabels = 0x08,  // the entities whose labels their node's texts may not hold: see EntityLabelsBlock
  // amem extensions (kFeatureExtensions).
  kInfo = 0x10,          // newest_ts i64, session_count u32, stub_count u32, kv_count u32, 0 u32
  kNodeIds = 0x11,       // n x u64 id (dense order), n x u32 dense index sorted by id
  kNodeKeys = 0x12,      // n x u32 dense index sorted by key, StringList of n keys
  kRelationNames = 0x13, // StringList of 256 names indexed by relation id ("" undefined)
  kTypeNames = 0x14,     // StringList indexed by node type
  kRuns = 0x15,          // StringList: session id -> run name, sorted, [0] = ""
  kLabels = 0x16,        // StringList: sorted distinct scope/task names, [0] = ""
  kNodeAttrs = 0x17,     // n x (updated_ts i64, scope u32, task u32, flags u32)
  kEdgeAttrs = 0x18,     // m x (created_ts i64, updated_ts i64, run u32, task u32)
  kEdgePayloads = 0x19,  // StringList of m payloads
  kKv = 0x1A,            // count u32, count x (ts i64, run u32, task u32),
                         //   StringList of 4*count (scope, ns, key, value)
  kOutIndex = 0x1B,      // (n+1) x u32: out-edges of i are [off[i], off[i+1])
  kInIndex = 0x1C,       // (n+1) x u32 offsets, m x u32 edge indices sorted by (dst, rel, src)
  kEmbeddings = 0x1D,    // built-in embeddings: see EmbeddingBlock below
  kPageChecksums = 0x1E, // page_size u32, page_count u32, page_count x u64: see PageChecksumBlock
  kChecksum = 0x1F,      // xxh3_64 u64 of every byte before this block; last block
};

// StringList: count u32, (count+1) x u32 offsets relative to the string bytes
// (off[0] = 0, non-decreasing), then the bytes.

// TermIndex body: term_count u32, posting_count u32,
//   (term_count+1) x TermEntry (12 bytes: name_offset u32, postings_begin u32,
//   content_postings u32), posting_count x Posting (8 bytes: node u32,
//   tf_field u32 = tf | field << 24), then the term name bytes.
// Terms sorted bytewise; the postings of term t are [begin_t, begin_{t+1}), sorted by
// (field, node), so its content postings come first. The sentinel entry t = count
// holds the end of the name bytes and of the postings.
inline constexpr size_t kTermEntryLength = 12;
inline constexpr size_t kPostingLength = 8;
inline constexpr uint32_t kMaxTermFrequency = (1u << 24) - 1;
enum class Field : uint8_t { kContent = 0, kMeta = 1 };

// Embeddings body (FORMAT.md §8.20): the built-in embedding of every node's content
// (common/tokenizer.h HashEmbed) before its normalisation, sparse and exact:
//   dimension u32, entry_count u32, overflow_count u32, 0 u32,
//   (n+1) x u32 offsets (node i's entries are [off[i], off[i+1])),
//   entry_count x u32 entries (bucket u16 | count i16 << 16), each node's buckets in
//   the order its tokens first touch them, zero counts left out,
//   overflow_count x u32 nodes, ascending, whose counts do not fit 16 bits: they
//   have no entries, and readers embed their content.
struct EmbeddingBlock {
  static constexpr size_t kFixedLength = 16;
  static uint32_t Entry(uint32_t bucket, int32_t count) {
    return bucket | static_cast<uint32_t>(static_cast<uint16_t>(static_cast<int16_t>(count))) << 16;
  }
  static uint32_t Bucket(uint32_t entry) { return entry & 0xFFFF; }
  static int32_t Count(uint32_t entry) { return static_cast<int16_t>(entry >> 16); }
  static bool Fits(int64_t count) { return count >= -32768 && count <= 32767; }
};

// EntitySearch body (FORMAT.md §8.23; snapshot/entity_search.h has the rules):
//   entity_count u32, gram_count u32,
//   entity_count x (node u32, observations u32): each entity, by name (bytewise),
//   and the position in key order (NodeKeys) of the first key not below
//   "obs:NAME#", where its observations' keys start,
//   (gram_count + 1) x GramEntry (16 bytes: gram u32, count u32, offset u64), the
//   grams strictly ascending; the sentinel (gram 0xFFFFFFFF, count 0) holds the
//   end of the list bytes; gram g's list is [offset_g, offset_{g+1}) of them,
//   then the list bytes: each list's entity numbers (places in the entity array)
//   ascending, as varint gaps.
struct EntitySearchBlock {
  static constexpr size_t kFixedLength = 8;
  static constexpr size_t kEntityLength = 8;
  static constexpr size_t kGramEntryLength = 16;
  static constexpr uint32_t kSentinel = 0xFFFFFFFFu;
};

// EntityLabels body (FORMAT.md §8.24): count u32, length u32, then `length` bytes:
// the entity numbers (places in block 0x07's entity array) whose name or type
// may hold a word their node's content and meta do not (LabelsInTexts false),
// ascending, as varint gaps (a gram list's encoding).
struct EntityLabelsBlock {
  static constexpr size_t kFixedLength = 8;
};

// Page checksums body (FORMAT.md §8.22): page_size u32 (= kPageSize), page_count u32,
// then page_count x u64, the XXH3-64 (seed 0) of each page of the file bytes before
// this block's header: page k is [k * kPageSize, min((k + 1) * kPageSize, covered)),
// covered = the block's own offset, page_count = ceil(covered / kPageSize).
struct PageChecksumBlock {
  static constexpr size_t kFixedLength = 8;
  static constexpr uint32_t kPageShift = 12;
  static constexpr uint32_t kPageSize = 1u << kPageShift;  // 4 KiB
  static uint64_t PageCount(uint64_t covered) { return (covered + kPageSize - 1) >> kPageShift; }
  static uint64_t Length(uint64_t covered) { return kFixedLength + 8 * PageCount(covered); }
};

inline constexpr size_t kTimeEntryLength = 12;
inline constexpr size_t kSessionEntryLength = 12;
inline constexpr int kRelationSlots = 256;

// ---- FORMAT.md §8.7-8.19 amem extension blocks 0x10..0x1C: fixed layouts ----
// The blocks not below are u32/u64 arrays and StringLists (see BlockTag).

// Info (0x10): the whole body.
struct InfoBlock {
  static constexpr size_t kEncodedLength = 24;
  static constexpr size_t kNewestTsOffset = 0;
  static constexpr size_t kSessionCountOffset = 8;
  static constexpr size_t kStubCountOffset = 12;
  static constexpr size_t kKvCountOffset = 16;
  static constexpr size_t kReservedOffset = 20;  // u32, zero

  int64_t newest_ts = 0;
  uint32_t session_count = 0;  // the true count (Header.session_count is u16)
  uint32_t stub_count = 0;
  uint32_t kv_count = 0;

  void EncodeTo(std::string* dst) const;
  void DecodeFrom(const char* p);  // REQUIRES: kEncodedLength readable bytes
};

// NodeAttrs (0x17): node_count entries, in dense order.
struct NodeAttrsEntry {
  static constexpr size_t kEncodedLength = 20;
  static constexpr size_t kUpdatedTsOffset = 0;
  static constexpr size_t kScopeOffset = 8;  // index into Labels
  static constexpr size_t kTaskOffset = 12;  // index into Labels
  static constexpr size_t kFlagsOffset = 16;
  static constexpr uint32_t kFlagStub = 1u << 0;

  int64_t updated_ts = 0;
  uint32_t scope = 0;
  uint32_t task = 0;
  uint32_t flags = 0;

  void EncodeTo(std::string* dst) const;
  void DecodeFrom(const char* p);  // REQUIRES: kEncodedLength readable bytes
};

// EdgeAttrs (0x18): edge_count entries, in edge order.
struct EdgeAttrsEntry {
  static constexpr size_t kEncodedLength = 24;
  static constexpr size_t kCreatedTsOffset = 0;
  static constexpr size_t kUpdatedTsOffset = 8;
  static constexpr size_t kRunOffset = 16;   // session id (index into Runs)
  static constexpr size_t kTaskOffset = 20;  // index into Labels

  int64_t created_ts = 0;
  int64_t updated_ts = 0;
  uint32_t run = 0;
  uint32_t task = 0;

  void EncodeTo(std::string* dst) const;
  void DecodeFrom(const char* p);  // REQUIRES: kEncodedLength readable bytes
};

// Kv (0x1A): count u32, count entries of this fixed part, then a StringList of
// 4 x count strings (scope, namespace, key, value of each entry).
struct KvFixedEntry {
  static constexpr size_t kCountLength = 4;  // the block's count u32, first
  static constexpr size_t kEncodedLength = 16;
  static constexpr size_t kTsOffset = 0;
  static constexpr size_t kRunOffset = 8;    // session id (index into Runs)
  static constexpr size_t kTaskOffset = 12;  // index into Labels

  int64_t ts = 0;
  uint32_t run = 0;
  uint32_t task = 0;

  void EncodeTo(std::string* dst) const;
  void DecodeFrom(const char* p);  // REQUIRES: kEncodedLength readable bytes
};

// ---- helpers shared by writer and reader ----
inline constexpr uint64_t AlignUp(uint64_t v, uint64_t a) { return (v + a - 1) / a * a; }
// True when [offset, offset+size) lies inside [0, limit), without overflow.
inline constexpr bool InBounds(uint64_t offset, uint64_t size, uint64_t limit) {
  return size <= limit && offset <= limit - size;
}
// "type index", "term index", ... for error messages; "block 0x2a" when unknown.
std::string BlockName(uint32_t tag);

}  // namespace amem::snapshot

#endif  // AMEM_SNAPSHOT_FORMAT_H_
