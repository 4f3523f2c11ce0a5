#include "tools/io/json_records.h"

#include <charconv>
#include <cstdlib>

#include "common/hash.h"
#include "common/json_parse.h"

namespace amem::io {

using Json = nlohmann::ordered_json;

Json EmbeddedJson(const std::string& text) {
  Result<Json> parsed = ParseJsonLimited<Json>(text, "stored JSON");
  if (!parsed.ok()) return Json(text);
  return std::move(*parsed);
}

namespace {

void AppendField(std::string* out, std::string_view label, std::string_view value) {
  out->append(label);
  out->append(":");
  out->append(label.size() < 11 ? 11 - label.size() : 1, ' ');
  // Continuation lines of multi-line text line up under the first.
  for (char c : value) {
    out->push_back(c);
    if (c == '\n') out->append(12, ' ');
  }
  out->push_back('\n');
}

void AppendNonEmpty(std::string* out, std::string_view label, const std::string& value) {
  if (!value.empty()) {
    out->append(" ");
    out->append(label);
    out->append(" ");
    out->append(OneLine(value));
  }
}

}  // namespace

std::string FormatFloat(float v) {
  char buf[32];
  auto [end, ec] = std::to_chars(buf, buf + sizeof(buf), v);
  if (ec != std::errc()) return "nan";
  return std::string(buf, end);
}

Json FloatJson(float v) {
  // Parsing the shortest f32 text as a double keeps the short form when dumped.
  std::string text = FormatFloat(v);
  return Json(std::strtod(text.c_str(), nullptr));
}

std::string OneLine(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    switch (c) {
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      default: out.push_back(c);
    }
  }
  return out;
}

Json NodeToJson(const NodeRecord& node) {
  Json j;
  j["id"] = FormatHexId(node.id);
  j["key"] = node.key;
  const char* type = NodeTypeName(node.type);
  j["type"] = type != nullptr ? type : "unknown";
  j["content"] = node.content;
  j["meta"] = EmbeddedJson(node.meta);
  j["confidence"] = FloatJson(node.confidence);
  j["scope"] = node.scope;
  j["run"] = node.run;
  j["task"] = node.task;
  j["created_ts"] = node.created_ts;
  j["updated_ts"] = node.updated_ts;
  j["rev"] = node.rev;
  if (node.vector.empty()) {
    j["vector"] = nullptr;
  } else {
    Json vec = Json::array();
    for (float f : node.vector) vec.push_back(FloatJson(f));
    j["vector"] = std::move(vec);
  }
  return j;
}

Json EdgeToJson(const EdgeRecord& edge) {
  Json j;
  j["src"] = edge.src_key;
  j["src_id"] = FormatHexId(edge.src);
  j["rel"] = edge.rel_name;
  j["dst"] = edge.dst_key;
  j["dst_id"] = FormatHexId(edge.dst);
  j["weight"] = FloatJson(edge.weight);
  j["payload"] = EmbeddedJson(edge.payload);
  j["run"] = edge.run;
  j["task"] = edge.task;
  j["created_ts"] = edge.created_ts;
  j["updated_ts"] = edge.updated_ts;
  j["rev"] = edge.rev;
  return j;
}

Json KvToJson(const KvRecord& kv, bool with_deleted) {
  Json j;
  j["scope"] = kv.scope;
  j["ns"] = kv.ns;
  j["key"] = kv.key;
  j["value"] = kv.value;
  j["run"] = kv.run;
  j["task"] = kv.task;
  j["ts"] = kv.ts;
  j["rev"] = kv.rev;
  if (with_deleted) j["deleted"] = kv.deleted;
  return j;
}

Json ChangeToJson(const Change& change) {
  Json j;
  j["rev"] = change.rev;
  j["ts"] = change.ts;
  j["kind"] = ChangeKindName(change.kind);
  j["overwrite"] = change.overwrite;
  switch (change.kind) {
    case Change::Kind::kPutNode:
    case Change::Kind::kDeleteNode:
      j["key"] = change.key;
      break;
    case Change::Kind::kPutEdge:
    case Change::Kind::kDeleteEdge:
      j["src"] = change.src_key;
      j["rel"] = change.rel_name;
      j["dst"] = change.dst_key;
      break;
    case Change::Kind::kPutKv:
    case Change::Kind::kDeleteKv:
      j["scope"] = change.scope;
      j["ns"] = change.ns;
      j["key"] = change.key;
      break;
    case Change::Kind::kDefineRelation:
      j["name"] = change.rel_name.empty() ? change.key : change.rel_name;
      break;
  }
  j["run"] = change.run;
  j["task"] = change.task;
  return j;
}

Json StatsToJson(const StoreStats& s) {
  Json j;
  j["revision"] = s.revision;
  j["revision_ts"] = s.revision_ts;
  j["oldest_readable_revision"] = s.oldest_readable_revision;
  j["dimension"] = s.dimension;
  j["live_nodes"] = s.live_nodes;
  j["deleted_nodes"] = s.deleted_nodes;
  j["live_edges"] = s.live_edges;
  j["deleted_edges"] = s.deleted_edges;
  j["kv_entries"] = s.kv_entries;
  j["history_entries"] = s.history_entries;
  j["adjacency_entries"] = s.adjacency_entries;
  j["dead_adjacency_entries"] = s.dead_adjacency_entries;
  j["dangling_edges"] = s.dangling_edges;
  j["custom_relations"] = s.custom_relations;
  j["map_size"] = s.map_size;
  j["used_bytes"] = s.used_bytes;
  j["compaction_recommended"] = s.compaction_recommended;
  j["warnings"] = s.warnings;
  return j;
}

Json CompactReportToJson(const CompactReport& r) {
  Json j;
  j["dry_run"] = r.dry_run;
  j["lists_rewritten"] = r.lists_rewritten;
  j["adjacency_entries_removed"] = r.adjacency_entries_removed;
  j["tombstones_removed"] = r.tombstones_removed;
  j["history_entries_removed"] = r.history_entries_removed;
  j["warnings"] = r.warnings;
  return j;
}

Json ExportResultToJson(const std::string& path, const snapshot::ExportResult& r) {
  Json j;
  j["path"] = path;
  j["revision"] = r.revision;
  j["revision_ts"] = r.revision_ts;
  j["nodes"] = r.nodes;
  j["stubs"] = r.stubs;
  j["edges"] = r.edges;
  j["kv"] = r.kv;
  j["bytes"] = r.bytes;
  return j;
}

void AppendNodeText(const NodeRecord& node, std::string* out) {
  const char* type = NodeTypeName(node.type);
  AppendField(out, "key", node.key);
  AppendField(out, "id", FormatHexId(node.id));
  AppendField(out, "type", type != nullptr ? type : "unknown");
  AppendField(out, "confidence", FormatFloat(node.confidence));
  if (!node.scope.empty()) AppendField(out, "scope", node.scope);
  if (!node.run.empty()) AppendField(out, "run", node.run);
  if (!node.task.empty()) AppendField(out, "task", node.task);
  AppendField(out, "created_ts", std::to_string(node.created_ts));
  AppendField(out, "updated_ts", std::to_string(node.updated_ts));
  AppendField(out, "rev", std::to_string(node.rev));
  if (node.meta != "{}") AppendField(out, "meta", node.meta);
  if (!node.vector.empty()) {
    AppendField(out, "vector", std::to_string(node.vector.size()) + " floats");
  }
  AppendField(out, "content", node.content);
}

void AppendEdgeLine(const EdgeRecord& edge, std::string* out) {
  *out += OneLine(edge.src_key) + " --" + edge.rel_name + "--> " + OneLine(edge.dst_key);
  *out += "  weight=" + FormatFloat(edge.weight) + " rev=" + std::to_string(edge.rev);
  if (edge.payload != "{}") *out += " payload=" + OneLine(edge.payload);
  *out += '\n';
}

void AppendKvText(const KvRecord& kv, std::string* out) {
  AppendField(out, "scope", kv.scope);
  AppendField(out, "ns", kv.ns);
  AppendField(out, "key", kv.key);
  AppendField(out, "rev", std::to_string(kv.rev));
  AppendField(out, "ts", std::to_string(kv.ts));
  if (!kv.run.empty()) AppendField(out, "run", kv.run);
  if (!kv.task.empty()) AppendField(out, "task", kv.task);
  AppendField(out, "value", kv.value);
}

void AppendKvVersionLine(const KvRecord& kv, std::string* out) {
  *out += "rev " + std::to_string(kv.rev) + " ts " + std::to_string(kv.ts);
  AppendNonEmpty(out, "run", kv.run);
  AppendNonEmpty(out, "task", kv.task);
  *out += kv.deleted ? " (deleted)" : "  " + OneLine(kv.value);
  *out += '\n';
}

void AppendChangeLine(const Change& change, std::string* out) {
  *out += "rev " + std::to_string(change.rev) + " ts " + std::to_string(change.ts) + " " +
          ChangeKindName(change.kind) + " ";
  switch (change.kind) {
    case Change::Kind::kPutNode:
    case Change::Kind::kDeleteNode:
      *out += OneLine(change.key);
      break;
    case Change::Kind::kPutEdge:
    case Change::Kind::kDeleteEdge:
      *out += OneLine(change.src_key) + " --" + change.rel_name + "--> " +
              OneLine(change.dst_key);
      break;
    case Change::Kind::kPutKv:
    case Change::Kind::kDeleteKv:
      *out += OneLine(change.scope) + "/" + OneLine(change.ns) + "/" + OneLine(change.key);
      break;
    case Change::Kind::kDefineRelation:
      *out += change.rel_name.empty() ? change.key : change.rel_name;
      break;
  }
  if (change.overwrite) *out += " (overwrite)";
  AppendNonEmpty(out, "run", change.run);
  AppendNonEmpty(out, "task", change.task);
  *out += '\n';
}

void AppendStatsText(const StoreStats& s, std::string* out) {
  auto line = [out](std::string_view label, const std::string& value) {
    *out += "  ";
    *out += label;
    *out += ": ";
    *out += value;
    *out += '\n';
  };
  auto n = [](uint64_t v) { return std::to_string(v); };
  line("Revision", n(s.revision) + " (ts " + std::to_string(s.revision_ts) + ")");
  line("Oldest readable revision", n(s.oldest_readable_revision));
  line("Vector dimension", n(s.dimension));
  line("Nodes", n(s.live_nodes) + " live, " + n(s.deleted_nodes) + " deleted");
  line("Edges", n(s.live_edges) + " live, " + n(s.deleted_edges) + " deleted, " +
                    n(s.dangling_edges) + " dangling");
  line("Kv entries", n(s.kv_entries));
  line("History entries", n(s.history_entries));
  line("Adjacency entries", n(s.adjacency_entries) + " (" + n(s.dead_adjacency_entries) +
                                " dead)");
  line("Custom relations", n(s.custom_relations));
  line("Map size", n(s.map_size) + " bytes, " + n(s.used_bytes) + " used");
  line("Compaction recommended", s.compaction_recommended ? "yes" : "no");
  for (const std::string& w : s.warnings) *out += "warning: " + OneLine(w) + "\n";
}

void AppendCompactReportText(const CompactReport& r, std::string* out) {
  *out += r.dry_run ? "Compaction (dry run, nothing written)\n" : "Compaction\n";
  *out += "  Lists rewritten: " + std::to_string(r.lists_rewritten) + "\n";
  *out += "  Adjacency entries removed: " + std::to_string(r.adjacency_entries_removed) + "\n";
  *out += "  Tombstones removed: " + std::to_string(r.tombstones_removed) + "\n";
  *out += "  History entries removed: " + std::to_string(r.history_entries_removed) + "\n";
  for (const std::string& w : r.warnings) *out += "warning: " + OneLine(w) + "\n";
}

}  // namespace amem::io
