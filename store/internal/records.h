// Keys and values of the store's LMDB databases (docs/STORE.md is the contract;
// this file follows it section by section). Keys are big-endian so LMDB's
// bytewise order is numeric order; values use common/coding.h (little-endian).
//
// Decoded records hold string_views into the bytes they were decoded from: they
// live as long as those bytes (for LMDB values: until the txn ends or writes).
#ifndef AMEM_STORE_INTERNAL_RECORDS_H_
#define AMEM_STORE_INTERNAL_RECORDS_H_

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/model.h"
#include "common/status.h"

namespace amem::store_internal {

// ---- keys (STORE.md §3) ----
inline constexpr size_t kNodeKeySize = 8;
inline constexpr size_t kEdgeKeySize = 17;
inline constexpr size_t kAdjEntrySize = 9;       // rel u8 | other id
inline constexpr size_t kDeadAdjEntrySize = 17;  // rel u8 | other id | deleted_rev
inline constexpr size_t kRevSuffixSize = 8;

// Tags of the hist database's three sections.
inline constexpr char kHistNode = 'n';
inline constexpr char kHistEdge = 'e';
inline constexpr char kHistKv = 'k';

std::string NodeKey(uint64_t id);
std::string EdgeKey(uint64_t src, RelationId rel, uint64_t dst);
void DecodeEdgeKey(std::string_view key, uint64_t* src, RelationId* rel, uint64_t* dst);
std::string AdjEntry(RelationId rel, uint64_t other);
// Writes the kAdjEntrySize bytes of AdjEntry(rel, other) to `dst`.
void EncodeAdjEntry(char* dst, RelationId rel, uint64_t other);
std::string DeadAdjEntry(RelationId rel, uint64_t other, uint64_t deleted_rev);
// scope \0 ns \0 key \0 (names never contain NUL). The (scope, ns) prefix is
// KvPrefix.
std::string KvKey(std::string_view scope, std::string_view ns, std::string_view key);
std::string KvPrefix(std::string_view scope, std::string_view ns);
// false if `k` is not three NUL-terminated parts.
bool SplitKvKey(std::string_view k, std::string_view* scope, std::string_view* ns,
                std::string_view* key);
// tag | entity key | big-endian revision at which the version was superseded.
std::string HistKey(char tag, std::string_view entity, uint64_t superseded_at);
std::string RevKey(uint64_t rev);
// Big-endian (ts with the sign bit flipped) | rev: sorts by time, then revision.
std::string TimeKey(int64_t ts, uint64_t rev);
int64_t DecodeTimeKeyTs(std::string_view key);
uint64_t DecodeTimeKeyRev(std::string_view key);
// The value of a revision's time key (STORE.md §4.6): a random nonce drawn at the
// commit, which Store::RevisionIdentity reads; older stores wrote it empty.
inline constexpr size_t kCommitNonceLength = 8;
std::string CommitNonce(uint64_t rev);

// ---- values (STORE.md §4). Every value starts with flags u8 | rev varint64. ----
inline constexpr uint8_t kTombstone = 1;

// Reads the common prefix; false if the bytes are too short or malformed.
bool PeekRev(std::string_view value, uint64_t* rev, bool* tombstone);

struct NodeValue {
  bool tombstone = false;
  NodeType type = NodeType::kEntity;
  uint64_t rev = 0;
  int64_t created_ts = 0, updated_ts = 0;
  float confidence = 1.0f;
  std::string_view key, content, meta, scope, run, task;
  // Encoding: when `floats` is set it is written, else `vector_bytes` verbatim
  // (what DecodeFrom produced: 4-byte little-endian floats).
  const std::vector<float>* floats = nullptr;
  std::string_view vector_bytes;

  void EncodeTo(std::string* dst) const;
  Status DecodeFrom(std::string_view in);
  uint32_t vector_size() const {
    return floats ? static_cast<uint32_t>(floats->size())
                  : static_cast<uint32_t>(vector_bytes.size() / 4);
  }
};

struct EdgeValue {
  bool tombstone = false;
  uint64_t rev = 0;
  int64_t created_ts = 0, updated_ts = 0;
  float weight = 1.0f;
  std::string_view src_key, dst_key, payload, run, task;

  void EncodeTo(std::string* dst) const;
  Status DecodeFrom(std::string_view in);
};

struct KvValue {
  bool tombstone = false;
  uint64_t rev = 0;
  int64_t ts = 0;
  std::string_view value, run, task;

  void EncodeTo(std::string* dst) const;
  Status DecodeFrom(std::string_view in);
};

// One change inside a log value (STORE.md §4.5). Flags 1-4 describe the change;
// 8-32 say how the entry is encoded (format 2): fields equal to the previous
// entry's are left out, and an edge names its relation by id.
inline constexpr uint8_t kLogOverwrite = 1;
inline constexpr uint8_t kLogSrcMissing = 2;
inline constexpr uint8_t kLogDstMissing = 4;
inline constexpr uint8_t kLogSameAttribution = 8;  // run, task: the previous entry's
inline constexpr uint8_t kLogSameFirst = 16;       // the first name part: the previous entry's
inline constexpr uint8_t kLogRelationId = 32;      // an edge's relation: one byte, its id
inline constexpr uint8_t kLogChangeFlags = kLogOverwrite | kLogSrcMissing | kLogDstMissing;
struct LogEntry {
  uint8_t kind = 0;  // Change::Kind
  uint8_t flags = 0;
  std::string_view run, task;
  RelationId rel = 0;  // an edge's relation, with kLogRelationId

  // What changed, named by kind. The entry stores up to three name parts (STORE.md
  // §4.5): node (key), edge (src key, relation name, dst key), kv (scope, ns, key),
  // relation (name).
  void SetNode(std::string_view key) { parts_ = {key, {}, {}}; }
  // The relation by id (kLogRelationId), as amem writes edges.
  void SetEdge(std::string_view src, RelationId id, std::string_view dst) {
    parts_ = {src, {}, dst};
    rel = id;
  }
  void SetKv(std::string_view scope, std::string_view ns, std::string_view key) {
    parts_ = {scope, ns, key};
  }
  void SetRelation(std::string_view name) { parts_ = {name, {}, {}}; }
  std::string_view node_key() const { return parts_[0]; }
  std::string_view src_key() const { return parts_[0]; }
  // An edge's relation by name; empty with kLogRelationId (then see rel).
  std::string_view rel_name() const { return parts_[1]; }
  std::string_view dst_key() const { return parts_[2]; }
  std::string_view kv_scope() const { return parts_[0]; }
  std::string_view kv_ns() const { return parts_[1]; }
  std::string_view kv_key() const { return parts_[2]; }
  std::string_view relation_name() const { return parts_[0]; }

  // Every string the entry points at (name parts, run, task), to re-point them at
  // copies that outlive the originals.
  std::array<std::string_view*, 5> Strings() {
    return {&parts_[0], &parts_[1], &parts_[2], &run, &task};
  }

  // Appends the entry, leaving out what equals `prev` (the entry before it in
  // the same log value, or null). Sets the encoding flags in `flags` itself.
  void EncodeTo(std::string* dst, const LogEntry* prev);
  // REQUIRES: `prev` is the entry decoded just before, or null for the first.
  Status DecodeFrom(std::string_view* in, const LogEntry* prev);

 private:
  std::array<std::string_view, 3> parts_{};
};

}  // namespace amem::store_internal

#endif  // AMEM_STORE_INTERNAL_RECORDS_H_
