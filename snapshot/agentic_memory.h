// Files written by AgenticMemory's own tool (docs/AGENTIC_MEMORY.md): a reader for
// that layout, which is not amem's .amem format although it starts with the same
// magic. A foreign file is untrusted input: every count, offset and LZ4 size prefix
// is checked against the file before anything is allocated, and every error names
// the record and the byte offset.
#ifndef AMEM_SNAPSHOT_AGENTIC_MEMORY_H_
#define AMEM_SNAPSHOT_AGENTIC_MEMORY_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace amem::snapshot::agentic {

// ---- The layout (docs/AGENTIC_MEMORY.md §2) ----
// [header 64 B][node records N x 72 B][edge records E x 32 B]
// [content: one size-prefixed LZ4 block per node][vectors N x dimension x f32]
// [index: tag u8, length u64, payload; up to the end of the file]
inline constexpr size_t kHeaderLength = 64;
inline constexpr size_t kNodeRecordLength = 72;
inline constexpr size_t kEdgeRecordLength = 32;
inline constexpr size_t kIndexEntryHeaderLength = 9;
inline constexpr size_t kLz4SizePrefixLength = 4;
inline constexpr uint32_t kMaxVersion = 1;  // version 0 (v0.1) and 1 are read
inline constexpr uint32_t kFlagTermIndex = 1u << 0;   // index tag 0x05 present
inline constexpr uint32_t kFlagDocLengths = 1u << 1;  // index tag 0x06 present
inline constexpr uint32_t kKnownFlags = kFlagTermIndex | kFlagDocLengths;
inline constexpr uint8_t kTagTermIndex = 0x05;
inline constexpr uint8_t kTagDocLengths = 0x06;
inline constexpr int kEventTypeCount = 6;  // Fact .. Episode: amem's node types 0-5
inline constexpr int kEdgeTypeCount = 7;   // CausedBy .. TemporalNext: relations 0-6

struct HeaderLayout {
  static constexpr size_t kMagic = 0x00, kVersion = 0x04, kDimension = 0x08, kFlags = 0x0C;
  static constexpr size_t kNodeCount = 0x10, kEdgeCount = 0x18, kNodeTable = 0x20;
  static constexpr size_t kEdgeTable = 0x28, kContent = 0x30, kVectors = 0x38;
};
struct NodeLayout {
  static constexpr size_t kId = 0, kEventType = 8, kPadding1 = 9, kCreatedAt = 12;
  static constexpr size_t kSession = 20, kConfidence = 24, kAccessCount = 28;
  static constexpr size_t kLastAccessed = 32, kDecayScore = 40, kContentOffset = 44;
  static constexpr size_t kContentLength = 52, kEdgeOffset = 56, kEdgeCount = 64;
  static constexpr size_t kPadding2 = 66;
};
struct EdgeLayout {
  static constexpr size_t kSource = 0, kTarget = 8, kEdgeType = 16, kPadding = 17;
  static constexpr size_t kWeight = 20, kCreatedAt = 24;
};

struct Node {
  uint64_t id = 0;
  uint8_t event_type = 0;
  uint64_t created_at = 0;  // Unix microseconds
  uint32_t session = 0;
  float confidence = 1.0f;
  uint32_t access_count = 0;
  uint64_t last_accessed = 0;  // Unix microseconds
  float decay_score = 1.0f;
  std::string content;        // valid UTF-8
  std::vector<float> vector;  // empty when the file's vector is all zeros
};

struct Edge {
  uint64_t source = 0, target = 0;  // node ids, both present in the file
  uint8_t edge_type = 0;
  float weight = 1.0f;
  uint64_t created_at = 0;  // Unix microseconds
};

struct IndexEntry {
  uint8_t tag = 0;
  uint64_t offset = 0;  // of the entry's tag byte
  uint64_t length = 0;  // payload bytes
};

struct File {
  uint32_t version = 0, dimension = 0, flags = 0;
  uint64_t file_size = 0;
  uint64_t content_bytes = 0;         // the content block, compressed
  uint64_t content_uncompressed = 0;  // sum of the size prefixes
  std::vector<Node> nodes;            // in file order
  std::vector<Edge> edges;            // in file order
  std::vector<IndexEntry> index;
  std::vector<uint32_t> sessions;  // distinct session ids, ascending
  uint64_t vector_count = 0;       // nodes with a non-zero vector
};

// How much of a header matches the layout.
enum class HeaderMatch : uint8_t {
  kNo,       // not this layout
  kClaimed,  // magic, version <= 1 as a u32 and the node table at byte 64, but the
             // other offsets disagree: a damaged file of this layout, or amem's own
  kYes,      // and the edge table and content offsets follow from 72/32-byte records
};
// Looks at the first bytes of a file (kHeaderLength are needed for anything but kNo).
HeaderMatch MatchHeader(std::string_view bytes);

// Parses and checks a whole file. Errors are Corruption naming the record and the
// byte offset ("node record 3 (byte 280): unknown event type 9"), or NotSupported
// for a format version above kMaxVersion.
Result<File> Parse(std::string_view bytes);

// Reads `path` whole (IOError naming it on failure).
Result<std::string> ReadWholeFile(const std::string& path);
// The first `n` bytes of `path` (fewer if the file is shorter).
Result<std::string> ReadFilePrefix(const std::string& path, size_t n);

// `amem info` / `amem verify` on such a file: what it is and how to import it.
std::string InfoToText(const File& file, const std::string& path);
std::string InfoToJson(const File& file, const std::string& path);

}  // namespace amem::snapshot::agentic

#endif  // AMEM_SNAPSHOT_AGENTIC_MEMORY_H_
