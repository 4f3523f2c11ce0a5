#include "query/drift.h"

#include <algorithm>
#include <limits>
#include <tuple>

#include "query/internal/cog_graph.h"
#include "snapshot/reader.h"

namespace amem::query {

namespace {

constexpr uint32_t kNoCluster = std::numeric_limits<uint32_t>::max();
constexpr double kSecondsInDay = 86400;

struct Stats {
  size_t nodes = 0, superseded = 0, events = 0;
  double delta_sum = 0;
  int64_t first = std::numeric_limits<int64_t>::max();
  int64_t last = std::numeric_limits<int64_t>::min();
  uint32_t order = 0;  // session number or label node
  void See(int64_t ts) {
    first = std::min(first, ts);
    last = std::max(last, ts);
  }
};

int64_t EventTime(const snapshot::Reader& r, uint32_t j) {
  int64_t ts = r.edge_created_ts(j);
  return ts != 0 ? ts : r.created_ts(r.edge_source(j));
}

// Calls fn(edge) for every supersedes edge between two different nodes.
template <typename Fn>
void ForEachSupersession(const snapshot::Reader& r, Fn&& fn) {
  for (uint32_t j = 0, m = r.edge_count(); j < m; ++j) {
    if (r.edge_rel(j) == kSupersedes && r.edge_source(j) != r.edge_target(j)) fn(j);
  }
}

// Topic mode: the supersedes components of the relevant nodes. Returns the
// cluster of every node (kNoCluster outside) and each cluster's label node.
std::vector<uint32_t> TopicClusters(const snapshot::Reader& r,
                                    const std::vector<uint32_t>& relevant,
                                    std::vector<uint32_t>* labels) {
  std::vector<uint32_t> cluster(r.node_count(), kNoCluster);
  std::vector<uint32_t> stack;
  for (uint32_t seed : relevant) {
    if (cluster[seed] != kNoCluster) continue;
    uint32_t id = static_cast<uint32_t>(labels->size());
    uint32_t label = seed;
    bool label_current = false;
    cluster[seed] = id;
    stack.assign(1, seed);
    while (!stack.empty()) {
      uint32_t v = stack.back();
      stack.pop_back();
      // The current version: nobody supersedes it; newest, then highest index.
      bool current = !IsSuperseded(r, v);
      if (std::tuple(current, r.created_ts(v), v) >
          std::tuple(label_current, r.created_ts(label), label)) {
        label = v;
        label_current = current;
      }
      auto visit = [&](uint32_t w) {
        if (cluster[w] == kNoCluster) {
          cluster[w] = id;
          stack.push_back(w);
        }
      };
      auto [ob, oe] = r.OutEdgesWithRel(v, kSupersedes);
      for (uint32_t j = ob; j < oe; ++j) visit(r.edge_target(j));
      auto [kb, ke] = r.InEdgesWithRel(v, kSupersedes);
      for (uint32_t k = kb; k < ke; ++k) visit(r.in_source(k));
    }
    labels->push_back(label);
  }
  return cluster;
}

}  // namespace

Result<DriftResult> Drift(const snapshot::Reader& r, const DriftOptions& options) {
  DriftResult out;
  out.by_topic = !options.topic.empty();
  const uint32_t n = r.node_count();
  std::vector<uint32_t> topic_cluster, labels;
  size_t cluster_count;
  if (out.by_topic) {
    AMEM_RETURN_IF_ERROR(r.EnsureContent());
    std::vector<uint32_t> relevant = NodesMatchingText(r, options.topic);
    if (relevant.empty() && DistinctTokens(options.topic).empty()) {
      return Status::InvalidArgument("drift: the topic has no words to match");
    }
    out.relevant = relevant.size();
    topic_cluster = TopicClusters(r, relevant, &labels);
    cluster_count = labels.size();
  } else {
    cluster_count = r.session_count();
  }
  auto cluster_of = [&](uint32_t i) {
    return out.by_topic ? topic_cluster[i] : r.session(i);
  };

  std::vector<Stats> stats(cluster_count);
  for (size_t c = 0; c < cluster_count; ++c) {
    stats[c].order = out.by_topic ? labels[c] : static_cast<uint32_t>(c);
  }
  std::vector<uint8_t> superseded(n, 0);
  // The one pass over every edge: the supersessions inside a cluster, kept for
  // the trajectories below.
  std::vector<uint32_t> in_cluster;
  ForEachSupersession(r, [&](uint32_t j) {
    uint32_t old_node = r.edge_target(j), new_node = r.edge_source(j);
    superseded[old_node] = 1;
    uint32_t c = cluster_of(old_node);
    if (c == kNoCluster || c >= cluster_count) return;
    in_cluster.push_back(j);
    Stats& s = stats[c];
    ++s.events;
    s.delta_sum += static_cast<double>(r.confidence(new_node)) - r.confidence(old_node);
    s.See(EventTime(r, j));
  });
  for (uint32_t i = 0; i < n; ++i) {
    uint32_t c = cluster_of(i);
    if (c == kNoCluster || c >= cluster_count || r.is_stub(i)) continue;
    Stats& s = stats[c];
    ++s.nodes;
    s.superseded += superseded[i];
    s.See(r.created_ts(i));
  }

  std::vector<uint32_t> order;
  for (uint32_t c = 0; c < cluster_count; ++c) {
    if (stats[c].nodes > 0) order.push_back(c);
  }
  auto stability = [&](uint32_t c) {
    return 1.0 - static_cast<double>(stats[c].superseded) / static_cast<double>(stats[c].nodes);
  };
  std::sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
    double sa = stability(a), sb = stability(b);
    if (sa != sb) return sa < sb;
    if (stats[a].events != stats[b].events) return stats[a].events > stats[b].events;
    return stats[a].order < stats[b].order;
  });
  out.cluster_count = order.size();
  if (order.size() > options.limit) order.resize(options.limit);

  // Trajectories only for the returned clusters.
  std::vector<uint32_t> slot(cluster_count, kNoCluster);
  for (size_t k = 0; k < order.size(); ++k) slot[order[k]] = static_cast<uint32_t>(k);
  std::vector<std::vector<uint32_t>> events(order.size());
  for (uint32_t j : in_cluster) {
    if (uint32_t k = slot[cluster_of(r.edge_target(j))]; k != kNoCluster) events[k].push_back(j);
  }

  for (size_t k = 0; k < order.size(); ++k) {
    const Stats& s = stats[order[k]];
    DriftCluster cl;
    if (out.by_topic) {
      cl.head = MakeNodeRow(r, s.order);
      cl.label = cl.head->key;
    } else {
      cl.label = std::string(r.session_run(order[k]));
    }
    cl.nodes = s.nodes;
    cl.superseded = s.superseded;
    cl.stability = stability(order[k]);
    cl.events = s.events;
    if (s.events > 0) {
      cl.direction = s.delta_sum / static_cast<double>(s.events);
      cl.trend = cl.direction > 0.01 ? "rising" : cl.direction < -0.01 ? "falling" : "flat";
    }
    double days = std::max(1.0, static_cast<double>(s.last - s.first) / kSecondsInDay);
    cl.revisions_per_day = static_cast<double>(s.events) / days;
    std::vector<uint32_t>& ev = events[k];
    std::sort(ev.begin(), ev.end(), [&](uint32_t a, uint32_t b) {
      int64_t ta = EventTime(r, a), tb = EventTime(r, b);
      if (ta != tb) return ta < tb;
      if (r.edge_source(a) != r.edge_source(b)) return r.edge_source(a) < r.edge_source(b);
      return r.edge_target(a) < r.edge_target(b);
    });
    for (size_t e = 0; e < ev.size() && e < options.trajectory_limit; ++e) {
      uint32_t j = ev[e];
      DriftEvent event;
      event.old_node = MakeNodeRow(r, r.edge_target(j));
      event.new_node = MakeNodeRow(r, r.edge_source(j));
      event.ts = EventTime(r, j);
      event.confidence_delta = r.confidence(r.edge_source(j)) - r.confidence(r.edge_target(j));
      cl.trajectory.push_back(std::move(event));
    }
    out.clusters.push_back(std::move(cl));
  }
  return out;
}

}  // namespace amem::query
