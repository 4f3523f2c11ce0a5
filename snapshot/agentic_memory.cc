#include "snapshot/agentic_memory.h"

#include <fcntl.h>
#include <lz4.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>

#include <nlohmann/json.hpp>

#include "common/coding.h"
#include "common/model.h"
#include "common/utf8.h"
#include "snapshot/reader.h"

namespace amem::snapshot::agentic {

namespace {

constexpr char kMagicBytes[4] = {'A', 'M', 'E', 'M'};
constexpr uint64_t kMaxTimestamp = static_cast<uint64_t>(std::numeric_limits<int64_t>::max());
// LZ4 cannot expand a block by more than about 255:1; a size prefix promising more
// is damage, and is refused before the output buffer is allocated.
constexpr uint64_t kLz4MaxRatio = 255;

std::string Hex(uint64_t v) {
  char buf[24];
  snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(v));
  return buf;
}

Status HeaderError(size_t field, const std::string& what) {
  return Status::Corruption("header (byte " + std::to_string(field) + "): " + what);
}

// "node record 3 (id 7, byte 280)".
std::string NodeWhere(size_t i, uint64_t id, uint64_t offset) {
  return "node record " + std::to_string(i) + " (id " + std::to_string(id) + ", byte " +
         std::to_string(offset) + ")";
}

std::string EdgeWhere(size_t j, uint64_t offset) {
  return "edge record " + std::to_string(j) + " (byte " + std::to_string(offset) + ")";
}

bool ZeroBytes(const char* p, size_t n) {
  for (size_t i = 0; i < n; ++i) {
    if (p[i] != 0) return false;
  }
  return true;
}

struct Sections {
  uint64_t node_count = 0, edge_count = 0;
  uint64_t node_table = 0, edge_table = 0, content = 0, vectors = 0;
};

Sections ReadSections(const char* h) {
  Sections s;
  s.node_count = DecodeFixed64(h + HeaderLayout::kNodeCount);
  s.edge_count = DecodeFixed64(h + HeaderLayout::kEdgeCount);
  s.node_table = DecodeFixed64(h + HeaderLayout::kNodeTable);
  s.edge_table = DecodeFixed64(h + HeaderLayout::kEdgeTable);
  s.content = DecodeFixed64(h + HeaderLayout::kContent);
  s.vectors = DecodeFixed64(h + HeaderLayout::kVectors);
  return s;
}

// Checks the header against the file size and fills the sections. Every product
// is bounded by a division first, so nothing overflows.
Status CheckHeader(std::string_view bytes, File* out, Sections* s) {
  const uint64_t size = bytes.size();
  if (size < kHeaderLength) {
    return Status::Corruption("header: the file is " + std::to_string(size) +
                              " bytes; an AgenticMemory header needs " +
                              std::to_string(kHeaderLength));
  }
  const char* h = bytes.data();
  if (std::memcmp(h, kMagicBytes, sizeof kMagicBytes) != 0) {
    return HeaderError(HeaderLayout::kMagic, "bad magic (not an .amem file)");
  }
  out->version = DecodeFixed32(h + HeaderLayout::kVersion);
  if (out->version > kMaxVersion) {
    return Status::NotSupported("header (byte 4): AgenticMemory format version " +
                                std::to_string(out->version) + " (versions 0 and 1 are read)");
  }
  out->dimension = DecodeFixed32(h + HeaderLayout::kDimension);
  out->flags = DecodeFixed32(h + HeaderLayout::kFlags);
  if (out->flags & ~kKnownFlags) {
    return HeaderError(HeaderLayout::kFlags, "unknown flags " + Hex(out->flags));
  }
  *s = ReadSections(h);
  if (s->node_table != kHeaderLength) {
    return HeaderError(HeaderLayout::kNodeTable, "node table offset " +
                                                     std::to_string(s->node_table) +
                                                     ", expected 64");
  }
  if (s->node_count > (size - kHeaderLength) / kNodeRecordLength) {
    return HeaderError(HeaderLayout::kNodeCount,
                       "node count " + std::to_string(s->node_count) + " needs more than the " +
                           std::to_string(size) + "-byte file");
  }
  const uint64_t edge_table = kHeaderLength + s->node_count * kNodeRecordLength;
  if (s->edge_table != edge_table) {
    return HeaderError(HeaderLayout::kEdgeTable,
                       "edge table offset " + std::to_string(s->edge_table) + ", expected " +
                           std::to_string(edge_table) + " after " +
                           std::to_string(s->node_count) + " node records of 72 bytes");
  }
  if (s->edge_count > (size - edge_table) / kEdgeRecordLength) {
    return HeaderError(HeaderLayout::kEdgeCount,
                       "edge count " + std::to_string(s->edge_count) + " needs more than the " +
                           std::to_string(size) + "-byte file");
  }
  const uint64_t content = edge_table + s->edge_count * kEdgeRecordLength;
  if (s->content != content) {
    return HeaderError(HeaderLayout::kContent,
                       "content offset " + std::to_string(s->content) + ", expected " +
                           std::to_string(content) + " after " +
                           std::to_string(s->edge_count) + " edge records of 32 bytes");
  }
  if (s->vectors < content || s->vectors > size) {
    return HeaderError(HeaderLayout::kVectors,
                       "feature vector offset " + std::to_string(s->vectors) +
                           " is outside [" + std::to_string(content) + ", " +
                           std::to_string(size) + "]");
  }
  const uint64_t vector_room = size - s->vectors;
  if (s->node_count > 0 && out->dimension > vector_room / 4 / s->node_count) {
    return HeaderError(HeaderLayout::kDimension,
                       "feature vectors of dimension " + std::to_string(out->dimension) +
                           " for " + std::to_string(s->node_count) + " nodes, from byte " +
                           std::to_string(s->vectors) + ", run past the end of the " +
                           std::to_string(size) + "-byte file");
  }
  out->file_size = size;
  out->content_bytes = s->vectors - s->content;
  return Status::OK();
}

Status ParseContent(std::string_view bytes, const Sections& s, size_t i, uint64_t record,
                    uint64_t* next_offset, Node* node, File* out) {
  const char* r = bytes.data() + record;
  const uint64_t offset = DecodeFixed64(r + NodeLayout::kContentOffset);
  const uint32_t length = DecodeFixed32(r + NodeLayout::kContentLength);
  auto fail = [&](const std::string& what) {
    return Status::Corruption(NodeWhere(i, node->id, record) + ": " + what);
  };
  // The writer concatenates the blocks in node order; anything else is damage.
  if (offset != *next_offset) {
    return fail("content offset " + std::to_string(offset) + ", expected " +
                std::to_string(*next_offset) + " (blocks follow each other)");
  }
  if (length == 0) return Status::OK();  // never written; readers take it as empty
  if (length > out->content_bytes - offset) {
    return fail("content block of " + std::to_string(length) + " bytes at byte " +
                std::to_string(s.content + offset) +
                " runs past the content section (ends at byte " + std::to_string(s.vectors) +
                ")");
  }
  *next_offset = offset + length;
  const uint64_t at = s.content + offset;
  if (length <= kLz4SizePrefixLength) {
    return fail("content block at byte " + std::to_string(at) + " is " +
                std::to_string(length) + " bytes, shorter than a size prefix and one token");
  }
  const char* block = bytes.data() + at;
  const uint32_t raw = DecodeFixed32(block);
  const uint64_t packed = length - kLz4SizePrefixLength;
  if (raw > kMaxContentBytes) {
    return fail("content size prefix " + std::to_string(raw) + " at byte " + std::to_string(at) +
                " exceeds amem's content limit of " + std::to_string(kMaxContentBytes) +
                " bytes");
  }
  if (raw > packed * kLz4MaxRatio) {
    return fail("content size prefix " + std::to_string(raw) + " at byte " + std::to_string(at) +
                " is more than a " + std::to_string(packed) + "-byte LZ4 block can hold");
  }
  node->content.resize(raw);
  char empty = 0;
  const int got = LZ4_decompress_safe(block + kLz4SizePrefixLength,
                                      raw ? node->content.data() : &empty,
                                      static_cast<int>(packed), static_cast<int>(raw));
  if (got < 0 || static_cast<uint32_t>(got) != raw) {
    return fail("content block at byte " + std::to_string(at) +
                " is not an LZ4 block of the " + std::to_string(raw) +
                " bytes its size prefix promises");
  }
  if (!IsValidUtf8(node->content)) {
    return fail("content at byte " + std::to_string(at) + " is not valid UTF-8");
  }
  out->content_uncompressed += raw;
  return Status::OK();
}

Status ParseNode(std::string_view bytes, const Sections& s, size_t i, uint64_t* next_content,
                 Node* node, File* out) {
  const uint64_t record = s.node_table + i * kNodeRecordLength;
  const char* r = bytes.data() + record;
  auto fail = [&](size_t field, const std::string& what) {
    return Status::Corruption(NodeWhere(i, node->id, record + field) + ": " + what);
  };
  node->id = DecodeFixed64(r + NodeLayout::kId);
  node->event_type = static_cast<uint8_t>(r[NodeLayout::kEventType]);
  if (node->event_type >= kEventTypeCount) {
    return fail(NodeLayout::kEventType,
                "unknown event type " + std::to_string(node->event_type) + " (0-5 are defined)");
  }
  if (!ZeroBytes(r + NodeLayout::kPadding1, NodeLayout::kCreatedAt - NodeLayout::kPadding1)) {
    return fail(NodeLayout::kPadding1, "non-zero padding");
  }
  if (!ZeroBytes(r + NodeLayout::kPadding2, kNodeRecordLength - NodeLayout::kPadding2)) {
    return fail(NodeLayout::kPadding2, "non-zero padding");
  }
  node->created_at = DecodeFixed64(r + NodeLayout::kCreatedAt);
  if (node->created_at > kMaxTimestamp) {
    return fail(NodeLayout::kCreatedAt, "created_at " + std::to_string(node->created_at) +
                                            " is out of range");
  }
  node->session = DecodeFixed32(r + NodeLayout::kSession);
  node->confidence = DecodeFloat(r + NodeLayout::kConfidence);
  if (!(node->confidence >= 0.0f && node->confidence <= 1.0f)) {
    return fail(NodeLayout::kConfidence, "confidence " + std::to_string(node->confidence) +
                                             " is not in [0, 1]");
  }
  node->access_count = DecodeFixed32(r + NodeLayout::kAccessCount);
  node->last_accessed = DecodeFixed64(r + NodeLayout::kLastAccessed);
  node->decay_score = DecodeFloat(r + NodeLayout::kDecayScore);
  if (!std::isfinite(node->decay_score)) {
    return fail(NodeLayout::kDecayScore, "decay score is not a finite number");
  }
  return ParseContent(bytes, s, i, record, next_content, node, out);
}

Status ParseVector(std::string_view bytes, const Sections& s, uint32_t dim, size_t i,
                   Node* node, File* out) {
  const uint64_t at = s.vectors + i * uint64_t{dim} * 4;
  const char* p = bytes.data() + at;
  bool nonzero = false;
  for (uint32_t k = 0; k < dim; ++k) {
    const float f = DecodeFloat(p + 4 * k);
    if (!std::isfinite(f)) {
      return Status::Corruption("feature vector of " + NodeWhere(i, node->id, at + 4 * k) +
                                ": not a finite number");
    }
    nonzero |= f != 0.0f;
  }
  if (!nonzero) return Status::OK();
  node->vector.resize(dim);
  for (uint32_t k = 0; k < dim; ++k) node->vector[k] = DecodeFloat(p + 4 * k);
  ++out->vector_count;
  return Status::OK();
}

// The index block is not needed (amem rebuilds its own), but its entries must tile
// the rest of the file: a cut or a damaged length shows here.
Status ParseIndex(std::string_view bytes, uint64_t start, File* out) {
  const uint64_t size = bytes.size();
  uint64_t pos = start;
  bool term_index = false, doc_lengths = false;
  while (pos < size) {
    if (size - pos < kIndexEntryHeaderLength) {
      return Status::Corruption("index block: " + std::to_string(size - pos) +
                                " trailing bytes at byte " + std::to_string(pos) +
                                ", shorter than an entry header");
    }
    IndexEntry e;
    e.tag = static_cast<uint8_t>(bytes[pos]);
    e.offset = pos;
    e.length = DecodeFixed64(bytes.data() + pos + 1);
    const uint64_t room = size - pos - kIndexEntryHeaderLength;
    if (e.length > room) {
      return Status::Corruption("index block: entry " + Hex(e.tag) + " at byte " +
                                std::to_string(pos) + " claims " + std::to_string(e.length) +
                                " bytes; " + std::to_string(room) + " remain");
    }
    term_index |= e.tag == kTagTermIndex;
    doc_lengths |= e.tag == kTagDocLengths;
    out->index.push_back(e);
    pos += kIndexEntryHeaderLength + e.length;
  }
  if ((out->flags & kFlagTermIndex) && !term_index) {
    return Status::Corruption("index block: the header flags promise a term index (tag 0x05); "
                              "there is none (the file may be cut)");
  }
  if ((out->flags & kFlagDocLengths) && !doc_lengths) {
    return Status::Corruption("index block: the header flags promise doc lengths (tag 0x06); "
                              "there are none (the file may be cut)");
  }
  return Status::OK();
}

Status ParseEdges(std::string_view bytes, const Sections& s, File* out) {
  // Node ids sorted, for the endpoint checks and to find duplicate ids.
  std::vector<uint64_t> ids;
  ids.reserve(out->nodes.size());
  for (const Node& n : out->nodes) ids.push_back(n.id);
  std::sort(ids.begin(), ids.end());
  if (auto dup = std::adjacent_find(ids.begin(), ids.end()); dup != ids.end()) {
    size_t first = 0;
    for (size_t i = 0; i < out->nodes.size(); ++i) {
      if (out->nodes[i].id != *dup) continue;
      if (first++ == 0) continue;
      return Status::Corruption(NodeWhere(i, *dup, s.node_table + i * kNodeRecordLength) +
                                ": id " + std::to_string(*dup) + " is used twice");
    }
  }
  auto known = [&](uint64_t id) { return std::binary_search(ids.begin(), ids.end(), id); };
  out->edges.resize(s.edge_count);
  for (size_t j = 0; j < s.edge_count; ++j) {
    const uint64_t record = s.edge_table + j * kEdgeRecordLength;
    const char* r = bytes.data() + record;
    Edge& e = out->edges[j];
    auto fail = [&](size_t field, const std::string& what) {
      return Status::Corruption(EdgeWhere(j, record + field) + ": " + what);
    };
    e.source = DecodeFixed64(r + EdgeLayout::kSource);
    e.target = DecodeFixed64(r + EdgeLayout::kTarget);
    e.edge_type = static_cast<uint8_t>(r[EdgeLayout::kEdgeType]);
    if (e.edge_type >= kEdgeTypeCount) {
      return fail(EdgeLayout::kEdgeType,
                  "unknown edge type " + std::to_string(e.edge_type) + " (0-6 are defined)");
    }
    if (!ZeroBytes(r + EdgeLayout::kPadding, EdgeLayout::kWeight - EdgeLayout::kPadding)) {
      return fail(EdgeLayout::kPadding, "non-zero padding");
    }
    e.weight = DecodeFloat(r + EdgeLayout::kWeight);
    if (!std::isfinite(e.weight)) return fail(EdgeLayout::kWeight, "weight is not finite");
    e.created_at = DecodeFixed64(r + EdgeLayout::kCreatedAt);
    if (e.created_at > kMaxTimestamp) {
      return fail(EdgeLayout::kCreatedAt,
                  "created_at " + std::to_string(e.created_at) + " is out of range");
    }
    if (!known(e.source)) {
      return fail(EdgeLayout::kSource, "source id " + std::to_string(e.source) + " is not a node");
    }
    if (!known(e.target)) {
      return fail(EdgeLayout::kTarget, "target id " + std::to_string(e.target) + " is not a node");
    }
  }
  return Status::OK();
}

}  // namespace

HeaderMatch MatchHeader(std::string_view bytes) {
  if (bytes.size() < kHeaderLength) return HeaderMatch::kNo;
  const char* h = bytes.data();
  if (std::memcmp(h, kMagicBytes, sizeof kMagicBytes) != 0) return HeaderMatch::kNo;
  if (DecodeFixed32(h + HeaderLayout::kVersion) > kMaxVersion) return HeaderMatch::kNo;
  const Sections s = ReadSections(h);
  if (s.node_table != kHeaderLength) return HeaderMatch::kNo;
  const uint64_t max_count = std::numeric_limits<uint64_t>::max() / 128;
  if (s.node_count > max_count || s.edge_count > max_count) return HeaderMatch::kClaimed;
  const uint64_t edge_table = kHeaderLength + s.node_count * kNodeRecordLength;
  if (s.edge_table != edge_table) return HeaderMatch::kClaimed;
  if (s.content != edge_table + s.edge_count * kEdgeRecordLength) return HeaderMatch::kClaimed;
  if (s.vectors < s.content) return HeaderMatch::kClaimed;
  return HeaderMatch::kYes;
}

Result<File> Parse(std::string_view bytes) {
  File out;
  Sections s;
  AMEM_RETURN_IF_ERROR(CheckHeader(bytes, &out, &s));
  out.nodes.resize(s.node_count);
  uint64_t next_content = 0;
  for (size_t i = 0; i < s.node_count; ++i) {
    AMEM_RETURN_IF_ERROR(ParseNode(bytes, s, i, &next_content, &out.nodes[i], &out));
  }
  if (next_content != out.content_bytes) {
    return Status::Corruption("content block: " +
                              std::to_string(out.content_bytes - next_content) +
                              " bytes at byte " + std::to_string(s.content + next_content) +
                              " belong to no node");
  }
  for (size_t i = 0; i < s.node_count; ++i) {
    AMEM_RETURN_IF_ERROR(ParseVector(bytes, s, out.dimension, i, &out.nodes[i], &out));
  }
  AMEM_RETURN_IF_ERROR(ParseEdges(bytes, s, &out));
  const uint64_t index = s.vectors + s.node_count * out.dimension * 4;
  AMEM_RETURN_IF_ERROR(ParseIndex(bytes, index, &out));
  for (const Node& n : out.nodes) out.sessions.push_back(n.session);
  std::sort(out.sessions.begin(), out.sessions.end());
  out.sessions.erase(std::unique(out.sessions.begin(), out.sessions.end()), out.sessions.end());
  return out;
}

Result<std::string> ReadFilePrefix(const std::string& path, size_t n) {
  uint64_t size = 0;
  AMEM_ASSIGN_OR_RETURN(fd, OpenSnapshotFile(path, &size));
  std::string out;
  char buf[1 << 16];
  while (out.size() < n) {
    const ssize_t got = ::read(fd, buf, std::min(sizeof buf, n - out.size()));
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) {
      const int err = errno;
      ::close(fd);
      return Status::IOError(path + ": " + std::strerror(err));
    }
    if (got == 0) break;
    out.append(buf, static_cast<size_t>(got));
  }
  ::close(fd);
  return out;
}

Result<std::string> ReadWholeFile(const std::string& path) {
  return ReadFilePrefix(path, std::numeric_limits<size_t>::max());
}

namespace {

constexpr const char* kEventNames[kEventTypeCount] = {"fact",       "decision", "inference",
                                                      "correction", "skill",    "episode"};

std::string IndexName(uint8_t tag) {
  static constexpr const char* kNames[] = {"type", "temporal", "session", "cluster map",
                                           "term index", "doc lengths"};
  if (tag >= 1 && tag <= 6) return std::string(kNames[tag - 1]) + " (" + Hex(tag) + ")";
  return "tag " + Hex(tag);
}

std::vector<uint64_t> EventCounts(const File& f) {
  std::vector<uint64_t> counts(kEventTypeCount, 0);
  for (const Node& n : f.nodes) ++counts[n.event_type];
  return counts;
}

}  // namespace

std::string InfoToText(const File& f, const std::string& path) {
  std::string out;
  auto line = [&](const std::string& k, const std::string& v) { out += k + ": " + v + "\n"; };
  line("format", "AgenticMemory (written by AgenticMemory's own tool; not an amem snapshot)");
  line("version", std::to_string(f.version) + (f.version == 0 ? " (v0.1)" : ""));
  line("file size", std::to_string(f.file_size) + " bytes");
  line("nodes", std::to_string(f.nodes.size()));
  line("edges", std::to_string(f.edges.size()));
  line("sessions", std::to_string(f.sessions.size()));
  line("dimension", std::to_string(f.dimension));
  line("vectors", std::to_string(f.vector_count) + " non-zero");
  line("content", std::to_string(f.content_bytes) + " bytes LZ4 (one block per node), " +
                      std::to_string(f.content_uncompressed) + " uncompressed");
  line("checksum", "none (the layout has none)");
  const std::vector<uint64_t> counts = EventCounts(f);
  for (int t = 0; t < kEventTypeCount; ++t) {
    if (counts[t]) line(std::string("  type ") + kEventNames[t], std::to_string(counts[t]));
  }
  for (const IndexEntry& e : f.index) {
    line("  index " + IndexName(e.tag),
         std::to_string(e.length) + " bytes at " + std::to_string(e.offset));
  }
  line("import with", "amem import " + path);
  return out;
}

std::string InfoToJson(const File& f, const std::string& path) {
  nlohmann::ordered_json j;
  j["format"] = "agentic-memory";
  j["version"] = f.version;
  j["file_size"] = f.file_size;
  j["nodes"] = f.nodes.size();
  j["edges"] = f.edges.size();
  j["sessions"] = f.sessions.size();
  j["dimension"] = f.dimension;
  j["vectors"] = f.vector_count;
  j["flags"] = f.flags;
  j["content_bytes"] = f.content_bytes;
  j["content_uncompressed"] = f.content_uncompressed;
  j["has_checksum"] = false;
  nlohmann::ordered_json types = nlohmann::ordered_json::object();
  const std::vector<uint64_t> counts = EventCounts(f);
  for (int t = 0; t < kEventTypeCount; ++t) types[kEventNames[t]] = counts[t];
  j["types"] = types;
  nlohmann::ordered_json index = nlohmann::ordered_json::array();
  for (const IndexEntry& e : f.index) {
    index.push_back({{"tag", e.tag}, {"name", IndexName(e.tag)}, {"offset", e.offset},
                     {"length", e.length}});
  }
  j["index"] = index;
  j["import"] = "amem import " + path;
  return j.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
}

}  // namespace amem::snapshot::agentic
