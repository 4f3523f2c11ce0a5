#include "query/internal/cog_graph.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "common/tokenizer.h"

namespace amem::query {

uint32_t SupportEdgeCount(const snapshot::Reader& r, uint32_t y) {
  uint32_t n = 0;
  ForEachSupport(r, y, [&](uint32_t, uint32_t) { ++n; });
  return n;
}

uint32_t DistinctSupporters(const snapshot::Reader& r, uint32_t y, uint32_t cap) {
  // Supporters are few; a small sorted vector beats a set. Once `cap` distinct ones
  // are seen the answer is known.
  std::vector<uint32_t> seen;
  ForEachSupport(r, y, [&](uint32_t s, uint32_t) {
    if (seen.size() >= cap) return;
    auto it = std::lower_bound(seen.begin(), seen.end(), s);
    if (it == seen.end() || *it != s) seen.insert(it, s);
  });
  return static_cast<uint32_t>(std::min<size_t>(seen.size(), cap));
}

bool Linked(const snapshot::Reader& r, uint32_t a, uint32_t b, RelationId rel) {
  return r.FindEdge(a, rel, b).has_value() || r.FindEdge(b, rel, a).has_value();
}

bool IsSuperseded(const snapshot::Reader& r, uint32_t i) {
  auto [kb, ke] = r.InEdgesWithRel(i, kSupersedes);
  for (uint32_t k = kb; k < ke; ++k) {
    if (r.in_source(k) != i) return true;
  }
  return false;
}

std::vector<std::string> DistinctTokens(std::string_view text) {
  std::vector<std::string> out;
  ForEachToken(text, [&](std::string_view t) {
    if (std::find(out.begin(), out.end(), t) == out.end()) out.emplace_back(t);
  });
  return out;
}

namespace {

// Per-node counts of how many query tokens occur in its content, plus (for BM25)
// term frequencies. Fast path: the term index; slow path: tokenize every content.
struct TermHits {
  std::vector<uint32_t> nodes;  // nodes with at least one hit, ascending
  std::vector<double> bm25;     // parallel to nodes
  std::vector<uint32_t> matched;  // distinct query tokens found, parallel to nodes
};

double Idf(double n, double df) { return std::log((n - df + 0.5) / (df + 0.5) + 1.0); }

TermHits CollectHits(const snapshot::Reader& r, const std::vector<std::string>& tokens) {
  constexpr double kK1 = 1.2, kB = 0.75;
  const uint32_t n = r.node_count();
  std::vector<double> score(n, 0.0);
  std::vector<uint32_t> matched(n, 0);
  if (r.has_term_index() && r.has_doc_lengths()) {
    double avgdl = r.average_doc_length() > 0 ? r.average_doc_length() : 1.0;
    for (const std::string& tok : tokens) {
      std::optional<uint32_t> t = r.FindTerm(tok);
      if (!t) continue;
      snapshot::PostingList pl = r.postings(*t, snapshot::Field::kContent);
      double idf = Idf(r.document_count(), r.doc_frequency(*t));
      for (uint32_t k = 0; k < pl.size(); ++k) {
        uint32_t node = pl.node(k);
        double tf = pl.tf(k);
        double norm = 1.0 - kB + kB * r.doc_length(node) / avgdl;
        score[node] += idf * tf * (kK1 + 1.0) / (tf + kK1 * norm);
        ++matched[node];
      }
    }
  } else {
    // Scan: per node token counts, then the same formula with df computed here.
    std::vector<uint32_t> doc_len(n, 0);
    std::vector<uint32_t> tf(static_cast<size_t>(n) * tokens.size(), 0);
    std::vector<uint32_t> df(tokens.size(), 0);
    uint64_t total = 0;
    for (uint32_t i = 0; i < n; ++i) {
      ForEachToken(r.content(i), [&](std::string_view t) {
        ++doc_len[i];
        for (size_t q = 0; q < tokens.size(); ++q) {
          if (tokens[q] == t) ++tf[i * tokens.size() + q];
        }
      });
      total += doc_len[i];
      for (size_t q = 0; q < tokens.size(); ++q) df[q] += tf[i * tokens.size() + q] > 0;
    }
    double avgdl = n > 0 && total > 0 ? static_cast<double>(total) / n : 1.0;
    for (uint32_t i = 0; i < n; ++i) {
      for (size_t q = 0; q < tokens.size(); ++q) {
        double f = tf[i * tokens.size() + q];
        if (f == 0) continue;
        double norm = 1.0 - kB + kB * doc_len[i] / avgdl;
        score[i] += Idf(n, df[q]) * f * (kK1 + 1.0) / (f + kK1 * norm);
        ++matched[i];
      }
    }
  }
  TermHits hits;
  for (uint32_t i = 0; i < n; ++i) {
    if (matched[i] == 0) continue;
    hits.nodes.push_back(i);
    hits.bm25.push_back(score[i]);
    hits.matched.push_back(matched[i]);
  }
  return hits;
}

}  // namespace

std::optional<uint32_t> BestTextMatch(const snapshot::Reader& r, std::string_view text) {
  std::vector<std::string> tokens = DistinctTokens(text);
  if (tokens.empty()) return std::nullopt;
  TermHits hits = CollectHits(r, tokens);
  std::optional<uint32_t> best;
  double best_score = 0;
  for (size_t k = 0; k < hits.nodes.size(); ++k) {
    // Strictly greater: nodes ascend, so ties keep the smaller index.
    if (!best || hits.bm25[k] > best_score) {
      best = hits.nodes[k];
      best_score = hits.bm25[k];
    }
  }
  return best;
}

std::vector<uint32_t> NodesMatchingText(const snapshot::Reader& r, std::string_view text) {
  std::vector<std::string> tokens = DistinctTokens(text);
  if (tokens.empty()) return {};
  TermHits hits = CollectHits(r, tokens);
  std::vector<uint32_t> all;
  for (size_t k = 0; k < hits.nodes.size(); ++k) {
    if (hits.matched[k] == tokens.size()) all.push_back(hits.nodes[k]);
  }
  return all.empty() ? hits.nodes : all;
}

}  // namespace amem::query
