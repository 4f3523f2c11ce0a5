// The JSON document of the path answer (query/render.h).
#include "query/path.h"

#include <nlohmann/json.hpp>

#include "snapshot/reader.h"

namespace amem::query {

Json PathJson(const snapshot::Reader& reader, const PathResult& result,
              const PathOptions& options) {
  Json doc;
  doc["query"] = "path";
  doc["found"] = result.found;
  doc["weighted"] = options.weighted;
  if (options.weighted) {
    doc["cost_model"] = options.cost == PathOptions::Cost::kNegLog ? "neglog" : "weight";
  }
  doc["direction"] = DirectionName(options.direction);
  doc["hops"] = result.hops;
  doc["cost"] = result.cost;
  doc["visited"] = result.visited;
  Json nodes = Json::array();
  for (uint32_t i : result.nodes) nodes.push_back(NodeJson(reader, i));
  doc["nodes"] = std::move(nodes);
  Json edges = Json::array();
  for (uint32_t e : result.edges) edges.push_back(EdgeJson(reader, e));
  doc["edges"] = std::move(edges);
  return doc;
}

Json PathAnswer(const snapshot::Reader& reader, PathResult result,
                const PathOptions& options, size_t limit) {
  const bool truncated = limit > 0 && result.nodes.size() > limit;
  if (truncated) {
    result.nodes.resize(limit);
    result.edges.resize(limit - 1);
  }
  Json doc = PathJson(reader, result, options);
  doc["truncated"] = truncated;
  return doc;
}

}  // namespace amem::query
