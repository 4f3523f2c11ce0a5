// A writer of the file layout AgenticMemory's own tool writes, written from the
// description in docs/AGENTIC_MEMORY.md (not from its code), for tests, the fuzz
// seeds and the import benchmark. It writes what that tool writes: 72-byte node
// records, 32-byte edge records sorted by (source, target), one size-prefixed LZ4
// block per node, zero-padded f32 vectors, then the index entries 0x01-0x04 and,
// in version 1 with nodes, 0x05/0x06 and header flags 0x3.
#ifndef AMEM_TESTS_SNAPSHOT_AGENTIC_MEMORY_WRITER_H_
#define AMEM_TESTS_SNAPSHOT_AGENTIC_MEMORY_WRITER_H_

#include <lz4.h>

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "common/coding.h"
#include "snapshot/agentic_memory.h"

namespace amem::agentic_test {

// The reader's records; a vector shorter than the dimension is padded with zeros.
using Node = snapshot::agentic::Node;
using Edge = snapshot::agentic::Edge;

struct Graph {
  uint32_t version = 1;  // 0: v0.1 (flags 0, no tags 0x05/0x06)
  uint32_t dimension = 128;
  std::vector<Node> nodes;
  std::vector<Edge> edges;
  bool lz4_matches = false;  // false: literal-only blocks, as the tool's fixtures
};

// One LZ4 block holding `s` as literals only (a valid block for any decoder).
inline std::string Lz4Literals(std::string_view s) {
  std::string out;
  size_t n = s.size();
  out.push_back(static_cast<char>(std::min<size_t>(n, 15) << 4));
  if (n >= 15) {
    size_t rest = n - 15;
    for (; rest >= 255; rest -= 255) out.push_back(static_cast<char>(255));
    out.push_back(static_cast<char>(rest));
  }
  out.append(s);
  return out;
}

inline std::string Lz4Block(std::string_view s, bool matches) {
  if (!matches) return Lz4Literals(s);
  std::string out(LZ4_compressBound(static_cast<int>(s.size())), '\0');
  int n = LZ4_compress_default(s.data(), out.data(), static_cast<int>(s.size()),
                               static_cast<int>(out.size()));
  out.resize(static_cast<size_t>(n));
  return out;
}

// Lower-cased alphanumeric words: enough for a plausible 0x05/0x06 (amem ignores
// both).
inline std::vector<std::string> Words(std::string_view s) {
  std::vector<std::string> out;
  std::string cur;
  for (char c : s) {
    if (std::isalnum(static_cast<unsigned char>(c))) {
      cur.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
    } else if (!cur.empty()) {
      out.push_back(std::move(cur));
      cur.clear();
    }
  }
  if (!cur.empty()) out.push_back(cur);
  return out;
}

inline void PutEntry(std::string* out, uint8_t tag, const std::string& payload) {
  out->push_back(static_cast<char>(tag));
  PutFixed64(out, payload.size());
  out->append(payload);
}

inline std::string Write(const Graph& g) {
  namespace ag = snapshot::agentic;
  const uint64_t n = g.nodes.size(), m = g.edges.size();
  std::vector<std::string> blocks;
  for (const Node& node : g.nodes) {
    std::string b;
    PutFixed32(&b, static_cast<uint32_t>(node.content.size()));
    b += Lz4Block(node.content, g.lz4_matches);
    blocks.push_back(std::move(b));
  }
  std::vector<Edge> edges = g.edges;
  std::stable_sort(edges.begin(), edges.end(), [](const Edge& a, const Edge& b) {
    return a.source != b.source ? a.source < b.source : a.target < b.target;
  });
  const uint64_t edge_table = ag::kHeaderLength + n * ag::kNodeRecordLength;
  const uint64_t content = edge_table + m * ag::kEdgeRecordLength;
  uint64_t content_size = 0;
  for (const std::string& b : blocks) content_size += b.size();
  const bool full = g.version >= 1 && n > 0;

  std::string out;
  out.append("AMEM", 4);
  PutFixed32(&out, g.version);
  PutFixed32(&out, g.dimension);
  PutFixed32(&out, full ? ag::kKnownFlags : 0);
  PutFixed64(&out, n);
  PutFixed64(&out, m);
  PutFixed64(&out, ag::kHeaderLength);
  PutFixed64(&out, edge_table);
  PutFixed64(&out, content);
  PutFixed64(&out, content + content_size);

  uint64_t content_offset = 0;
  size_t next_edge = 0;
  for (size_t i = 0; i < n; ++i) {
    const Node& node = g.nodes[i];
    // The tool's walk: skip edges of smaller sources, count this node's.
    while (next_edge < m && edges[next_edge].source < node.id) ++next_edge;
    const size_t first = next_edge;
    while (next_edge < m && edges[next_edge].source == node.id) ++next_edge;
    PutFixed64(&out, node.id);
    out.push_back(static_cast<char>(node.event_type));
    out.append(3, '\0');
    PutFixed64(&out, node.created_at);
    PutFixed32(&out, node.session);
    PutFloat(&out, node.confidence);
    PutFixed32(&out, node.access_count);
    PutFixed64(&out, node.last_accessed);
    PutFloat(&out, node.decay_score);
    PutFixed64(&out, content_offset);
    PutFixed32(&out, static_cast<uint32_t>(blocks[i].size()));
    PutFixed64(&out, first * ag::kEdgeRecordLength);
    PutFixed16(&out, static_cast<uint16_t>(next_edge - first));
    out.append(6, '\0');
    content_offset += blocks[i].size();
  }
  for (const Edge& e : edges) {
    PutFixed64(&out, e.source);
    PutFixed64(&out, e.target);
    out.push_back(static_cast<char>(e.edge_type));
    out.append(3, '\0');
    PutFloat(&out, e.weight);
    PutFixed64(&out, e.created_at);
  }
  for (const std::string& b : blocks) out += b;
  for (const Node& node : g.nodes) {
    for (uint32_t k = 0; k < g.dimension; ++k) {
      PutFloat(&out, k < node.vector.size() ? node.vector[k] : 0.0f);
    }
  }

  // 0x01 type index: types with nodes only, ids ascending.
  std::map<uint8_t, std::vector<uint64_t>> by_type;
  std::map<uint32_t, std::vector<uint64_t>> by_session;
  std::vector<std::pair<uint64_t, uint64_t>> by_time;
  for (const Node& node : g.nodes) {
    by_type[node.event_type].push_back(node.id);
    by_session[node.session].push_back(node.id);
    by_time.emplace_back(node.created_at, node.id);
  }
  std::string p;
  for (auto& [type, ids] : by_type) {
    std::sort(ids.begin(), ids.end());
    p.push_back(static_cast<char>(type));
    PutFixed64(&p, ids.size());
    for (uint64_t id : ids) PutFixed64(&p, id);
  }
  PutEntry(&out, 0x01, p);
  p.clear();
  std::sort(by_time.begin(), by_time.end());
  PutFixed64(&p, by_time.size());
  for (auto [ts, id] : by_time) {
    PutFixed64(&p, ts);
    PutFixed64(&p, id);
  }
  PutEntry(&out, 0x02, p);
  p.clear();
  PutFixed32(&p, static_cast<uint32_t>(by_session.size()));
  for (auto& [session, ids] : by_session) {
    std::sort(ids.begin(), ids.end());
    PutFixed32(&p, session);
    PutFixed64(&p, ids.size());
    for (uint64_t id : ids) PutFixed64(&p, id);
  }
  PutEntry(&out, 0x03, p);
  p.clear();
  PutFixed32(&p, 0);
  PutFixed32(&p, g.dimension);
  PutEntry(&out, 0x04, p);
  if (!full) return out;

  std::map<std::string, std::map<uint64_t, uint32_t>> postings;
  uint64_t max_id = 0, tokens = 0;
  std::map<uint64_t, uint32_t> lengths;
  for (const Node& node : g.nodes) {
    std::vector<std::string> words = Words(node.content);
    for (const std::string& w : words) ++postings[w][node.id];
    lengths[node.id] = static_cast<uint32_t>(words.size());
    tokens += words.size();
    max_id = std::max(max_id, node.id);
  }
  p.clear();
  PutFixed64(&p, n);
  PutFloat(&p, static_cast<float>(tokens) / static_cast<float>(n));
  PutFixed32(&p, static_cast<uint32_t>(postings.size()));
  for (const auto& [term, list] : postings) {
    PutFixed16(&p, static_cast<uint16_t>(term.size()));
    p += term;
    PutFixed32(&p, static_cast<uint32_t>(list.size()));
    for (auto [id, tf] : list) {
      PutFixed64(&p, id);
      PutFixed32(&p, tf);
    }
  }
  PutEntry(&out, ag::kTagTermIndex, p);
  p.clear();
  PutFixed64(&p, max_id + 1);
  for (uint64_t id = 0; id <= max_id; ++id) PutFixed32(&p, lengths.count(id) ? lengths[id] : 0);
  PutEntry(&out, ag::kTagDocLengths, p);
  return out;
}

// A graph with every event type, every edge type, three sessions, non-zero
// vectors (dimension `dim`), an empty content and a 65,536-byte one.
inline Graph SampleGraph(uint32_t version = 1, uint32_t dim = 4) {
  Graph g;
  g.version = version;
  g.dimension = dim;
  const char* texts[] = {"The store is LMDB",          "Use one transaction per file",
                         "So imports are atomic",      "Correction: two revisions",
                         "How to import a file",       "Session one: migration",
                         "",                           "Compressed content here",
                         "déjà vu: UTF-8 survives"};
  const uint64_t t0 = 1700000000123456;
  for (uint64_t i = 0; i < 9; ++i) {
    Node node;
    node.id = i;
    node.event_type = static_cast<uint8_t>(i % 6);
    node.created_at = t0 + i * 1000001;
    node.session = static_cast<uint32_t>(1 + i / 3);
    node.confidence = 0.5f + 0.05f * static_cast<float>(i);
    node.access_count = static_cast<uint32_t>(i);
    node.last_accessed = node.created_at + 5;
    node.decay_score = 1.0f - 0.1f * static_cast<float>(i);
    node.content = texts[i];
    if (i % 2 == 0 && dim > 0) {
      for (uint32_t k = 0; k < dim; ++k) node.vector.push_back(0.25f * static_cast<float>(i + k));
    }
    g.nodes.push_back(std::move(node));
  }
  std::string& big = g.nodes[7].content;
  while (big.size() < 65536) big += "compressed memory content " + std::to_string(big.size());
  big.resize(65536);
  // Edge types 0-6 plus one more RelatedTo; PartOf is member -> episode (node 5).
  const uint64_t ends[][3] = {{2, 0, 0}, {0, 1, 1}, {3, 0, 2}, {3, 2, 3},
                              {4, 1, 4}, {1, 5, 5}, {0, 1, 6}, {8, 7, 4}};
  for (const auto& [src, dst, type] : ends) {
    Edge e;
    e.source = src;
    e.target = dst;
    e.edge_type = static_cast<uint8_t>(type);
    e.weight = 0.125f * static_cast<float>(type + 1);
    e.created_at = t0 + 77 * (src + 1);
    g.edges.push_back(e);
  }
  return g;
}

}  // namespace amem::agentic_test

#endif  // AMEM_TESTS_SNAPSHOT_AGENTIC_MEMORY_WRITER_H_
