#include "query/revise.h"

#include <algorithm>
#include <deque>
#include <string>
#include <unordered_map>

#include "query/internal/cog_graph.h"
#include "query/internal/negation.h"
#include "query/resolve.h"
#include "snapshot/reader.h"

namespace amem::query {

namespace {

struct State {
  uint32_t depth = 0;
  uint32_t total = 0;      // support edges
  uint32_t remaining = 0;  // support edges from nodes not (yet) fallen
  bool fallen = false;
  bool retracted = false;
};

}  // namespace

Result<ReviseResult> Revise(const snapshot::Reader& r, std::vector<uint32_t> nodes,
                            const ReviseOptions& options) {
  for (uint32_t n : nodes) {
    if (n >= r.node_count()) {
      return Status::InvalidArgument("revise: node " + std::to_string(n) + " out of range");
    }
  }
  std::sort(nodes.begin(), nodes.end());
  nodes.erase(std::unique(nodes.begin(), nodes.end()), nodes.end());

  // Only reached nodes get state: a cascade is usually tiny next to V, and a map
  // avoids touching V-sized scratch (page faults dominate small queries).
  std::unordered_map<uint32_t, State> state;
  state.reserve(64 + nodes.size() * 4);
  std::deque<uint32_t> queue;
  for (uint32_t n : nodes) {
    State& s = state[n];
    s.fallen = s.retracted = true;
    queue.push_back(n);
  }
  while (!queue.empty()) {
    uint32_t u = queue.front();
    queue.pop_front();
    uint32_t next_depth = state[u].depth + 1;
    ForEachDependent(r, u, [&](uint32_t w, uint32_t) {
      if (w == u) return;  // a self-loop is no support
      auto [it, inserted] = state.try_emplace(w);
      State& s = it->second;
      if (inserted) {
        s.depth = next_depth;
        s.total = s.remaining = SupportEdgeCount(r, w);
      }
      if (s.retracted) return;
      // This edge is one of w's support edges, now from a fallen node.
      if (s.remaining > 0) --s.remaining;
      if (s.remaining == 0 && !s.fallen) {
        s.fallen = true;
        queue.push_back(w);
      }
    });
  }

  ReviseResult out;
  std::vector<ReviseRow> rows;
  for (const auto& [node, s] : state) {
    if (s.retracted) continue;
    ReviseRow row;
    row.node.index = node;
    row.depth = s.depth;
    row.falls = s.fallen;
    row.support_total = s.total;
    row.support_lost = s.total - s.remaining;
    row.confidence = r.confidence(node);
    row.confidence_loss =
        s.fallen ? row.confidence
                 : row.confidence * static_cast<float>(row.support_lost) /
                       static_cast<float>(std::max<uint32_t>(s.total, 1));
    rows.push_back(row);
  }
  // The map's order is arbitrary; this sort fixes every tie.
  std::sort(rows.begin(), rows.end(), [](const ReviseRow& a, const ReviseRow& b) {
    if (a.confidence_loss != b.confidence_loss) return a.confidence_loss > b.confidence_loss;
    return a.node.index < b.node.index;
  });
  out.affected_count = rows.size();
  for (const ReviseRow& row : rows) {
    out.total_impact += row.confidence_loss;
    if (!row.falls) continue;
    ++out.fallen_count;
    NodeType t = r.type(row.node.index);
    if (t == NodeType::kInference) {
      if (out.unsupported_inferences.size() < options.limit) {
        out.unsupported_inferences.push_back(row);
      }
      ++out.unsupported_inference_count;
    } else if (t == NodeType::kDecision) {
      if (out.unsupported_decisions.size() < options.limit) {
        out.unsupported_decisions.push_back(row);
      }
      ++out.unsupported_decision_count;
    }
  }
  if (rows.size() > options.limit) rows.resize(options.limit);
  out.affected = std::move(rows);
  for (auto* list : {&out.affected, &out.unsupported_inferences, &out.unsupported_decisions}) {
    for (ReviseRow& row : *list) row.node = MakeNodeRow(r, row.node.index);
  }
  for (uint32_t n : nodes) out.retracted.push_back(MakeNodeRow(r, n));
  return out;
}

Result<std::vector<uint32_t>> ContradictedBy(const snapshot::Reader& r,
                                             std::string_view hypothesis) {
  AMEM_RETURN_IF_ERROR(r.EnsureContent());
  TermSignature hyp;
  hyp.Assign(hypothesis);
  if (hyp.terms.empty()) {
    return Status::InvalidArgument("revise: the hypothesis has no content words");
  }
  std::vector<uint32_t> out;
  TermSignature sig;
  auto check = [&](uint32_t i) {
    if (r.is_stub(i)) return;
    sig.Assign(r.content(i));
    if (Contradicts(hyp, sig)) out.push_back(i);
  };
  if (r.has_term_index()) {
    // A contradicted node contains every content word, so the postings of the
    // rarest one hold all candidates.
    std::optional<uint32_t> rarest;
    for (const std::string& token : DistinctTokens(hypothesis)) {
      if (IsNegationWord(token)) continue;
      std::optional<uint32_t> t = r.FindTerm(token);
      if (!t) return out;  // no node contains this word
      if (!rarest || r.doc_frequency(*t) < r.doc_frequency(*rarest)) rarest = t;
    }
    snapshot::PostingList pl = r.postings(*rarest, snapshot::Field::kContent);
    for (uint32_t k = 0; k < pl.size(); ++k) check(pl.node(k));
    std::sort(out.begin(), out.end());
  } else {
    for (uint32_t i = 0; i < r.node_count(); ++i) check(i);
  }
  AMEM_RETURN_IF_ERROR(r.ContentStatus());  // a damaged block read as "" matches nothing
  return out;
}

Result<std::vector<uint32_t>> RetractedNodes(const snapshot::Reader& reader,
                                             const std::string& node,
                                             const std::string& hypothesis) {
  if (node.empty()) return ContradictedBy(reader, hypothesis);
  Result<uint32_t> n = ResolveNode(reader, node);
  if (!n.ok()) return n.status();
  return std::vector<uint32_t>{*n};
}

}  // namespace amem::query
