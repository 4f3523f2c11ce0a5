#include "store/internal/records.h"

#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "common/coding.h"
#include "store/store.h"

namespace amem::store_internal {

namespace {
constexpr uint64_t kSignBit = uint64_t{1} << 63;

void PutHeader(std::string* dst, bool tombstone, uint64_t rev) {
  dst->push_back(static_cast<char>(tombstone ? kTombstone : 0));
  PutVarint64(dst, rev);
}

bool GetHeader(std::string_view* in, bool* tombstone, uint64_t* rev) {
  if (in->empty()) return false;
  auto flags = static_cast<uint8_t>((*in)[0]);
  if ((flags & ~kTombstone) != 0) return false;
  in->remove_prefix(1);
  *tombstone = (flags & kTombstone) != 0;
  return GetVarint64(in, rev);
}

Status Bad(const char* what) {
  return Status::Corruption(std::string(what) + " value is malformed");
}
}  // namespace

std::string NodeKey(uint64_t id) {
  std::string k(kNodeKeySize, '\0');
  EncodeBig64(k.data(), id);
  return k;
}

std::string EdgeKey(uint64_t src, RelationId rel, uint64_t dst) {
  std::string k(kEdgeKeySize, '\0');
  EncodeBig64(k.data(), src);
  k[8] = static_cast<char>(rel);
  EncodeBig64(k.data() + 9, dst);
  return k;
}

void DecodeEdgeKey(std::string_view key, uint64_t* src, RelationId* rel, uint64_t* dst) {
  *src = DecodeBig64(key.data());
  *rel = static_cast<RelationId>(key[8]);
  *dst = DecodeBig64(key.data() + 9);
}

void EncodeAdjEntry(char* dst, RelationId rel, uint64_t other) {
  dst[0] = static_cast<char>(rel);
  EncodeBig64(dst + 1, other);
}

std::string AdjEntry(RelationId rel, uint64_t other) {
  std::string k(kAdjEntrySize, '\0');
  EncodeAdjEntry(k.data(), rel, other);
  return k;
}

std::string DeadAdjEntry(RelationId rel, uint64_t other, uint64_t deleted_rev) {
  std::string k = AdjEntry(rel, other);
  PutBig64(&k, deleted_rev);
  return k;
}

std::string KvPrefix(std::string_view scope, std::string_view ns) {
  std::string k;
  k.reserve(scope.size() + ns.size() + 2);
  k.append(scope).push_back('\0');
  k.append(ns).push_back('\0');
  return k;
}

std::string KvKey(std::string_view scope, std::string_view ns, std::string_view key) {
  std::string k = KvPrefix(scope, ns);
  k.append(key).push_back('\0');
  return k;
}

bool SplitKvKey(std::string_view k, std::string_view* scope, std::string_view* ns,
                std::string_view* key) {
  std::string_view* parts[3] = {scope, ns, key};
  for (auto* part : parts) {
    size_t z = k.find('\0');
    if (z == std::string_view::npos) return false;
    *part = k.substr(0, z);
    k.remove_prefix(z + 1);
  }
  return k.empty();
}

std::string HistKey(char tag, std::string_view entity, uint64_t superseded_at) {
  std::string k;
  k.reserve(1 + entity.size() + kRevSuffixSize);
  k.push_back(tag);
  k.append(entity);
  PutBig64(&k, superseded_at);
  return k;
}

std::string RevKey(uint64_t rev) {
  std::string k;
  PutBig64(&k, rev);
  return k;
}

std::string TimeKey(int64_t ts, uint64_t rev) {
  std::string k;
  PutBig64(&k, static_cast<uint64_t>(ts) ^ kSignBit);
  PutBig64(&k, rev);
  return k;
}

int64_t DecodeTimeKeyTs(std::string_view key) {
  return static_cast<int64_t>(DecodeBig64(key.data()) ^ kSignBit);
}
uint64_t DecodeTimeKeyRev(std::string_view key) { return DecodeBig64(key.data() + 8); }

std::string CommitNonce(uint64_t rev) {
  char bytes[kCommitNonceLength];
  if (::getrandom(bytes, sizeof(bytes), GRND_NONBLOCK) != static_cast<ssize_t>(sizeof(bytes))) {
    // No entropy yet (early boot): the clock, the process and the revision still
    // tell this commit from one a restored or recreated store makes.
    struct timespec now;
    ::clock_gettime(CLOCK_REALTIME, &now);
    uint64_t x = static_cast<uint64_t>(now.tv_sec) * 1000000007u ^
                 static_cast<uint64_t>(now.tv_nsec) ^ (static_cast<uint64_t>(::getpid()) << 32) ^
                 (rev * 0x9E3779B97F4A7C15u);
    EncodeFixed64(bytes, x);
  }
  return std::string(bytes, sizeof(bytes));
}

bool PeekRev(std::string_view value, uint64_t* rev, bool* tombstone) {
  return GetHeader(&value, tombstone, rev);
}

void NodeValue::EncodeTo(std::string* dst) const {
  PutHeader(dst, tombstone, rev);
  dst->push_back(static_cast<char>(type));
  PutVarsint64(dst, created_ts);
  PutVarsint64(dst, updated_ts);
  PutFloat(dst, confidence);
  PutLengthPrefixed(dst, key);
  PutLengthPrefixed(dst, content);
  PutLengthPrefixed(dst, meta);
  PutLengthPrefixed(dst, scope);
  PutLengthPrefixed(dst, run);
  PutLengthPrefixed(dst, task);
  PutVarint32(dst, vector_size());
  if (floats) {
    size_t at = dst->size();
    dst->resize(at + 4 * floats->size());
    EncodeFloats(dst->data() + at, floats->data(), floats->size());
  } else {
    dst->append(vector_bytes);
  }
}

Status NodeValue::DecodeFrom(std::string_view in) {
  floats = nullptr;
  uint32_t dim = 0;
  if (!GetHeader(&in, &tombstone, &rev) || in.empty()) return Bad("node");
  auto t = static_cast<uint8_t>(in[0]);
  if (!IsValidNodeType(t)) return Status::Corruption("node value has an unknown type");
  type = static_cast<NodeType>(t);
  in.remove_prefix(1);
  if (!GetVarsint64(&in, &created_ts) || !GetVarsint64(&in, &updated_ts) ||
      !GetFloat(&in, &confidence) || !GetLengthPrefixed(&in, &key) ||
      !GetLengthPrefixed(&in, &content) || !GetLengthPrefixed(&in, &meta) ||
      !GetLengthPrefixed(&in, &scope) || !GetLengthPrefixed(&in, &run) ||
      !GetLengthPrefixed(&in, &task) || !GetVarint32(&in, &dim) ||
      in.size() != uint64_t{dim} * 4) {
    return Bad("node");
  }
  vector_bytes = in;
  return Status::OK();
}

void EdgeValue::EncodeTo(std::string* dst) const {
  PutHeader(dst, tombstone, rev);
  PutVarsint64(dst, created_ts);
  PutVarsint64(dst, updated_ts);
  PutFloat(dst, weight);
  PutLengthPrefixed(dst, src_key);
  PutLengthPrefixed(dst, dst_key);
  PutLengthPrefixed(dst, payload);
  PutLengthPrefixed(dst, run);
  PutLengthPrefixed(dst, task);
}

Status EdgeValue::DecodeFrom(std::string_view in) {
  if (!GetHeader(&in, &tombstone, &rev) || !GetVarsint64(&in, &created_ts) ||
      !GetVarsint64(&in, &updated_ts) || !GetFloat(&in, &weight) ||
      !GetLengthPrefixed(&in, &src_key) || !GetLengthPrefixed(&in, &dst_key) ||
      !GetLengthPrefixed(&in, &payload) || !GetLengthPrefixed(&in, &run) ||
      !GetLengthPrefixed(&in, &task) || !in.empty()) {
    return Bad("edge");
  }
  return Status::OK();
}

void KvValue::EncodeTo(std::string* dst) const {
  PutHeader(dst, tombstone, rev);
  PutVarsint64(dst, ts);
  PutLengthPrefixed(dst, value);
  PutLengthPrefixed(dst, run);
  PutLengthPrefixed(dst, task);
}

Status KvValue::DecodeFrom(std::string_view in) {
  if (!GetHeader(&in, &tombstone, &rev) || !GetVarsint64(&in, &ts) ||
      !GetLengthPrefixed(&in, &value) || !GetLengthPrefixed(&in, &run) ||
      !GetLengthPrefixed(&in, &task) || !in.empty()) {
    return Bad("kv");
  }
  return Status::OK();
}

void LogEntry::EncodeTo(std::string* dst, const LogEntry* prev) {
  flags &= kLogChangeFlags;
  const bool same_attribution = prev && prev->run == run && prev->task == task;
  const bool same_first = prev && prev->parts_[0] == parts_[0];
  const bool by_id = parts_[1].empty() && (kind == static_cast<uint8_t>(Change::Kind::kPutEdge) ||
                                   kind == static_cast<uint8_t>(Change::Kind::kDeleteEdge));
  if (same_attribution) flags |= kLogSameAttribution;
  if (same_first) flags |= kLogSameFirst;
  if (by_id) flags |= kLogRelationId;
  dst->push_back(static_cast<char>(kind));
  dst->push_back(static_cast<char>(flags));
  if (!same_first) PutLengthPrefixed(dst, parts_[0]);
  if (by_id) {
    dst->push_back(static_cast<char>(rel));
  } else {
    PutLengthPrefixed(dst, parts_[1]);
  }
  PutLengthPrefixed(dst, parts_[2]);
  if (!same_attribution) {
    PutLengthPrefixed(dst, run);
    PutLengthPrefixed(dst, task);
  }
}

Status LogEntry::DecodeFrom(std::string_view* in, const LogEntry* prev) {
  if (in->size() < 2) return Bad("log");
  kind = static_cast<uint8_t>((*in)[0]);
  flags = static_cast<uint8_t>((*in)[1]);
  in->remove_prefix(2);
  constexpr uint8_t kKnown = kLogChangeFlags | kLogSameAttribution | kLogSameFirst | kLogRelationId;
  if (kind > 6 || (flags & ~kKnown) != 0) return Bad("log");
  if ((flags & (kLogSameAttribution | kLogSameFirst)) != 0 && prev == nullptr) return Bad("log");
  const bool edge = kind == static_cast<uint8_t>(Change::Kind::kPutEdge) ||
                    kind == static_cast<uint8_t>(Change::Kind::kDeleteEdge);
  if ((flags & kLogRelationId) != 0 && !edge) return Bad("log");
  if (flags & kLogSameFirst) {
    parts_[0] = prev->parts_[0];
  } else if (!GetLengthPrefixed(in, &parts_[0])) {
    return Bad("log");
  }
  rel = 0;
  parts_[1] = {};
  if (flags & kLogRelationId) {
    if (in->empty()) return Bad("log");
    rel = static_cast<RelationId>((*in)[0]);
    in->remove_prefix(1);
  } else if (!GetLengthPrefixed(in, &parts_[1])) {
    return Bad("log");
  }
  if (!GetLengthPrefixed(in, &parts_[2])) return Bad("log");
  if (flags & kLogSameAttribution) {
    run = prev->run;
    task = prev->task;
  } else if (!GetLengthPrefixed(in, &run) || !GetLengthPrefixed(in, &task)) {
    return Bad("log");
  }
  return Status::OK();
}

}  // namespace amem::store_internal
