#include "snapshot/writer.h"

#include <fcntl.h>
#include <lz4frame.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <numeric>
#include <random>
#include <tuple>
#include <unordered_map>

#include "common/coding.h"
#include "common/hash.h"
#include "common/model.h"
#include "snapshot/format.h"
#include "snapshot/string_list.h"
#include "snapshot/term_index.h"

#include <bit>

namespace amem::snapshot {

static_assert(std::endian::native == std::endian::little,
              "the vector block is copied from host floats");

namespace {

constexpr std::string_view kStubMeta = R"({"stub":"true"})";
constexpr std::string_view kEmptyMeta = "{}";

// One node as written: a live store node or a stub for a dangling edge endpoint.
struct WNode {
  std::string_view key;
  uint64_t id = 0;
  uint8_t type = 0;
  uint32_t session = 0;
  float confidence = 1.0f;
  int64_t created_ts = 0, updated_ts = 0;
  std::string_view content, meta, scope, task;
  const std::vector<float>* vector = nullptr;
  bool stub = false;
};

struct WEdge {
  uint32_t src = 0, dst = 0;
  RelationId rel = 0;
  const EdgeRecord* rec = nullptr;
};

// Sorted distinct strings with "" at index 0. The hash map only dedupes and
// answers IndexOf; the order written is the sorted one.
class Dictionary {
 public:
  void Add(std::string_view s) { index_.try_emplace(s, 0); }
  void Seal() {
    index_.try_emplace(std::string_view(), 0);
    items_.reserve(index_.size());
    for (const auto& [s, unused] : index_) items_.push_back(s);
    std::sort(items_.begin(), items_.end());
    for (uint32_t k = 0; k < items_.size(); ++k) index_[items_[k]] = k;
  }
  // REQUIRES: Add(s) was called before Seal().
  uint32_t IndexOf(std::string_view s) const { return index_.at(s); }
  const std::vector<std::string_view>& items() const { return items_; }

 private:
  std::unordered_map<std::string_view, uint32_t> index_;
  std::vector<std::string_view> items_;
};

std::string_view Identity(std::string_view s) { return s; }

struct Block {
  BlockTag tag;
  std::string body;
};

// Queues a block; the file is assembled once its exact size is known.
Status AddBlock(std::vector<Block>* blocks, BlockTag tag, std::string* body) {
  if (AlignUp(body->size(), kBlockAlignment) > UINT32_MAX) {
    return Status::InvalidArgument(BlockName(static_cast<uint32_t>(tag)) + ": larger than 4 GiB");
  }
  blocks->push_back({tag, std::move(*body)});
  body->clear();
  return Status::OK();
}

void AppendBlock(std::string* file, BlockTag tag, std::string_view body) {
  uint64_t padded = AlignUp(body.size(), kBlockAlignment);
  PutFixed32(file, static_cast<uint32_t>(tag));
  PutFixed32(file, static_cast<uint32_t>(padded));
  file->append(body);
  file->append(padded - body.size(), '\0');
}

Status Compress(std::string_view raw, std::string* out) {
  LZ4F_preferences_t prefs;
  std::memset(&prefs, 0, sizeof(prefs));
  prefs.frameInfo.blockSizeID = LZ4F_max4MB;
  prefs.frameInfo.blockMode = LZ4F_blockIndependent;
  prefs.frameInfo.contentChecksumFlag = LZ4F_contentChecksumEnabled;
  prefs.frameInfo.contentSize = raw.size();
  prefs.compressionLevel = 0;
  out->resize(LZ4F_compressFrameBound(raw.size(), &prefs));
  size_t n = LZ4F_compressFrame(out->data(), out->size(), raw.data(), raw.size(), &prefs);
  if (LZ4F_isError(n)) {
    return Status::InvalidArgument(std::string("content: LZ4 compression failed: ") +
                                   LZ4F_getErrorName(n));
  }
  out->resize(n);
  return Status::OK();
}

Status CheckNode(const NodeRecord& n) {
  if (!IsValidNodeType(static_cast<uint32_t>(n.type))) {
    return Status::InvalidArgument("node " + n.key + ": unknown type");
  }
  if (!std::isfinite(n.confidence) || n.confidence < 0.0f || n.confidence > 1.0f) {
    return Status::InvalidArgument("node " + n.key + ": confidence outside 0..1");
  }
  for (float f : n.vector) {
    if (!std::isfinite(f)) return Status::InvalidArgument("node " + n.key + ": vector not finite");
  }
  if (n.key.empty()) return Status::InvalidArgument("node with an empty key");
  return Status::OK();
}

}  // namespace

Result<std::string> BuildSnapshot(const StoreState& state, const WriterOptions& options) {
  const uint32_t dim = state.dimension;
  if (dim == 0 || dim > kMaxDimension) {
    return Status::InvalidArgument("dimension " + std::to_string(dim) + " out of range");
  }

  // ---- nodes sorted by key; dangling edge endpoints become stubs ----
  std::vector<const NodeRecord*> live(state.nodes.size());
  for (size_t k = 0; k < live.size(); ++k) live[k] = &state.nodes[k];
  std::sort(live.begin(), live.end(),
            [](const NodeRecord* a, const NodeRecord* b) { return a->key < b->key; });
  for (size_t k = 0; k < live.size(); ++k) {
    AMEM_RETURN_IF_ERROR(CheckNode(*live[k]));
    if (k > 0 && live[k]->key == live[k - 1]->key) {
      return Status::InvalidArgument("duplicate node key " + live[k]->key);
    }
    if (!live[k]->vector.empty() && live[k]->vector.size() != dim) {
      return Status::InvalidArgument("node " + live[k]->key + ": vector dimension mismatch");
    }
  }
  std::unordered_map<std::string_view, uint32_t> key_index;  // key -> position
  key_index.reserve(live.size());
  for (uint32_t k = 0; k < live.size(); ++k) key_index.emplace(live[k]->key, k);
  auto is_live = [&](std::string_view key) { return key_index.count(key) != 0; };
  std::vector<std::pair<std::string_view, int64_t>> stub_refs;
  for (const EdgeRecord& e : state.edges) {
    if (!is_live(e.src_key)) stub_refs.emplace_back(e.src_key, e.created_ts);
    if (!is_live(e.dst_key)) stub_refs.emplace_back(e.dst_key, e.created_ts);
  }
  std::sort(stub_refs.begin(), stub_refs.end());

  // ---- sessions (runs) and labels (scopes, tasks) ----
  Dictionary runs, labels;
  for (const NodeRecord& n : state.nodes) {
    runs.Add(n.run);
    labels.Add(n.scope);
    labels.Add(n.task);
  }
  for (const EdgeRecord& e : state.edges) {
    runs.Add(e.run);
    labels.Add(e.task);
  }
  for (const KvRecord& kv : state.kv) {
    runs.Add(kv.run);
    labels.Add(kv.task);
  }
  runs.Seal();
  labels.Seal();
  const uint32_t session_count = static_cast<uint32_t>(runs.items().size());

  std::vector<WNode> nodes;
  nodes.reserve(live.size() + stub_refs.size());
  for (const NodeRecord* n : live) {
    WNode w;
    w.key = n->key;
    w.id = n->id;
    w.type = static_cast<uint8_t>(n->type);
    w.session = runs.IndexOf(n->run);
    w.confidence = n->confidence;
    w.created_ts = n->created_ts;
    w.updated_ts = n->updated_ts;
    w.content = n->content;
    w.meta = n->meta;
    w.scope = n->scope;
    w.task = n->task;
    if (!n->vector.empty()) w.vector = &n->vector;
    nodes.push_back(w);
  }
  uint32_t stub_count = 0;
  for (size_t k = 0; k < stub_refs.size(); ++k) {
    if (k > 0 && stub_refs[k].first == stub_refs[k - 1].first) continue;
    WNode w;
    w.key = stub_refs[k].first;  // the smallest created_ts of its edges (sorted pairs)
    w.id = NodeIdForKey(w.key);
    w.type = static_cast<uint8_t>(NodeType::kEntity);
    w.confidence = 0.0f;
    w.created_ts = w.updated_ts = stub_refs[k].second;
    w.meta = kStubMeta;
    w.stub = true;
    nodes.push_back(w);
    ++stub_count;
  }
  if (nodes.size() > UINT32_MAX - 1) return Status::InvalidArgument("too many nodes");
  const uint32_t n = static_cast<uint32_t>(nodes.size());
  // Dense order: (session, key), so each session is one node range (session index).
  std::sort(nodes.begin(), nodes.end(), [](const WNode& a, const WNode& b) {
    return std::tie(a.session, a.key) < std::tie(b.session, b.key);
  });
  std::vector<uint32_t> by_key(n);
  std::iota(by_key.begin(), by_key.end(), 0u);
  std::sort(by_key.begin(), by_key.end(),
            [&](uint32_t a, uint32_t b) { return nodes[a].key < nodes[b].key; });
  key_index.clear();
  key_index.reserve(n);
  for (uint32_t i = 0; i < n; ++i) key_index.emplace(nodes[i].key, i);
  auto dense_of = [&](std::string_view key) { return key_index.at(key); };

  // ---- relations and edges ----
  // Custom relations are renumbered 64 + rank in bytewise name order, so the file
  // does not depend on the order in which the store defined them (FORMAT.md §5).
  std::vector<std::string> rel_names(kRelationSlots);
  for (int r = 0; r < kBuiltinRelationCount; ++r) {
    rel_names[r] = BuiltinRelationName(static_cast<RelationId>(r));
  }
  std::vector<std::pair<std::string_view, RelationId>> custom;  // (name, store id)
  std::vector<bool> seen(kRelationSlots);
  for (const auto& [id, name] : state.relations) {
    if (id >= kBuiltinRelationCount && id < kFirstCustomRelation) {
      return Status::InvalidArgument("relation id " + std::to_string(id) + " is reserved");
    }
    if (id < kFirstCustomRelation) continue;
    if (name.empty() || seen[id]) {
      return Status::InvalidArgument("relation id " + std::to_string(id) +
                                     (name.empty() ? " has no name" : " defined twice"));
    }
    seen[id] = true;
    custom.emplace_back(name, id);
  }
  std::sort(custom.begin(), custom.end());
  // file_rel[store id] = file id; 0xFFFF: undefined.
  std::vector<uint16_t> file_rel(kRelationSlots, 0xFFFF);
  for (int r = 0; r < kBuiltinRelationCount; ++r) file_rel[r] = static_cast<uint16_t>(r);
  for (size_t k = 0; k < custom.size(); ++k) {
    if (k > 0 && custom[k].first == custom[k - 1].first) {
      return Status::InvalidArgument("relation " + std::string(custom[k].first) +
                                     " defined twice");
    }
    // At most 192 distinct store ids exist in 64..255, so the rank fits.
    const size_t file_id = kFirstCustomRelation + k;
    rel_names[file_id] = custom[k].first;
    file_rel[custom[k].second] = static_cast<uint16_t>(file_id);
  }
  std::vector<WEdge> edges(state.edges.size());
  for (size_t k = 0; k < edges.size(); ++k) {
    const EdgeRecord& e = state.edges[k];
    if (file_rel[e.rel] == 0xFFFF) {
      return Status::InvalidArgument("edge " + e.src_key + " -> " + e.dst_key +
                                     ": undefined relation " + std::to_string(e.rel));
    }
    if (!std::isfinite(e.weight)) {
      return Status::InvalidArgument("edge " + e.src_key + " -> " + e.dst_key + ": weight not finite");
    }
    edges[k] = {dense_of(e.src_key), dense_of(e.dst_key), static_cast<RelationId>(file_rel[e.rel]),
                &e};
  }
  std::sort(edges.begin(), edges.end(), [](const WEdge& a, const WEdge& b) {
    return std::tie(a.src, a.rel, a.dst) < std::tie(b.src, b.rel, b.dst);
  });
  for (size_t k = 1; k < edges.size(); ++k) {
    if (edges[k].src == edges[k - 1].src && edges[k].rel == edges[k - 1].rel &&
        edges[k].dst == edges[k - 1].dst) {
      return Status::InvalidArgument("duplicate edge " + edges[k].rec->src_key + " -> " +
                                     edges[k].rec->dst_key);
    }
  }
  if (edges.size() > UINT32_MAX - 1) return Status::InvalidArgument("too many edges");
  const uint32_t m = static_cast<uint32_t>(edges.size());

  // ---- content block: every content, then every non-empty meta ----
  std::string raw;
  std::vector<NodeEntry> records(n);
  bool any_vector = false;
  int64_t newest = 0;
  bool have_ts = false;
  auto see_ts = [&](int64_t ts) {
    newest = have_ts ? std::max(newest, ts) : ts;
    have_ts = true;
  };
  for (uint32_t i = 0; i < n; ++i) {
    const WNode& w = nodes[i];
    NodeEntry& r = records[i];
    r.type = w.type;
    r.session = w.session;
    r.confidence = w.confidence;
    r.timestamp = w.created_ts;
    r.content_offset = raw.size();
    r.content_length = static_cast<uint32_t>(w.content.size());
    raw.append(w.content);
    if (w.vector) {
      r.vector_offset = static_cast<uint64_t>(i) * dim * sizeof(float);
      any_vector = true;
    }
    see_ts(w.created_ts);
    see_ts(w.updated_ts);
  }
  for (uint32_t i = 0; i < n; ++i) {
    std::string_view meta = nodes[i].meta;
    if (meta.empty() || meta == kEmptyMeta) continue;
    records[i].meta_offset = raw.size();
    records[i].meta_length = static_cast<uint32_t>(meta.size());
    raw.append(meta);
  }
  for (const WEdge& e : edges) {
    see_ts(e.rec->created_ts);
    see_ts(e.rec->updated_ts);
  }
  for (const KvRecord& kv : state.kv) see_ts(kv.ts);
  if (raw.size() > UINT32_MAX) return Status::InvalidArgument("content: larger than 4 GiB");
  std::string stored;
  if (options.compress) {
    AMEM_RETURN_IF_ERROR(Compress(raw, &stored));
  } else {
    stored = raw;
  }

  // ---- header, records, content, vectors ----
  Header h;
  h.flags = static_cast<uint16_t>((any_vector ? kFlagHasVectors : 0) | kFlagHasIndexes |
                                  (options.compress ? kFlagCompressed : 0));
  h.node_count = n;
  h.edge_count = m;
  h.dimension = static_cast<uint16_t>(dim);
  h.session_count = static_cast<uint16_t>(std::min<uint32_t>(session_count, 0xFFFF));
  h.content_offset = Header::kEncodedLength + static_cast<uint64_t>(n) * NodeEntry::kEncodedLength +
                     static_cast<uint64_t>(m) * EdgeEntry::kEncodedLength;
  h.content_length = stored.size();
  h.content_uncompressed = static_cast<uint32_t>(raw.size());
  h.vector_offset = AlignUp(h.content_offset + stored.size(), kVectorAlignment);
  const uint64_t vector_bytes =
      any_vector ? static_cast<uint64_t>(n) * dim * sizeof(float) : 0;
  h.index_offset = AlignUp(h.vector_offset + vector_bytes, kBlockAlignment);
  h.features = (options.term_index ? kFeatureTermIndex | kFeatureDocLengths : 0) |
               (options.extensions ? kFeatureExtensions : 0) |
               (options.checksum ? kFeatureChecksum : 0);


  // ---- index blocks, ascending tags ----
  std::vector<Block> blocks;
  std::string body;
  {  // 0x01 type index
    body.clear();
    const size_t bits = (n + 7) / 8;
    PutFixed32(&body, kNodeTypeCount);
    body.append(bits * kNodeTypeCount, '\0');
    for (uint32_t i = 0; i < n; ++i) {
      body[4 + nodes[i].type * bits + i / 8] |= static_cast<char>(1u << (i % 8));
    }
    AMEM_RETURN_IF_ERROR(AddBlock(&blocks, BlockTag::kTypeIndex, &body));
  }
  {  // 0x02 session index
    body.clear();
    PutFixed32(&body, session_count);
    uint32_t i = 0;
    for (uint32_t s = 0; s < session_count; ++s) {
      uint32_t begin = i;
      while (i < n && nodes[i].session == s) ++i;
      PutFixed32(&body, s);
      PutFixed32(&body, begin);
      PutFixed32(&body, i);
    }
    AMEM_RETURN_IF_ERROR(AddBlock(&blocks, BlockTag::kSessionIndex, &body));
  }
  {  // 0x03 time index
    std::vector<uint32_t> order(n);
    std::iota(order.begin(), order.end(), 0u);
    std::sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
      return std::tie(nodes[a].created_ts, a) < std::tie(nodes[b].created_ts, b);
    });
    body.clear();
    PutFixed32(&body, n);
    for (uint32_t i : order) {
      PutFixed64(&body, static_cast<uint64_t>(nodes[i].created_ts));
      PutFixed32(&body, i);
    }
    AMEM_RETURN_IF_ERROR(AddBlock(&blocks, BlockTag::kTimeIndex, &body));
  }
  {  // 0x04 cluster map: no clusters (k = 0)
    body.clear();
    PutFixed32(&body, 0);
    PutFixed32(&body, dim);
    AMEM_RETURN_IF_ERROR(AddBlock(&blocks, BlockTag::kClusterMap, &body));
  }
  if (options.term_index) {  // 0x05, 0x06
    std::vector<std::string_view> contents(n), metas(n);
    for (uint32_t i = 0; i < n; ++i) {
      contents[i] = nodes[i].content;
      metas[i] = nodes[i].meta == kEmptyMeta ? std::string_view() : nodes[i].meta;
    }
    std::string doc_lengths;
    AMEM_RETURN_IF_ERROR(BuildTermIndex(contents, metas, &body, &doc_lengths));
    AMEM_RETURN_IF_ERROR(AddBlock(&blocks, BlockTag::kTermIndex, &body));
    AMEM_RETURN_IF_ERROR(AddBlock(&blocks, BlockTag::kDocLengths, &doc_lengths));
  }
  if (options.extensions) {
    body.clear();  // 0x10 info
    PutFixed64(&body, static_cast<uint64_t>(newest));
    PutFixed32(&body, session_count);
    PutFixed32(&body, stub_count);
    PutFixed32(&body, static_cast<uint32_t>(state.kv.size()));
    PutFixed32(&body, 0);
    AMEM_RETURN_IF_ERROR(AddBlock(&blocks, BlockTag::kInfo, &body));

    body.clear();  // 0x11 node ids
    std::vector<uint32_t> by_id(n);
    std::iota(by_id.begin(), by_id.end(), 0u);
    std::sort(by_id.begin(), by_id.end(), [&](uint32_t a, uint32_t b) {
      return std::tie(nodes[a].id, a) < std::tie(nodes[b].id, b);
    });
    for (const WNode& w : nodes) PutFixed64(&body, w.id);
    for (uint32_t i : by_id) PutFixed32(&body, i);
    AMEM_RETURN_IF_ERROR(AddBlock(&blocks, BlockTag::kNodeIds, &body));

    body.clear();  // 0x12 node keys
    for (uint32_t i : by_key) PutFixed32(&body, i);
    AMEM_RETURN_IF_ERROR(PutStringList(&body, nodes, [](const WNode& w) { return w.key; }));
    AMEM_RETURN_IF_ERROR(AddBlock(&blocks, BlockTag::kNodeKeys, &body));

    body.clear();  // 0x13 relation names
    AMEM_RETURN_IF_ERROR(
        PutStringList(&body, rel_names, [](const std::string& s) { return std::string_view(s); }));
    AMEM_RETURN_IF_ERROR(AddBlock(&blocks, BlockTag::kRelationNames, &body));

    body.clear();  // 0x14 type names
    std::vector<std::string_view> type_names;
    for (int t = 0; t < kNodeTypeCount; ++t) {
      type_names.push_back(NodeTypeName(static_cast<NodeType>(t)));
    }
    AMEM_RETURN_IF_ERROR(PutStringList(&body, type_names, Identity));
    AMEM_RETURN_IF_ERROR(AddBlock(&blocks, BlockTag::kTypeNames, &body));

    body.clear();  // 0x15 runs
    AMEM_RETURN_IF_ERROR(PutStringList(&body, runs.items(), Identity));
    AMEM_RETURN_IF_ERROR(AddBlock(&blocks, BlockTag::kRuns, &body));

    body.clear();  // 0x16 labels
    AMEM_RETURN_IF_ERROR(PutStringList(&body, labels.items(), Identity));
    AMEM_RETURN_IF_ERROR(AddBlock(&blocks, BlockTag::kLabels, &body));

    body.clear();  // 0x17 node attributes
    for (const WNode& w : nodes) {
      PutFixed64(&body, static_cast<uint64_t>(w.updated_ts));
      PutFixed32(&body, labels.IndexOf(w.scope));
      PutFixed32(&body, labels.IndexOf(w.task));
      PutFixed32(&body, w.stub ? kNodeFlagStub : 0);
    }
    AMEM_RETURN_IF_ERROR(AddBlock(&blocks, BlockTag::kNodeAttrs, &body));

    body.clear();  // 0x18 edge attributes
    for (const WEdge& e : edges) {
      PutFixed64(&body, static_cast<uint64_t>(e.rec->created_ts));
      PutFixed64(&body, static_cast<uint64_t>(e.rec->updated_ts));
      PutFixed32(&body, runs.IndexOf(e.rec->run));
      PutFixed32(&body, labels.IndexOf(e.rec->task));
    }
    AMEM_RETURN_IF_ERROR(AddBlock(&blocks, BlockTag::kEdgeAttrs, &body));

    body.clear();  // 0x19 edge payloads
    AMEM_RETURN_IF_ERROR(PutStringList(
        &body, edges, [](const WEdge& e) { return std::string_view(e.rec->payload); }));
    AMEM_RETURN_IF_ERROR(AddBlock(&blocks, BlockTag::kEdgePayloads, &body));

    body.clear();  // 0x1A kv, sorted by (scope, ns, key)
    std::vector<const KvRecord*> kv(state.kv.size());
    for (size_t k = 0; k < kv.size(); ++k) kv[k] = &state.kv[k];
    std::sort(kv.begin(), kv.end(), [](const KvRecord* a, const KvRecord* b) {
      return std::tie(a->scope, a->ns, a->key) < std::tie(b->scope, b->ns, b->key);
    });
    std::vector<std::string_view> kv_strings;
    for (size_t k = 0; k < kv.size(); ++k) {
      if (k > 0 && std::tie(kv[k]->scope, kv[k]->ns, kv[k]->key) ==
                       std::tie(kv[k - 1]->scope, kv[k - 1]->ns, kv[k - 1]->key)) {
        return Status::InvalidArgument("duplicate kv entry " + kv[k]->key);
      }
      kv_strings.insert(kv_strings.end(), {kv[k]->scope, kv[k]->ns, kv[k]->key, kv[k]->value});
    }
    PutFixed32(&body, static_cast<uint32_t>(kv.size()));
    for (const KvRecord* r : kv) {
      PutFixed64(&body, static_cast<uint64_t>(r->ts));
      PutFixed32(&body, runs.IndexOf(r->run));
      PutFixed32(&body, labels.IndexOf(r->task));
    }
    AMEM_RETURN_IF_ERROR(PutStringList(&body, kv_strings, Identity));
    AMEM_RETURN_IF_ERROR(AddBlock(&blocks, BlockTag::kKv, &body));

    body.clear();  // 0x1B out index
    {
      uint32_t j = 0;
      for (uint32_t i = 0; i <= n; ++i) {
        while (j < m && edges[j].src < i) ++j;
        PutFixed32(&body, j);
      }
    }
    AMEM_RETURN_IF_ERROR(AddBlock(&blocks, BlockTag::kOutIndex, &body));

    body.clear();  // 0x1C in index: counting sort by target, then (rel, source) within
    {
      std::vector<uint32_t> start(static_cast<size_t>(n) + 1, 0);
      for (const WEdge& e : edges) ++start[e.dst + 1];
      for (uint32_t i = 0; i < n; ++i) start[i + 1] += start[i];
      std::vector<uint32_t> list(m), fill(start.begin(), start.end() - 1);
      for (uint32_t j = 0; j < m; ++j) list[fill[edges[j].dst]++] = j;
      for (uint32_t i = 0; i < n; ++i) {
        if (start[i + 1] - start[i] < 2) continue;
        // (rel, source) is unique per target, so a plain sort is deterministic.
        std::sort(list.begin() + start[i], list.begin() + start[i + 1], [&](uint32_t a, uint32_t b) {
          return std::tie(edges[a].rel, edges[a].src) < std::tie(edges[b].rel, edges[b].src);
        });
      }
      for (uint32_t v : start) PutFixed32(&body, v);
      for (uint32_t v : list) PutFixed32(&body, v);
    }
    AMEM_RETURN_IF_ERROR(AddBlock(&blocks, BlockTag::kInIndex, &body));
  }
  std::string file;
  uint64_t total = h.index_offset + (options.checksum ? kBlockHeaderLength + 8 : 0);
  for (const Block& b : blocks) total += kBlockHeaderLength + AlignUp(b.body.size(), kBlockAlignment);
  file.reserve(total);
  h.EncodeTo(&file);
  for (const NodeEntry& r : records) r.EncodeTo(&file);
  for (const WEdge& e : edges) EdgeEntry{e.src, e.dst, e.rel, e.rec->weight}.EncodeTo(&file);
  file.append(stored);
  file.resize(h.vector_offset, '\0');
  if (any_vector) {
    for (uint32_t i = 0; i < n; ++i) {
      if (nodes[i].vector) {
        // Little-endian host (static_assert above): the floats' bytes are the format's.
        file.append(reinterpret_cast<const char*>(nodes[i].vector->data()), dim * sizeof(float));
      } else {
        file.append(dim * sizeof(float), '\0');
      }
    }
  }
  file.resize(h.index_offset, '\0');
  for (const Block& b : blocks) AppendBlock(&file, b.tag, b.body);
  if (options.checksum) {  // 0x1F, over every byte before it
    body.clear();
    PutFixed64(&body, Hash64(file));
    AppendBlock(&file, BlockTag::kChecksum, body);
  }
  return file;
}

Status WriteFileAtomic(const std::string& path, std::string_view data) {
  auto io_error = [](const std::string& what, const std::string& p) {
    return Status::IOError(what + " " + p + ": " + std::strerror(errno));
  };
  // A temp name of our own (O_EXCL): two exports to one path never write into, or
  // rename, each other's half-written file.
  std::string tmp;
  int fd = -1;
  for (int attempt = 0; fd < 0; ++attempt) {
    tmp = TempPathFor(path);
    fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd < 0 && (errno != EEXIST || attempt == 8)) return io_error("create", tmp);
  }
  auto fail = [&](const std::string& what) {
    Status s = io_error(what, tmp);
    if (fd >= 0) ::close(fd);
    ::unlink(tmp.c_str());
    return s;
  };
  size_t done = 0;
  while (done < data.size()) {
    ssize_t w = ::write(fd, data.data() + done, data.size() - done);
    if (w < 0) {
      if (errno == EINTR) continue;
      return fail("write");
    }
    done += static_cast<size_t>(w);
  }
  if (::fsync(fd) != 0) return fail("fsync");
  const int closed = ::close(fd);
  fd = -1;
  if (closed != 0) return fail("close");
  if (::rename(tmp.c_str(), path.c_str()) != 0) return fail("rename");
  // The rename is durable only once the directory entry is.
  std::string dir = ".";
  if (size_t slash = path.rfind('/'); slash != std::string::npos) {
    dir = slash == 0 ? "/" : path.substr(0, slash);
  }
  int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd < 0) return io_error("open directory", dir);
  int rc = ::fsync(dfd);
  ::close(dfd);
  if (rc != 0) return io_error("fsync directory", dir);
  return Status::OK();
}

std::string TempPathFor(const std::string& path) {
  static std::atomic<uint64_t> counter{0};
  // Process id, a per-process counter and random bits: unique across processes,
  // threads and pid reuse; O_EXCL catches the rest.
  uint64_t salt = (static_cast<uint64_t>(std::random_device{}()) << 32) ^
                  counter.fetch_add(1, std::memory_order_relaxed);
  char suffix[64];
  std::snprintf(suffix, sizeof(suffix), "%s%ld.%016llx", kTempInfix,
                static_cast<long>(::getpid()), static_cast<unsigned long long>(salt));
  return path + suffix;
}

}  // namespace amem::snapshot
