// The subgraph of an answer or of a whole snapshot (tools/view/view.h).
#include <algorithm>
#include <cstdio>
#include <set>
#include <tuple>
#include <unordered_map>

#include <nlohmann/json.hpp>

#include "common/model.h"
#include "query/query.h"
#include "snapshot/reader.h"
#include "store/store.h"
#include "tools/view/view.h"

namespace amem::view {

namespace {

using query::Json;

bool IsNodeRow(const Json& v) {
  return v.is_object() && v.contains("index") && v.contains("key") && v.contains("type") &&
         v["index"].is_number_unsigned();
}

bool IsEdgeRow(const Json& v) {
  return v.is_object() && v.contains("src") && v.contains("rel") && v.contains("dst") &&
         v["src"].is_string() && v["rel"].is_string() && v["dst"].is_string();
}

std::string ScalarText(const Json& v) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_number_float()) {
    char buf[32];
    std::snprintf(buf, sizeof(buf), "%.6g", v.get<double>());
    return buf;
  }
  return v.dump();
}

// `text` cut to at most `max` bytes on a UTF-8 character boundary, "…" appended
// when cut.
std::string Cut(std::string_view text, size_t max) {
  if (text.size() <= max) return std::string(text);
  size_t n = max;
  while (n > 0 && (static_cast<unsigned char>(text[n]) & 0xC0) == 0x80) --n;
  return std::string(text.substr(0, n)) + "\xE2\x80\xA6";
}

Node MakeNode(const snapshot::Reader& reader, uint32_t index, std::string role) {
  const query::NodeRow row = query::MakeNodeRow(reader, index);
  const Json base = query::NodeRowJson(row);
  Node n;
  n.index = index;
  n.id = base["id"].get<std::string>();
  n.key = row.key;
  n.type = base["type"].get<std::string>();
  n.role = std::move(role);
  n.content = Cut(reader.content(index), kMaxContentBytes);
  n.meta = std::string(reader.meta(index));
  n.confidence = reader.confidence(index);
  n.run = std::string(reader.run(index));
  n.task = std::string(reader.task(index));
  n.scope = std::string(reader.scope(index));
  n.created_ts = reader.created_ts(index);
  n.updated_ts = reader.updated_ts(index);
  return n;
}

struct Collector {
  const snapshot::Reader& reader;
  Subgraph* g;
  std::unordered_map<uint32_t, size_t> position;  // snapshot index -> position in g->nodes
  std::set<std::tuple<std::string, std::string, std::string>> answer_edges;
  Status status;

  void Walk(const Json& v, const std::string& role) {
    if (!status.ok()) return;
    if (IsNodeRow(v)) AddRow(v, role);
    if (IsEdgeRow(v)) {
      answer_edges.emplace(v["src"].get<std::string>(), v["rel"].get<std::string>(),
                           v["dst"].get<std::string>());
    }
    if (v.is_array() || v.is_object()) {
      for (const Json& child : v) Walk(child, role);
    }
  }

  void AddRow(const Json& row, const std::string& role) {
    const uint64_t index = row["index"].get<uint64_t>();
    if (index >= reader.node_count() || reader.key(static_cast<uint32_t>(index)) !=
                                            row["key"].get_ref<const std::string&>()) {
      status = Status::Corruption("the answer names node #" + std::to_string(index) +
                                ", which the snapshot does not hold");
      return;
    }
    const uint32_t i = static_cast<uint32_t>(index);
    if (position.count(i)) return;
    position[i] = g->nodes.size();
    Node n = MakeNode(reader, i, role);
    for (const auto& [name, value] : row.items()) {
      if (name == "index" || name == "id" || name == "key" || name == "type" ||
          name == "preview" || value.is_structured() || value.is_null()) {
        continue;
      }
      if (name == "depth" && value.is_number_integer()) n.depth = value.get<int64_t>();
      n.fields.emplace_back(name, ScalarText(value));
    }
    g->nodes.push_back(std::move(n));
  }

  // Every edge of the snapshot between two collected nodes, by (source index, rel,
  // target index).
  void AddEdges() {
    std::vector<uint32_t> sorted;
    sorted.reserve(position.size());
    for (const auto& [index, pos] : position) sorted.push_back(index);
    std::sort(sorted.begin(), sorted.end());
    for (uint32_t s : sorted) {
      for (uint32_t e = reader.out_begin(s); e < reader.out_end(s); ++e) {
        const snapshot::Edge edge = reader.edge(e);
        auto to = position.find(edge.target);
        if (to == position.end()) continue;
        Edge out;
        out.src = static_cast<uint32_t>(position[s]);
        out.dst = static_cast<uint32_t>(to->second);
        out.rel = std::string(reader.relation_name(edge.rel));
        out.weight = edge.weight;
        out.in_answer = answer_edges.count({std::string(reader.key(s)), out.rel,
                                            std::string(reader.key(edge.target))}) > 0;
        g->edges.push_back(std::move(out));
      }
    }
  }
};

}  // namespace

Result<Subgraph> FromAnswer(const snapshot::Reader& reader, const query::Json& answer,
                            Header header) {
  Subgraph g;
  g.header = std::move(header);
  Collector c{reader, &g, {}, {}, Status::OK()};
  if (answer.is_object()) {
    for (const auto& [name, value] : answer.items()) c.Walk(value, name);
  }
  AMEM_RETURN_IF_ERROR(c.status);
  c.AddEdges();
  AMEM_RETURN_IF_ERROR(reader.ContentStatus());
  return g;
}

Result<Subgraph> WholeGraph(const snapshot::Reader& reader, Header header) {
  if (reader.node_count() > kMaxAllNodes || reader.edge_count() > kMaxAllEdges) {
    return Status::InvalidArgument(
        "view --all draws at most " + std::to_string(kMaxAllNodes) + " nodes and " +
        std::to_string(kMaxAllEdges) + " edges; this snapshot has " +
        std::to_string(reader.node_count()) + " nodes and " +
        std::to_string(reader.edge_count()) +
        " edges: view a query's answer instead (e.g. amem view traverse NODE)");
  }
  Subgraph g;
  g.header = std::move(header);
  Collector c{reader, &g, {}, {}, Status::OK()};
  for (uint32_t i = 0; i < reader.node_count(); ++i) {
    if (reader.is_stub(i)) continue;
    c.position[i] = g.nodes.size();
    g.nodes.push_back(MakeNode(reader, i, "node"));
  }
  c.AddEdges();
  AMEM_RETURN_IF_ERROR(reader.ContentStatus());
  return g;
}

std::string RevisionSource(const Store& store, uint64_t rev) {
  std::string text = "revision " + std::to_string(rev);
  int64_t ts = 0;
  if (rev > 0 && store.ReadHistory(rev - 1, rev, [&](const LoggedRevision& r) {
                       ts = r.ts;
                       return Status::OK();
                     }).ok() &&
      ts != 0) {
    text += ", committed " + FormatTime(ts);
  }
  return text;
}

Status AddRevisions(const Store& store, uint64_t rev, Subgraph* g) {
  const ReadView at = ReadView::AtRevision(rev);
  for (Node& n : g->nodes) {
    Result<NodeRecord> record = store.GetNode(n.key, at);
    if (record.ok()) {
      n.revision = record->rev;
    } else if (!record.status().IsNotFound()) {
      return record.status();
    }
  }
  return Status::OK();
}

}  // namespace amem::view
