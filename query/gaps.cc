#include "query/gaps.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdio>
#include <limits>
#include <utility>

#include "query/internal/cog_graph.h"
#include "query/internal/topk.h"
#include "query/orphans.h"
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

// Row order: severity descending, then index, then kind.
bool RanksBefore(const Candidate& a, const Candidate& b) {
  if (a.severity != b.severity) return a.severity > b.severity;
  if (a.node != b.node) return a.node < b.node;
  return a.kind < b.kind;
}

// One bit per node.
class NodeBits {
 public:
  explicit NodeBits(uint32_t n) : words_((n + 63) / 64, 0) {}
  void Set(uint32_t i) { words_[i / 64] |= uint64_t{1} << (i % 64); }
  void Clear(uint32_t i) { words_[i / 64] &= ~(uint64_t{1} << (i % 64)); }
  bool Test(uint32_t i) const { return (words_[i / 64] >> (i % 64)) & 1; }

 private:
  std::vector<uint64_t> words_;
};

// The three relations gaps reads sort first in every out-list, which is sorted by
// (relation, target): fn(rel, target) for u's out-edges of those relations.
static_assert(kCausedBy < kSupersedes && kSupports < kSupersedes && kContradicts < kSupersedes);
template <typename Fn>
void ForEachCognitiveOut(const snapshot::Reader& r, uint32_t u, Fn&& fn) {
  for (uint32_t j = r.out_begin(u), e = r.out_end(u); j < e; ++j) {
    RelationId rel = r.edge_rel(j);
    if (rel > kSupersedes) break;
    if (rel != kContradicts) fn(rel, r.edge_target(j));
  }
}

// A caused_by or supports edge, listed under its target.
struct InEdge {
  uint32_t target;
  uint32_t source;
  RelationId rel;
};

// Sorts by target, keeping the order of equal targets (LSD radix sort, 11 bits a
// pass over the bits node numbers below n use).
void SortByTarget(uint32_t n, std::vector<InEdge>* edges) {
  constexpr int kBits = 11;
  std::vector<InEdge> buffer(edges->size());
  const int bits = std::bit_width(n > 0 ? n - 1 : 0);
  for (int shift = 0; shift < bits; shift += kBits) {
    std::vector<size_t> start((size_t{1} << kBits) + 1, 0);
    for (const InEdge& e : *edges) ++start[((e.target >> shift) & ((1u << kBits) - 1)) + 1];
    for (size_t b = 1; b < start.size(); ++b) start[b] += start[b - 1];
    for (const InEdge& e : *edges) buffer[start[(e.target >> shift) & ((1u << kBits) - 1)]++] = e;
    edges->swap(buffer);
  }
}

// Longest supersedes chain (in versions) starting at each node, following
// new -> old edges: a memoised DFS over the supersedes edges alone, gathered in
// file order (so by source). Iterative; an edge back into the current path is
// ignored, so cycles terminate.
class ChainLengths {
 public:
  // `edges`: (source, target) pairs sorted by source, without self-loops.
  explicit ChainLengths(std::vector<std::pair<uint32_t, uint32_t>> edges)
      : edges_(std::move(edges)) {
    for (auto [u, v] : edges_) {
      nodes_.push_back(u);
      nodes_.push_back(v);
    }
    std::sort(nodes_.begin(), nodes_.end());
    nodes_.erase(std::unique(nodes_.begin(), nodes_.end()), nodes_.end());
    len_.assign(nodes_.size(), 0);
  }

  // REQUIRES: head is the source of some edge.
  uint32_t Of(uint32_t head) {
    const uint32_t h = Slot(head);
    if (len_[h] != 0 && len_[h] != kOnPath) return len_[h];
    stack_.clear();
    Enter(head);
    while (!stack_.empty()) {
      auto [v, k] = stack_.back();
      if (k < edges_.size() && edges_[k].first == v) {
        ++stack_.back().second;
        uint32_t w = edges_[k].second;
        if (len_[Slot(w)] == 0) Enter(w);
        continue;
      }
      // All children done: 1 + the longest finished child.
      uint32_t best = 0;
      for (size_t e = First(v); e < edges_.size() && edges_[e].first == v; ++e) {
        uint32_t lw = len_[Slot(edges_[e].second)];
        if (lw != kOnPath) best = std::max(best, lw);
      }
      len_[Slot(v)] = best + 1;
      stack_.pop_back();
    }
    return len_[h];
  }

 private:
  static constexpr uint32_t kOnPath = std::numeric_limits<uint32_t>::max();
  size_t Slot(uint32_t v) const {
    return std::lower_bound(nodes_.begin(), nodes_.end(), v) - nodes_.begin();
  }
  size_t First(uint32_t v) const {
    return std::lower_bound(edges_.begin(), edges_.end(), std::pair<uint32_t, uint32_t>(v, 0)) -
           edges_.begin();
  }
  void Enter(uint32_t v) {
    len_[Slot(v)] = kOnPath;
    stack_.emplace_back(v, First(v));
  }
  std::vector<std::pair<uint32_t, uint32_t>> edges_;
  std::vector<uint32_t> nodes_;  // every endpoint, ascending; len_ is parallel
  std::vector<uint32_t> len_;    // 0: not visited
  std::vector<std::pair<uint32_t, size_t>> stack_;  // (node, its next edge in edges_)
};

uint32_t Downstream(const snapshot::Reader& r, uint32_t start, NodeBits* seen) {
  constexpr int kHops = 3;
  std::vector<uint32_t> reached{start}, frontier{start}, next;
  seen->Set(start);
  for (int hop = 0; hop < kHops && !frontier.empty(); ++hop) {
    next.clear();
    for (uint32_t u : frontier) {
      ForEachDependent(r, u, [&](uint32_t w, uint32_t) {
        if (seen->Test(w)) return;
        seen->Set(w);
        reached.push_back(w);
        next.push_back(w);
      });
    }
    frontier.swap(next);
  }
  for (uint32_t w : reached) seen->Clear(w);
  return static_cast<uint32_t>(reached.size() - 1);
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
    case GapKind::kOrphaned:
      if (c.value > 1) {
        std::snprintf(buf, sizeof(buf), " (and %.0f more links)", c.value - 1);
      } else {
        buf[0] = '\0';
      }
      return "linked to code the graph no longer has: " + other + buf;
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
    case GapKind::kOrphaned: return "orphaned";
  }
  return "unknown";
}

Result<GapKindFilter> ParseGapKinds(const std::vector<std::string>& names) {
  GapKindFilter filter;
  for (const std::string& name : SplitList(names)) {
    int k = 0;
    while (k < kGapKindCount && name != GapKindName(static_cast<GapKind>(k))) ++k;
    if (k == kGapKindCount) {
      std::string all;
      for (int i = 0; i < kGapKindCount; ++i) {
        all += (i ? ", " : "") + std::string(GapKindName(static_cast<GapKind>(i)));
      }
      return Status::InvalidArgument("gaps: unknown category '" + name + "' (one of " + all + ")");
    }
    filter.Only(static_cast<GapKind>(k));
  }
  return filter;
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

  // One pass over the edges in file order gathers what a node's in-list would
  // give: the caused_by and supports edges by target, and who is superseded.
  // Reading in-lists node by node would read their edge records in random order,
  // which costs far more than this pass and a sort.
  // The same pass copies the confidences out of the node records, which are read
  // in order here and at random for dependents below.
  std::vector<InEdge> in_edges;
  std::vector<std::pair<uint32_t, uint32_t>> supersedes_edges;
  std::vector<float> confidence(n);
  NodeBits superseded(n), decision(n), inference(n);
  for (uint32_t u = 0; u < n; ++u) {
    confidence[u] = r.confidence(u);
    ForEachCognitiveOut(r, u, [&](RelationId rel, uint32_t v) {
      if (rel != kSupersedes) {
        in_edges.push_back({v, u, rel});
      } else if (v != u) {
        superseded.Set(v);
        supersedes_edges.emplace_back(u, v);
      }
    });
  }
  SortByTarget(n, &in_edges);
  for (uint32_t d : r.NodesOfType(static_cast<uint8_t>(NodeType::kDecision))) decision.Set(d);
  for (uint32_t d : r.NodesOfType(static_cast<uint8_t>(NodeType::kInference))) inference.Set(d);
  NodeBits supersedes(n);
  for (auto [u, v] : supersedes_edges) supersedes.Set(u);
  ChainLengths chains(std::move(supersedes_edges));

  // Only the returned rows are kept (and sorted); every gap is counted.
  using Order = bool (*)(const Candidate&, const Candidate&);
  BestOf<Candidate, Order> best(o.limit, static_cast<Order>(RanksBefore));
  auto add = [&](const Candidate& c) {
    if (!o.kinds.Matches(c.kind)) return;
    ++out.total;
    ++out.counts[static_cast<int>(c.kind)];
    best.Push(c);
  };
  const InEdge* in = in_edges.data();
  const InEdge* in_end = in + in_edges.size();
  for (uint32_t i = 0; i < n; ++i) {
    const InEdge* first_in = in;
    while (in != in_end && in->target == i) ++in;
    if (r.is_stub(i)) continue;
    const float conf = confidence[i];

    if (decision.Test(i) || inference.Test(i)) {
      // Support: the B of `i caused_by B`, the A of `A supports i`.
      uint32_t supporter = kNoNode;
      bool several = false;  // two distinct supporters
      auto support = [&](uint32_t s) {
        if (s == i) return;
        if (supporter == kNoNode) {
          supporter = s;
        } else if (s != supporter) {
          several = true;
        }
      };
      ForEachCognitiveOut(r, i, [&](RelationId rel, uint32_t v) {
        if (rel == kCausedBy) support(v);
      });
      for (const InEdge* e = first_in; e != in; ++e) {
        if (e->rel == kSupports) support(e->source);
      }
      if (decision.Test(i) && supporter == kNoNode) {
        add({i, GapKind::kUnjustifiedDecision, 0.6 + 0.4 * conf, kNoNode, 0});
      } else if (inference.Test(i) && supporter != kNoNode && !several) {
        add({i, GapKind::kSingleSourceInference, 0.4 + 0.4 * conf, supporter, 0});
      }
    }

    // One walk over the dependents serves both foundation kinds.
    bool low = conf < o.threshold;
    bool old = out.now - r.updated_ts(i) > stale_seconds;
    if (low || old) {
      float best_conf = conf;
      uint32_t best_dep = kNoNode, active = kNoNode;
      // Dependents: the D of `D caused_by i`, the C of `i supports C`.
      auto dependent = [&](uint32_t d) {
        if (d == i) return;
        if (low) {
          float dc = confidence[d];
          if (dc > conf &&
              (best_dep == kNoNode || dc > best_conf || (dc == best_conf && d < best_dep))) {
            best_conf = dc;
            best_dep = d;
          }
        }
        if (old && decision.Test(d) && (active == kNoNode || d < active) && !superseded.Test(d)) {
          active = d;
        }
      };
      for (const InEdge* e = first_in; e != in; ++e) {
        if (e->rel == kCausedBy) dependent(e->source);
      }
      ForEachCognitiveOut(r, i, [&](RelationId rel, uint32_t v) {
        if (rel == kSupports) dependent(v);
      });
      if (low && best_dep != kNoNode) {
        add({i, GapKind::kLowConfidenceFoundation, 0.3 + 0.6 * (best_conf - conf), best_dep,
             best_conf});
      }
      if (old && active != kNoNode) {
        double age_days = static_cast<double>(out.now - r.updated_ts(i)) / kSecondsPerDay;
        double over = o.stale_days > 0 ? (age_days - o.stale_days) / o.stale_days : 1.0;
        add({i, GapKind::kStaleEvidence, 0.3 + 0.5 * std::min(1.0, over), active,
             std::floor(age_days)});
      }
    }

    if (supersedes.Test(i) && !superseded.Test(i)) {
      uint32_t len = chains.Of(i);
      if (len > 2) {
        add({i, GapKind::kUnstableKnowledge, std::min(1.0, 0.2 * (len - 1)), kNoNode,
             static_cast<double>(len)});
      }
    }
  }

  if (o.kinds.Matches(GapKind::kOrphaned)) {
    // One gap per memory; Orphans() lists its links by code key.
    const std::vector<OrphanLink> orphans = Orphans(r);
    for (size_t k = 0; k < orphans.size();) {
      size_t end = k;
      while (end < orphans.size() && orphans[end].memory.index == orphans[k].memory.index) ++end;
      const uint32_t m = orphans[k].memory.index;
      add({m, GapKind::kOrphaned, 0.5 + 0.4 * confidence[m], *r.FindKey(orphans[k].code),
           static_cast<double>(end - k)});
      k = end;
    }
  }

  const std::vector<Candidate> kept = best.Take();
  NodeBits seen(kept.empty() ? 0 : n);
  for (const Candidate& c : kept) {
    GapRow row;
    row.node = MakeNodeRow(r, c.node);
    row.kind = c.kind;
    row.severity = c.severity;
    row.description = Describe(r, c, o);
    row.downstream = Downstream(r, c.node, &seen);
    out.gaps.push_back(std::move(row));
  }
  return out;
}

}  // namespace amem::query
