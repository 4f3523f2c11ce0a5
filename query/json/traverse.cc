// The JSON document of the traverse answer (query/render.h).
#include "query/traverse.h"

#include <nlohmann/json.hpp>

#include "snapshot/reader.h"

namespace amem::query {

Json TraverseJson(const snapshot::Reader& reader, const TraverseResult& result,
                  const TraverseOptions& options) {
  Json doc;
  doc["query"] = "traverse";
  doc["start"] = NodeJson(reader, result.start);
  doc["direction"] = DirectionName(options.direction);
  doc["depth"] = options.depth;
  Json rows = Json::array();
  for (const TraversedNode& n : result.nodes) {
    Json row = NodeJson(reader, n.node);
    row["depth"] = n.depth;
    row["confidence"] = reader.confidence(n.node);
    if (n.edge != kNoEdge) {
      Json via = EdgeJson(reader, n.edge);
      via["followed"] = n.forward ? "forward" : "backward";
      row["via"] = std::move(via);
    }
    rows.push_back(std::move(row));
  }
  doc["count"] = result.nodes.size();
  doc["truncated"] = result.truncated;
  doc["nodes"] = std::move(rows);
  return doc;
}

}  // namespace amem::query
