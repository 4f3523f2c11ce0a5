// Query 16, `drift`: how is my understanding changing (docs/QUERIES.md 16, paper §4.9).
//
// Clusters: without a topic, one per run (session; "" is the run-less nodes). With
// a topic, the nodes relevant to it (cog_graph.h NodesMatchingText: every topic
// word, else any) are closed under supersedes edges (both ways), and each
// connected component is one cluster: one belief and its versions, labelled by its
// current version (nobody in the component supersedes it; the newest created_ts,
// then the highest index, as `resolve` does).
//
// A supersession event is an edge `new supersedes old` (new != old); it belongs to
// the cluster of `old` (the knowledge that was revised); its time is the edge's
// created_ts, else new's. Per cluster:
//   stability           share of its nodes that nobody supersedes (1 when empty)
//   direction           mean of confidence(new) - confidence(old) over its events;
//                       trend "rising" (> 0.01), "falling" (< -0.01), "flat", or
//                       "none" without events
//   revisions_per_day   events / max(1, days spanned by its nodes' created_ts and
//                       its events)
//   trajectory          its events by (time, new, old), at most trajectory_limit
// Ordered by instability (1 - stability) descending, then events descending, then
// cluster order (session number, or the label node's index). O(V + E).
#ifndef AMEM_QUERY_DRIFT_H_
#define AMEM_QUERY_DRIFT_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/status.h"
#include "query/query.h"
#include "query/render.h"

namespace amem::snapshot {
class Reader;
}

namespace amem::query {

struct DriftOptions {
  std::string topic;  // empty: cluster by run
  size_t limit = 10;
  size_t trajectory_limit = 20;
};

struct DriftEvent {
  NodeRow old_node, new_node;
  int64_t ts = 0;
  float confidence_delta = 0;  // new - old
};

struct DriftCluster {
  std::string label;           // the run, or the current version's key
  std::optional<NodeRow> head; // topic mode: the current version
  size_t nodes = 0;
  size_t superseded = 0;
  double stability = 1;
  double direction = 0;
  const char* trend = "none";
  double revisions_per_day = 0;
  size_t events = 0;
  std::vector<DriftEvent> trajectory;
};

struct DriftResult {
  bool by_topic = false;
  size_t relevant = 0;       // topic mode: nodes matching the topic
  size_t cluster_count = 0;  // before the limit
  std::vector<DriftCluster> clusters;
};

// InvalidArgument when the topic is given but has no word to match.
Result<DriftResult> Drift(const snapshot::Reader& reader, const DriftOptions& options = {});

Json DriftJson(const DriftResult& result, const DriftOptions& options);

}  // namespace amem::query

#endif  // AMEM_QUERY_DRIFT_H_
