// The JSON document of the drift answer (query/render.h).
#include "query/drift.h"

#include <nlohmann/json.hpp>

#include "snapshot/reader.h"

namespace amem::query {

Json DriftJson(const DriftResult& result, const DriftOptions& options) {
  Json doc;
  doc["query"] = "drift";
  doc["clustering"] = result.by_topic ? "topic" : "run";
  if (result.by_topic) {
    doc["topic"] = options.topic;
    doc["relevant"] = result.relevant;
  }
  doc["cluster_count"] = result.cluster_count;
  Json clusters = Json::array();
  for (const DriftCluster& c : result.clusters) {
    Json j;
    j["label"] = c.label;
    if (c.head) j["head"] = NodeRowJson(*c.head);
    j["instability"] = 1.0 - c.stability;
    j["stability"] = c.stability;
    j["nodes"] = c.nodes;
    j["superseded"] = c.superseded;
    j["events"] = c.events;
    j["direction"] = c.direction;
    j["trend"] = c.trend;
    j["revisions_per_day"] = c.revisions_per_day;
    Json traj = Json::array();
    for (const DriftEvent& e : c.trajectory) {
      Json ej;
      ej["ts"] = e.ts;
      ej["old"] = NodeRowJson(e.old_node);
      ej["new"] = NodeRowJson(e.new_node);
      ej["confidence_delta"] = e.confidence_delta;
      traj.push_back(std::move(ej));
    }
    j["trajectory"] = std::move(traj);
    clusters.push_back(std::move(j));
  }
  doc["clusters"] = std::move(clusters);
  return doc;
}

}  // namespace amem::query
