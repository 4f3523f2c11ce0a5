#include "query/render.h"

#include <algorithm>
#include <cstdio>

#include "common/hash.h"
#include "common/model.h"
#include "snapshot/reader.h"

namespace amem::query {

namespace {

std::string Dump(const Json& value) {
  // A validated snapshot holds only valid UTF-8; replacing instead of throwing keeps
  // a hypothetical bad byte from turning into an exception across the API.
  return value.dump(-1, ' ', false, Json::error_handler_t::replace);
}

bool IsNode(const Json& v) {
  return v.is_object() && v.contains("key") && v.contains("type") && v.contains("index");
}

bool IsEdge(const Json& v) {
  return v.is_object() && v.contains("src") && v.contains("rel") && v.contains("dst");
}

std::string Scalar(const Json& v) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_number_float()) {
    char buf[32];
    std::snprintf(buf, sizeof(buf), "%.6g", v.get<double>());
    return buf;
  }
  return Dump(v);
}

std::string NodeText(const Json& v) {
  std::string out = Scalar(v["key"]) + " (" + Scalar(v["type"]) + " #" + Scalar(v["index"]) + ")";
  if (v.contains("preview") && !v["preview"].get_ref<const std::string&>().empty()) {
    out += " " + Dump(v["preview"]);
  }
  return out;
}

std::string EdgeText(const Json& v) {
  return Scalar(v["src"]) + " --" + Scalar(v["rel"]) + "--> " + Scalar(v["dst"]);
}

bool IsNodeField(std::string_view name) {
  return name == "index" || name == "id" || name == "key" || name == "type" ||
         name == "preview";
}
bool IsEdgeField(std::string_view name) {
  return name == "src" || name == "rel" || name == "dst";
}

// One line for an array element or a nested object.
std::string Inline(const Json& v) {
  if (!v.is_object()) return Scalar(v);
  std::string out;
  bool node = IsNode(v), edge = !node && IsEdge(v);
  if (node) out = NodeText(v);
  if (edge) out = EdgeText(v);
  for (const auto& [name, field] : v.items()) {
    if ((node && IsNodeField(name)) || (edge && IsEdgeField(name))) continue;
    if (!out.empty()) out += "  ";
    out += name;
    out += '=';
    if (field.is_array()) {
      out += '[';
      for (size_t i = 0; i < field.size(); ++i) {
        if (i) out += ", ";
        out += Inline(field[i]);
      }
      out += ']';
    } else if (field.is_object()) {
      out += '{' + Inline(field) + '}';
    } else {
      out += Scalar(field);
    }
  }
  return out;
}

void RenderObject(const Json& doc, const std::string& indent, std::string* out) {
  for (const auto& [name, v] : doc.items()) {
    if (v.is_array()) {
      *out += indent + name + " (" + std::to_string(v.size()) + ")";
      *out += v.empty() ? ": none\n" : ":\n";
      for (const auto& e : v) {
        if (e.is_object() && !IsNode(e) && !IsEdge(e) && e.size() > 0 &&
            std::any_of(e.begin(), e.end(), [](const Json& f) { return f.is_array(); })) {
          *out += indent + "  -\n";
          RenderObject(e, indent + "    ", out);
        } else {
          *out += indent + "  - " + Inline(e) + "\n";
        }
      }
    } else if (v.is_object() && !IsNode(v) && !IsEdge(v)) {
      *out += indent + name + ":\n";
      RenderObject(v, indent + "  ", out);
    } else {
      *out += indent + name + ": " + Inline(v) + "\n";
    }
  }
}

}  // namespace

Json NodeRowJson(const NodeRow& row) {
  Json j;
  j["index"] = row.index;
  j["id"] = FormatHexId(row.id);
  j["key"] = row.key;
  const char* type = NodeTypeName(row.type);
  j["type"] = type ? type : std::to_string(static_cast<unsigned>(row.type));
  j["preview"] = row.preview;
  return j;
}

Json EdgeJson(std::string_view src_key, std::string_view rel, std::string_view dst_key,
              float weight) {
  Json j;
  j["src"] = src_key;
  j["rel"] = rel;
  j["dst"] = dst_key;
  j["weight"] = weight;
  return j;
}

Json NodeJson(const snapshot::Reader& reader, uint32_t index) {
  return NodeRowJson(MakeNodeRow(reader, index));
}

Json EdgeJson(const snapshot::Reader& reader, uint32_t edge) {
  const snapshot::Edge e = reader.edge(edge);
  return EdgeJson(reader.key(e.source), reader.relation_name(e.rel), reader.key(e.target),
                  e.weight);
}

std::string RenderJson(const Json& doc) { return Dump(doc) + "\n"; }

std::string RenderText(const Json& doc) {
  std::string out;
  if (!doc.is_object()) return Inline(doc) + "\n";
  RenderObject(doc, "", &out);
  return out;
}

std::string Render(const Json& doc, Format format) {
  return format == Format::kJson ? RenderJson(doc) : RenderText(doc);
}

}  // namespace amem::query
