#include "snapshot/format.h"

#include <cstdio>
#include <cstring>

#include "common/coding.h"

namespace amem::snapshot {

void Header::EncodeTo(std::string* dst) const {
  char buf[kEncodedLength] = {};
  std::memcpy(buf + kMagicOffset, kMagic, sizeof(kMagic));
  EncodeFixed16(buf + kVersionOffset, version);
  EncodeFixed16(buf + kFlagsOffset, flags);
  EncodeFixed32(buf + kNodeCountOffset, node_count);
  EncodeFixed32(buf + kEdgeCountOffset, edge_count);
  EncodeFixed16(buf + kDimensionOffset, dimension);
  EncodeFixed16(buf + kSessionCountOffset, session_count);
  EncodeFixed64(buf + kContentOffsetOffset, content_offset);
  EncodeFixed64(buf + kContentLengthOffset, content_length);
  EncodeFixed64(buf + kVectorOffsetOffset, vector_offset);
  EncodeFixed64(buf + kIndexOffsetOffset, index_offset);
  EncodeFixed32(buf + kContentUncompressedOffset, content_uncompressed);
  EncodeFixed32(buf + kFeaturesOffset, features);
  dst->append(buf, kEncodedLength);
}

Status Header::DecodeFrom(std::string_view input) {
  if (input.size() < kEncodedLength) return Status::Corruption("header: file shorter than 64 bytes");
  const char* p = input.data();
  if (std::memcmp(p + kMagicOffset, kMagic, sizeof(kMagic)) != 0) {
    return Status::Corruption("header: bad magic (not an .amem file)");
  }
  version = DecodeFixed16(p + kVersionOffset);
  if (version == 0) return Status::Corruption("header: version is zero");
  if (version > kFormatVersion) {
    return Status::NotSupported("header: format version " + std::to_string(version) +
                                " is newer than this build reads (up to " +
                                std::to_string(kFormatVersion) + "); upgrade amem");
  }
  flags = DecodeFixed16(p + kFlagsOffset);
  node_count = DecodeFixed32(p + kNodeCountOffset);
  edge_count = DecodeFixed32(p + kEdgeCountOffset);
  dimension = DecodeFixed16(p + kDimensionOffset);
  session_count = DecodeFixed16(p + kSessionCountOffset);
  content_offset = DecodeFixed64(p + kContentOffsetOffset);
  content_length = DecodeFixed64(p + kContentLengthOffset);
  vector_offset = DecodeFixed64(p + kVectorOffsetOffset);
  index_offset = DecodeFixed64(p + kIndexOffsetOffset);
  content_uncompressed = DecodeFixed32(p + kContentUncompressedOffset);
  features = DecodeFixed32(p + kFeaturesOffset);
  if (DecodeFixed32(p + kReservedOffset) != 0) {
    return Status::Corruption("header: reserved bytes are not zero");
  }
  return Status::OK();
}

void NodeEntry::EncodeTo(std::string* dst) const {
  char buf[kEncodedLength] = {};
  buf[kTypeOffset] = static_cast<char>(type);
  EncodeFixed32(buf + kSessionOffset, session);
  EncodeFloat(buf + kConfidenceOffset, confidence);
  EncodeFixed64(buf + kTimestampOffset, static_cast<uint64_t>(timestamp));
  EncodeFixed64(buf + kContentOffsetOffset, content_offset);
  EncodeFixed32(buf + kContentLengthOffset, content_length);
  EncodeFixed64(buf + kVectorOffsetOffset, vector_offset);
  EncodeFixed64(buf + kMetaOffsetOffset, meta_offset);
  EncodeFixed32(buf + kMetaLengthOffset, meta_length);
  dst->append(buf, kEncodedLength);
}

Status NodeEntry::DecodeFrom(std::string_view input) {
  if (input.size() < kEncodedLength) return Status::Corruption("node record: truncated");
  const char* p = input.data();
  type = static_cast<uint8_t>(p[kTypeOffset]);
  if (p[1] != 0 || p[2] != 0 || p[3] != 0) {
    return Status::Corruption("node record: padding is not zero");
  }
  session = DecodeFixed32(p + kSessionOffset);
  confidence = DecodeFloat(p + kConfidenceOffset);
  timestamp = static_cast<int64_t>(DecodeFixed64(p + kTimestampOffset));
  content_offset = DecodeFixed64(p + kContentOffsetOffset);
  content_length = DecodeFixed32(p + kContentLengthOffset);
  vector_offset = DecodeFixed64(p + kVectorOffsetOffset);
  meta_offset = DecodeFixed64(p + kMetaOffsetOffset);
  meta_length = DecodeFixed32(p + kMetaLengthOffset);
  for (size_t k = kReservedOffset; k < kEncodedLength; ++k) {
    if (p[k] != 0) return Status::Corruption("node record: reserved bytes are not zero");
  }
  return Status::OK();
}

void EdgeEntry::EncodeTo(std::string* dst) const {
  char buf[kEncodedLength];
  EncodeFixed32(buf + kSourceOffset, source);
  EncodeFixed32(buf + kTargetOffset, target);
  buf[kRelOffset] = static_cast<char>(rel);
  EncodeFloat(buf + kWeightOffset, weight);
  dst->append(buf, kEncodedLength);
}

void EdgeEntry::DecodeFrom(const char* p) {
  source = DecodeFixed32(p + kSourceOffset);
  target = DecodeFixed32(p + kTargetOffset);
  rel = static_cast<uint8_t>(p[kRelOffset]);
  weight = DecodeFloat(p + kWeightOffset);
}

void InfoBlock::EncodeTo(std::string* dst) const {
  char buf[kEncodedLength] = {};
  EncodeFixed64(buf + kNewestTsOffset, static_cast<uint64_t>(newest_ts));
  EncodeFixed32(buf + kSessionCountOffset, session_count);
  EncodeFixed32(buf + kStubCountOffset, stub_count);
  EncodeFixed32(buf + kKvCountOffset, kv_count);
  dst->append(buf, kEncodedLength);
}

void InfoBlock::DecodeFrom(const char* p) {
  newest_ts = static_cast<int64_t>(DecodeFixed64(p + kNewestTsOffset));
  session_count = DecodeFixed32(p + kSessionCountOffset);
  stub_count = DecodeFixed32(p + kStubCountOffset);
  kv_count = DecodeFixed32(p + kKvCountOffset);
}

void NodeAttrsEntry::EncodeTo(std::string* dst) const {
  char buf[kEncodedLength];
  EncodeFixed64(buf + kUpdatedTsOffset, static_cast<uint64_t>(updated_ts));
  EncodeFixed32(buf + kScopeOffset, scope);
  EncodeFixed32(buf + kTaskOffset, task);
  EncodeFixed32(buf + kFlagsOffset, flags);
  dst->append(buf, kEncodedLength);
}

void NodeAttrsEntry::DecodeFrom(const char* p) {
  updated_ts = static_cast<int64_t>(DecodeFixed64(p + kUpdatedTsOffset));
  scope = DecodeFixed32(p + kScopeOffset);
  task = DecodeFixed32(p + kTaskOffset);
  flags = DecodeFixed32(p + kFlagsOffset);
}

void EdgeAttrsEntry::EncodeTo(std::string* dst) const {
  char buf[kEncodedLength];
  EncodeFixed64(buf + kCreatedTsOffset, static_cast<uint64_t>(created_ts));
  EncodeFixed64(buf + kUpdatedTsOffset, static_cast<uint64_t>(updated_ts));
  EncodeFixed32(buf + kRunOffset, run);
  EncodeFixed32(buf + kTaskOffset, task);
  dst->append(buf, kEncodedLength);
}

void EdgeAttrsEntry::DecodeFrom(const char* p) {
  created_ts = static_cast<int64_t>(DecodeFixed64(p + kCreatedTsOffset));
  updated_ts = static_cast<int64_t>(DecodeFixed64(p + kUpdatedTsOffset));
  run = DecodeFixed32(p + kRunOffset);
  task = DecodeFixed32(p + kTaskOffset);
}

void KvFixedEntry::EncodeTo(std::string* dst) const {
  char buf[kEncodedLength];
  EncodeFixed64(buf + kTsOffset, static_cast<uint64_t>(ts));
  EncodeFixed32(buf + kRunOffset, run);
  EncodeFixed32(buf + kTaskOffset, task);
  dst->append(buf, kEncodedLength);
}

void KvFixedEntry::DecodeFrom(const char* p) {
  ts = static_cast<int64_t>(DecodeFixed64(p + kTsOffset));
  run = DecodeFixed32(p + kRunOffset);
  task = DecodeFixed32(p + kTaskOffset);
}

std::string BlockName(uint32_t tag) {
  switch (static_cast<BlockTag>(tag)) {
    case BlockTag::kTypeIndex: return "type index";
    case BlockTag::kSessionIndex: return "session index";
    case BlockTag::kTimeIndex: return "time index";
    case BlockTag::kClusterMap: return "cluster map";
    case BlockTag::kTermIndex: return "term index";
    case BlockTag::kDocLengths: return "doc lengths";
    case BlockTag::kEntitySearch: return "entity search";
    case BlockTag::kEntityLabels: return "entity labels";
    case BlockTag::kInfo: return "info block";
    case BlockTag::kNodeIds: return "node ids";
    case BlockTag::kNodeKeys: return "node keys";
    case BlockTag::kRelationNames: return "relation names";
    case BlockTag::kTypeNames: return "type names";
    case BlockTag::kRuns: return "runs";
    case BlockTag::kLabels: return "labels";
    case BlockTag::kNodeAttrs: return "node attributes";
    case BlockTag::kEdgeAttrs: return "edge attributes";
    case BlockTag::kEdgePayloads: return "edge payloads";
    case BlockTag::kKv: return "kv entries";
    case BlockTag::kOutIndex: return "out index";
    case BlockTag::kInIndex: return "in index";
    case BlockTag::kEmbeddings: return "embeddings";
    case BlockTag::kPageChecksums: return "page checksums";
    case BlockTag::kChecksum: return "checksum";
  }
  char buf[24];
  std::snprintf(buf, sizeof(buf), "block 0x%02x", tag);
  return buf;
}

}  // namespace amem::snapshot
