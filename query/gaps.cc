#include "query/gaps.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#include "query/cog_graph.h"
#include "query/topk.h"
#include "snapshot/reader.h"

namespace amem::query {

namespace {

constexpr int64_t kSecondsPerDay = 86400;
constexpr uint32_t kNoNode = std::numeric_limits<uint32_t>::max();

// A gap before formatting: descriptions are built only for the returned rows.
struct Candidate {
  uint32_t node;
  GapKind kind;
  double severity;
  uint32_t other;  // the supporter / dependent / decision the description names
  double value;    // dependent confidence, chain length or age in days
};

// Longest supersedes chain (in versions) starting at each node, following
// new -> old edges. Iterative DFS; an edge back into the current path is ignored,
// so cycles terminate. Nodes without supersedes edges keep 0 (chain of 1).
class ChainLengths {
 public:
  explicit ChainLengths(const snapshot::Reader& r) : r_(r) {}

  uint32_t Of(uint32_t head) {
    if (Len(head) != 0 && Len(head) != kOnPath) return Len(head);
    stack_.clear();
    Enter(head);
    while (!stack_.empty()) {
      auto& [v, j] = stack_.back();
      uint32_t end = r_.out_end(v);
      while (j < end && r_.edge_rel(j) < kSupersedes) ++j;
      if (j < end && r_.edge_rel(j) == kSupersedes) {
        uint32_t w = r_.edge_target(j++);
        if (w != v && Len(w) == 0) Enter(w);
        continue;
      }
      // All children done: 1 + the longest finished child.
      uint32_t best = 0;
      for (uint32_t k = r_.out_begin(v); k < end; ++k) {
        if (r_.edge_rel(k) != kSupersedes) continue;
        uint32_t w = r_.edge_target(k);
        if (w != v && Len(w) != kOnPath) best = std::max(best, Len(w));
      }
      len_[v] = best + 1;
      stack_.pop_back();
    }
    return Len(head);
  }

 private:
  static constexpr uint32_t kOnPath = std::numeric_limits<uint32_t>::max();
  void Enter(uint32_t v) {
    len_[v] = kOnPath;
    stack_.emplace_back(v, r_.out_begin(v));
  }
  uint32_t Len(uint32_t v) const {
    auto it = len_.find(v);
    return it == len_.end() ? 0 : it->second;
  }
  const snapshot::Reader& r_;
  // Only nodes on supersedes chains get an entry: an array of node_count entries
  // cost more in fresh pages (4 MB at 1M nodes) than the whole walk.
  std::unordered_map<uint32_t, uint32_t> len_;
  std::vector<std::pair<uint32_t, uint32_t>> stack_;  // (node, next out-edge)
};

bool HasSupersedesOut(const snapshot::Reader& r, uint32_t i) {
  auto [ob, oe] = r.OutEdgesWithRel(i, kSupersedes);
  for (uint32_t j = ob; j < oe; ++j) {
    if (r.edge_target(j) != i) return true;
  }
  return false;
}

uint32_t Downstream(const snapshot::Reader& r, uint32_t start) {
  constexpr int kHops = 3;
  std::vector<uint32_t> frontier{start}, next;
  std::unordered_set<uint32_t> seen{start};
  uint32_t count = 0;
  for (int hop = 0; hop < kHops && !frontier.empty(); ++hop) {
    next.clear();
    for (uint32_t u : frontier) {
      ForEachDependent(r, u, [&](uint32_t w, uint32_t) {
        if (!seen.insert(w).second) return;
        ++count;
        next.push_back(w);
      });
    }
    frontier.swap(next);
  }
  return count;
}

// Rows in answer order: severity descending, then node, then kind.
bool Before(const Candidate& a, const Candidate& b) {
  if (a.severity != b.severity) return a.severity > b.severity;
  if (a.node != b.node) return a.node < b.node;
  return a.kind < b.kind;
}

std::string Describe(const snapshot::Reader& r, const Candidate& c, const GapsOptions& o) {
  char buf[160];
  std::string other = c.other == kNoNode ? std::string() : std::string(r.key(c.other));
  switch (c.kind) {
    case GapKind::kUnjustifiedDecision:
      return "decision with no supporting evidence (no caused_by or supports edge)";
    case GapKind::kSingleSourceInference:
      return "inference resting on a single source: " + other;
    case GapKind::kLowConfidenceFoundation:
      std::snprintf(buf, sizeof(buf), "confidence %.2f < %.2f underpins a dependent with %.2f: ",
                    r.confidence(c.node), o.threshold, c.value);
      return buf + other;
    case GapKind::kUnstableKnowledge:
      std::snprintf(buf, sizeof(buf), "supersedes chain of %.0f versions (corrected %.0f times)",
                    c.value, c.value - 1);
      return buf;
    case GapKind::kStaleEvidence:
      std::snprintf(buf, sizeof(buf),
                    "not updated for %.0f days (> %lld) yet supports active decision ", c.value,
                    static_cast<long long>(o.stale_days));
      return buf + other;
  }
  return {};
}

}  // namespace

const char* GapKindName(GapKind kind) {
  switch (kind) {
    case GapKind::kUnjustifiedDecision: return "unjustified_decision";
    case GapKind::kSingleSourceInference: return "single_source_inference";
    case GapKind::kLowConfidenceFoundation: return "low_confidence_foundation";
    case GapKind::kUnstableKnowledge: return "unstable_knowledge";
    case GapKind::kStaleEvidence: return "stale_evidence";
  }
  return "unknown";
}

Result<GapsResult> FindGaps(const snapshot::Reader& r, const GapsOptions& o) {
  if (!(o.threshold >= 0 && o.threshold <= 1)) {
    return Status::InvalidArgument("gaps: --threshold must be within [0, 1]");
  }
  if (o.stale_days < 0 || o.stale_days > std::numeric_limits<int64_t>::max() / kSecondsPerDay) {
    return Status::InvalidArgument("gaps: --stale-days must be a non-negative number of days");
  }
  GapsResult out;
  out.now = o.now ? *o.now : r.newest_timestamp();
  const int64_t stale_seconds = o.stale_days * kSecondsPerDay;
  const uint32_t n = r.node_count();
  // The best o.limit gaps (a heap whose front is the last of them) and the counts
  // of all: at 1M nodes there are ~10^5 gaps, and keeping them all cost more than
  // finding them.
  BestOf<Candidate, bool (*)(const Candidate&, const Candidate&)> best(o.limit, Before);
  auto add = [&](const Candidate& c) {
    ++out.total;
    ++out.counts[static_cast<int>(c.kind)];
    best.Push(c);
  };
  ChainLengths chains(r);

  for (uint32_t i = 0; i < n; ++i) {
    if (r.is_stub(i)) continue;
    NodeType type = r.type(i);
    float conf = r.confidence(i);

    if (type == NodeType::kDecision || type == NodeType::kInference) {
      uint32_t first = kNoNode;
      uint32_t supporters = 0;  // distinct, counted up to 2
      ForEachSupport(r, i, [&](uint32_t s, uint32_t) {
        if (supporters == 0) {
          first = s;
          supporters = 1;
        } else if (s != first) {
          supporters = 2;
        }
      });
      if (type == NodeType::kDecision && supporters == 0) {
        add({i, GapKind::kUnjustifiedDecision, 0.6 + 0.4 * conf, kNoNode, 0});
      } else if (type == NodeType::kInference && supporters == 1) {
        add({i, GapKind::kSingleSourceInference, 0.4 + 0.4 * conf, first, 0});
      }
    }

    // One walk over the dependents serves both foundation kinds.
    bool low = conf < o.threshold;
    bool old = out.now - r.updated_ts(i) > stale_seconds;
    if (low || old) {
      float best_conf = conf;
      uint32_t best_dep = kNoNode, decision = kNoNode;
      ForEachDependent(r, i, [&](uint32_t d, uint32_t) {
        if (d == i) return;
        float dc = r.confidence(d);
        if (low && dc > conf &&
            (best_dep == kNoNode || dc > best_conf || (dc == best_conf && d < best_dep))) {
          best_conf = dc;
          best_dep = d;
        }
        if (old && r.type(d) == NodeType::kDecision && (decision == kNoNode || d < decision) &&
            !IsSuperseded(r, d)) {
          decision = d;
        }
      });
      if (low && best_dep != kNoNode) {
        add({i, GapKind::kLowConfidenceFoundation, 0.3 + 0.6 * (best_conf - conf),
                         best_dep, best_conf});
      }
      if (old && decision != kNoNode) {
        double age_days = static_cast<double>(out.now - r.updated_ts(i)) / kSecondsPerDay;
        double over = o.stale_days > 0 ? (age_days - o.stale_days) / o.stale_days : 1.0;
        add({i, GapKind::kStaleEvidence, 0.3 + 0.5 * std::min(1.0, over), decision,
                         std::floor(age_days)});
      }
    }

    if (HasSupersedesOut(r, i) && !IsSuperseded(r, i)) {
      uint32_t len = chains.Of(i);
      if (len > 2) {
        add({i, GapKind::kUnstableKnowledge, std::min(1.0, 0.2 * (len - 1)), kNoNode,
                         static_cast<double>(len)});
      }
    }
  }

  for (const Candidate& c : best.Take()) {
    GapRow row;
    row.node = MakeNodeRow(r, c.node);
    row.kind = c.kind;
    row.severity = c.severity;
    row.description = Describe(r, c, o);
    row.downstream = Downstream(r, c.node);
    out.gaps.push_back(std::move(row));
  }
  return out;
}

Json GapsJson(const GapsResult& result) {
  Json doc;
  doc["query"] = "gaps";
  doc["now"] = result.now;
  doc["total"] = result.total;
  Json counts;
  for (int k = 0; k < kGapKindCount; ++k) {
    counts[GapKindName(static_cast<GapKind>(k))] = result.counts[k];
  }
  doc["counts"] = std::move(counts);
  Json rows = Json::array();
  for (const GapRow& g : result.gaps) {
    Json j = NodeRowJson(g.node);
    j["kind"] = GapKindName(g.kind);
    j["severity"] = g.severity;
    j["description"] = g.description;
    j["downstream"] = g.downstream;
    rows.push_back(std::move(j));
  }
  doc["gaps"] = std::move(rows);
  return doc;
}

}  // namespace amem::query
