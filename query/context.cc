// context (QUERIES.md #6). Choices where QUERIES.md is silent:
// - "Nearest first" is BFS discovery order from all seeds at once; the cut stops at
//   the first node that does not fit (it never skips a near node to fit a far one).
// - An edge is charged to the later of its two endpoints, so every edge shown joins
//   two shown nodes.
// - Tokens are estimated as ceil(bytes / 4) per rendered line (or JSON element):
//   no tokenizer is assumed.
#include "query/context.h"

#include <cstdio>

#include "common/utf8.h"
#include "query/neighbors.h"
#include "query/scratch.h"
#include "snapshot/reader.h"

namespace amem::query {

namespace {

size_t Tokens(size_t bytes) { return (bytes + 3) / 4; }

std::string ContentCut(const snapshot::Reader& reader, uint32_t i, size_t max_bytes) {
  std::string_view content = reader.content(i);
  std::string out(Utf8Prefix(content, max_bytes));
  if (out.size() < content.size()) out += "\xe2\x80\xa6";
  return out;
}

std::string NodeLine(const snapshot::Reader& reader, uint32_t i, size_t max_bytes) {
  char conf[16];
  std::snprintf(conf, sizeof(conf), "%.2f", reader.confidence(i));
  std::string line = "- " + PromptKey(reader.key(i)) + " (" +
                     std::string(reader.type_name(reader.type_code(i))) + ", " + conf +
                     "): " + PromptQuote(ContentCut(reader, i, max_bytes)) + "\n";
  return line;
}

std::string EdgeLine(const snapshot::Reader& reader, uint32_t e) {
  const snapshot::Edge edge = reader.edge(e);
  return "- " + PromptKey(reader.key(edge.source)) + " --" +
         std::string(reader.relation_name(edge.rel)) + "--> " +
         PromptKey(reader.key(edge.target)) + "\n";
}

Json ContextNodeJson(const snapshot::Reader& reader, const ContextNode& n, size_t max_bytes) {
  Json row = NodeJson(reader, n.node);
  row["depth"] = n.depth;
  row["confidence"] = reader.confidence(n.node);
  row["content"] = ContentCut(reader, n.node, max_bytes);
  return row;
}

std::string Header(const snapshot::Reader& reader, const ContextResult& r, uint32_t depth) {
  std::string seeds;
  for (size_t k = 0; k < r.seeds.size(); ++k) {
    if (k) seeds += ", ";
    seeds += PromptKey(reader.key(r.seeds[k]));
  }
  return "# amem context: " + std::to_string(r.nodes.size()) + " nodes, " +
         std::to_string(r.edges.size()) + " edges (depth " + std::to_string(depth) +
         ", seeds: " + seeds + "; ~" + std::to_string(r.tokens) + " tokens" +
         (r.truncated ? ", cut to budget" : "") + ")\n";
}

void AppendEscape(std::string* out, unsigned c) {
  char buf[8];
  std::snprintf(buf, sizeof(buf), "\\u%04x", c);
  *out += buf;
}

}  // namespace

std::string PromptQuote(std::string_view s) {
  std::string out;
  out.reserve(s.size() + 2);
  out += '"';
  for (size_t k = 0; k < s.size(); ++k) {
    unsigned char c = static_cast<unsigned char>(s[k]);
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      default:
        if (c < 0x20 || c == 0x7f) {
          AppendEscape(&out, c);
        } else if (c == 0xe2 && k + 2 < s.size() && static_cast<unsigned char>(s[k + 1]) == 0x80 &&
                   (static_cast<unsigned char>(s[k + 2]) == 0xa8 ||
                    static_cast<unsigned char>(s[k + 2]) == 0xa9)) {
          // U+2028 / U+2029: some readers treat them as line breaks.
          AppendEscape(&out, static_cast<unsigned char>(s[k + 2]) == 0xa8 ? 0x2028 : 0x2029);
          k += 2;
        } else {
          out += static_cast<char>(c);
        }
    }
  }
  out += '"';
  return out;
}

std::string PromptKey(std::string_view s) {
  bool bare = !s.empty() && s.find("--") == std::string_view::npos &&
              s.find("\xe2\x80\xa8") == std::string_view::npos &&
              s.find("\xe2\x80\xa9") == std::string_view::npos;
  for (char ch : s) {
    unsigned char c = static_cast<unsigned char>(ch);
    if (c <= 0x20 || c == 0x7f || c == '"' || c == '\\') bare = false;
  }
  return bare ? std::string(s) : PromptQuote(s);
}

ContextResult BuildContext(const snapshot::Reader& reader, const std::vector<uint32_t>& seeds,
                           const ContextOptions& options) {
  ContextResult r;
  NodeMap<uint32_t>& position = ThreadScratch<uint32_t, kScratchA>();  // BFS order
  position.Reset(reader.node_count());
  std::vector<ContextNode> collected;
  for (uint32_t s : seeds) {
    assert(s < reader.node_count());
    if (collected.size() >= options.limit) break;
    if (position.Insert(s, static_cast<uint32_t>(collected.size()))) {
      collected.push_back({s, 0});
      r.seeds.push_back(s);
    }
  }
  bool limited = r.seeds.size() < seeds.size() && collected.size() >= options.limit;
  RelationFilter all;
  for (size_t head = 0; head < collected.size() && !limited; ++head) {
    const ContextNode cur = collected[head];
    if (cur.depth >= options.depth) break;
    ForEachNeighbor(reader, cur.node, Direction::kBoth, all, [&](uint32_t v, uint32_t, bool) {
      if (limited || position.Has(v)) return;
      if (collected.size() >= options.limit) {
        limited = true;
        return;
      }
      position.Set(v, static_cast<uint32_t>(collected.size()));
      collected.push_back({v, cur.depth + 1});
    });
  }

  // Edges, charged to their later endpoint: edge_begin[k] .. edge_begin[k+1].
  std::vector<uint32_t> edges;
  std::vector<size_t> edge_begin;
  edge_begin.reserve(collected.size() + 1);
  for (size_t k = 0; k < collected.size(); ++k) {
    edge_begin.push_back(edges.size());
    uint32_t u = collected[k].node;
    const auto earlier = [&](uint32_t v) { return position.Has(v) && position.Get(v) <= k; };
    for (uint32_t e = reader.out_begin(u); e < reader.out_end(u); ++e) {
      if (earlier(reader.edge_target(e))) edges.push_back(e);
    }
    for (uint32_t q = reader.in_begin(u); q < reader.in_end(u); ++q) {
      uint32_t e = reader.in_edge(q);
      uint32_t v = reader.edge_source(e);
      if (v != u && earlier(v)) edges.push_back(e);
    }
  }
  edge_begin.push_back(edges.size());
  r.collected_nodes = collected.size();
  r.collected_edges = edges.size();

  // The budget: a reserve for the header and section lines, then nearest-first.
  const bool json = options.format == Format::kJson;
  size_t used = json ? Tokens(RenderJson(ContextJson(reader, r, options)).size())
                     : Tokens(Header(reader, r, options.depth).size() + 24) + 4;
  size_t k = 0;
  for (; k < collected.size(); ++k) {
    size_t cost = json ? Tokens(RenderJson(ContextNodeJson(reader, collected[k],
                                                           options.max_content_bytes)).size())
                       : Tokens(NodeLine(reader, collected[k].node,
                                         options.max_content_bytes).size());
    for (size_t q = edge_begin[k]; q < edge_begin[k + 1]; ++q) {
      cost += json ? Tokens(RenderJson(EdgeJson(reader, edges[q])).size())
                   : Tokens(EdgeLine(reader, edges[q]).size());
    }
    if (options.budget_tokens != 0 && used + cost > options.budget_tokens) break;
    used += cost;
  }
  r.nodes.assign(collected.begin(), collected.begin() + k);
  r.edges.assign(edges.begin(), edges.begin() + edge_begin[k]);
  r.tokens = used;
  r.truncated = limited || k < collected.size();
  return r;
}

std::string ContextText(const snapshot::Reader& reader, const ContextResult& result,
                        const ContextOptions& options) {
  std::string out = Header(reader, result, options.depth);
  out += "## nodes\n";
  for (const ContextNode& n : result.nodes) {
    out += NodeLine(reader, n.node, options.max_content_bytes);
  }
  out += "## edges\n";
  for (uint32_t e : result.edges) out += EdgeLine(reader, e);
  return out;
}

Json ContextJson(const snapshot::Reader& reader, const ContextResult& result,
                 const ContextOptions& options) {
  Json doc;
  doc["query"] = "context";
  Json seeds = Json::array();
  for (uint32_t s : result.seeds) seeds.push_back(reader.key(s));
  doc["seeds"] = std::move(seeds);
  doc["depth"] = options.depth;
  doc["tokens"] = result.tokens;
  doc["budget_tokens"] = options.budget_tokens;
  doc["truncated"] = result.truncated;
  doc["collected_nodes"] = result.collected_nodes;
  doc["collected_edges"] = result.collected_edges;
  Json nodes = Json::array();
  for (const ContextNode& n : result.nodes) {
    nodes.push_back(ContextNodeJson(reader, n, options.max_content_bytes));
  }
  doc["nodes"] = std::move(nodes);
  Json edges = Json::array();
  for (uint32_t e : result.edges) edges.push_back(EdgeJson(reader, e));
  doc["edges"] = std::move(edges);
  return doc;
}

}  // namespace amem::query
