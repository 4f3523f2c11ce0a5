// context (docs/QUERIES.md #6). Choices where docs/QUERIES.md is silent:
// - "Nearest first" is BFS discovery order from all seeds at once; the cut stops at
//   the first node that does not fit (it never skips a near node to fit a far one).
// - An edge is charged to the later of its two endpoints, so every edge shown joins
//   two shown nodes.
// - Tokens are estimated as ceil(bytes / 4) of the whole rendered output (no
//   tokenizer is assumed). The header states that estimate of its own output, so
//   its width is found as a fixed point; the count is exact, not a bound.
// - A budget below the skeleton (header and section lines, or the JSON envelope,
//   with no node) cannot be met: BuildContextChecked refuses it, naming the
//   minimum.
#include "query/context.h"

#include <cassert>
#include <cstdio>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "common/utf8.h"
#include "query/internal/neighbors.h"
#include "query/internal/scratch.h"
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

std::string SeedList(const snapshot::Reader& reader, const std::vector<uint32_t>& seeds) {
  std::string out;
  for (size_t k = 0; k < seeds.size(); ++k) {
    if (k) out += ", ";
    out += PromptKey(reader.key(seeds[k]));
  }
  return out;
}

std::string Header(std::string_view seeds, size_t nodes, size_t edges, uint32_t depth,
                   size_t tokens, bool truncated) {
  return "# amem context: " + std::to_string(nodes) + " nodes, " + std::to_string(edges) +
         " edges (depth " + std::to_string(depth) + ", seeds: " + std::string(seeds) +
         "; ~" + std::to_string(tokens) + " tokens" + (truncated ? ", cut to budget" : "") +
         ")\n";
}

constexpr std::string_view kNodesLine = "## nodes\n";
constexpr std::string_view kEdgesLine = "## edges\n";

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

  // The budget, nearest-first. Output bytes = skeleton (header and section lines,
  // or the JSON envelope with empty arrays) + the node and edge lines (JSON: the
  // elements and the commas between them). The skeleton states the output's own
  // token count, so that count is the least fixed point T = ceil(bytes(T) / 4),
  // reached by iterating up from 0 (bytes(T) only grows with T's digits).
  const bool json = options.format == Format::kJson;
  const std::string seed_list = json ? std::string() : SeedList(reader, r.seeds);
  ContextResult envelope;  // JSON: r's fields with empty node and edge arrays
  envelope.seeds = r.seeds;
  envelope.collected_nodes = r.collected_nodes;
  envelope.collected_edges = r.collected_edges;
  const auto skeleton_bytes = [&](size_t nodes, size_t edges, size_t tokens, bool truncated) {
    if (!json) {
      return Header(seed_list, nodes, edges, options.depth, tokens, truncated).size() +
             kNodesLine.size() + kEdgesLine.size();
    }
    envelope.tokens = tokens;
    envelope.truncated = truncated;
    return RenderJson(ContextJson(reader, envelope, options)).size();
  };
  // Bytes of the rendered output with `nodes` nodes whose lines (elements) take
  // node_bytes and `edges` edges taking edge_bytes.
  const auto output_tokens = [&](size_t nodes, size_t node_bytes, size_t edges,
                                 size_t edge_bytes, bool truncated) {
    size_t body = node_bytes + edge_bytes;
    if (json) body += (nodes ? nodes - 1 : 0) + (edges ? edges - 1 : 0);  // commas
    size_t tokens = 0;
    for (;;) {
      size_t next = Tokens(skeleton_bytes(nodes, edges, tokens, truncated) + body);
      if (next <= tokens) return tokens;
      tokens = next;
    }
  };
  const size_t budget = options.budget_tokens;
  r.min_tokens = output_tokens(0, 0, 0, 0, limited || !collected.empty());
  size_t k = 0, node_bytes = 0, edge_bytes = 0;
  size_t used = r.min_tokens;
  for (; k < collected.size(); ++k) {
    size_t nb = node_bytes + (json ? RenderJson(ContextNodeJson(reader, collected[k],
                                                                options.max_content_bytes))
                                             .size() - 1  // RenderJson's newline
                                       : NodeLine(reader, collected[k].node,
                                                  options.max_content_bytes).size());
    size_t eb = edge_bytes;
    for (size_t q = edge_begin[k]; q < edge_begin[k + 1]; ++q) {
      eb += json ? RenderJson(EdgeJson(reader, edges[q])).size() - 1
                 : EdgeLine(reader, edges[q]).size();
    }
    size_t t = output_tokens(k + 1, nb, edge_begin[k + 1], eb,
                             limited || k + 1 < collected.size());
    if (budget != 0 && t > budget) break;
    node_bytes = nb;
    edge_bytes = eb;
    used = t;
  }
  r.nodes.assign(collected.begin(), collected.begin() + k);
  r.edges.assign(edges.begin(), edges.begin() + edge_begin[k]);
  r.tokens = used;
  r.truncated = limited || k < collected.size();
  return r;
}

Result<ContextResult> BuildContextChecked(const snapshot::Reader& reader,
                                          const std::vector<uint32_t>& seeds,
                                          const ContextOptions& options) {
  ContextResult r = BuildContext(reader, seeds, options);
  if (options.budget_tokens != 0 && options.budget_tokens < r.min_tokens) {
    return Status::InvalidArgument(
        "context: a budget of " + std::to_string(options.budget_tokens) +
        " tokens cannot hold " +
        (options.format == Format::kJson ? "the JSON envelope" : "the header and section lines") +
        ", which need " + std::to_string(r.min_tokens) + " for these seeds; give at least " +
        std::to_string(r.min_tokens) + ", or 0 for no limit");
  }
  return r;
}

std::string ContextText(const snapshot::Reader& reader, const ContextResult& result,
                        const ContextOptions& options) {
  std::string out = Header(SeedList(reader, result.seeds), result.nodes.size(),
                           result.edges.size(), options.depth, result.tokens, result.truncated);
  out += kNodesLine;
  for (const ContextNode& n : result.nodes) {
    out += NodeLine(reader, n.node, options.max_content_bytes);
  }
  out += kEdgesLine;
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
