// The HTML format of `amem view` (docs/VIEW.md): one self-contained page. The
// embedded library (tools/view/library.h), the page's script and its style are
// inline; the subgraph travels as JSON in <script type="application/json">. The
// page loads nothing and runs under
// Content-Security-Policy: default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'.
#include <cstdio>
#include <string>

#include <nlohmann/json.hpp>

#include "tools/view/library.h"
#include "tools/view/view.h"

namespace amem::view {

namespace {

using query::Json;

constexpr std::string_view kStyle = R"css(
html, body { margin: 0; height: 100%; font: 13px/1.4 sans-serif; color: #222; }
body { display: flex; flex-direction: column; }
header { padding: 6px 10px; background: #f3f3f3; border-bottom: 1px solid #ccc; }
header h1 { font-size: 15px; margin: 0; font-family: monospace; word-break: break-all; }
header p { margin: 2px 0 0; color: #555; }
#toolbar { display: flex; flex-wrap: wrap; gap: 8px; align-items: center; padding: 4px 10px;
           border-bottom: 1px solid #ddd; }
#legend .key { margin-right: 10px; white-space: nowrap; }
#legend i { display: inline-block; width: 10px; height: 10px; border-radius: 5px;
            margin-right: 3px; }
main { flex: 1; display: flex; min-height: 0; }
#cy { flex: 1; min-width: 0; }
#details { width: 320px; overflow: auto; padding: 8px; border-left: 1px solid #ddd;
           background: #fafafa; word-break: break-word; }
#details pre { white-space: pre-wrap; background: #fff; border: 1px solid #eee; padding: 4px; }
)css";

std::string HtmlText(std::string_view s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      default: out += c;
    }
  }
  return out;
}

std::string Number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.6g", v);
  return buf;
}

Json PageData(const Subgraph& g) {
  Json data = Json::object();
  data["header"] = {{"query", g.header.query}, {"args", g.header.args},
                    {"source", g.header.source}};
  data["library"] = std::string(kLibraryName);
  Json nodes = Json::array();
  for (const Node& n : g.nodes) {
    Json j = Json::object();
    j["id"] = "n" + std::to_string(n.index);
    j["index"] = n.index;
    j["hex"] = n.id;
    j["key"] = n.key;
    j["type"] = n.type;
    j["role"] = n.role;
    if (n.depth) j["depth"] = *n.depth;
    Json fields = Json::array();
    for (const auto& [name, value] : n.fields) fields.push_back(Json::array({name, value}));
    j["fields"] = std::move(fields);
    j["confidence"] = Number(n.confidence);
    j["run"] = n.run;
    j["task"] = n.task;
    j["scope"] = n.scope;
    j["created"] = FormatTime(n.created_ts);
    j["updated"] = FormatTime(n.updated_ts);
    if (n.revision) j["revision"] = *n.revision;
    j["meta"] = n.meta;
    j["content"] = n.content;
    nodes.push_back(std::move(j));
  }
  data["nodes"] = std::move(nodes);
  Json edges = Json::array();
  for (const Edge& e : g.edges) {
    edges.push_back({{"source", "n" + std::to_string(g.nodes[e.src].index)},
                     {"target", "n" + std::to_string(g.nodes[e.dst].index)},
                     {"rel", e.rel},
                     {"weight", Number(e.weight)},
                     {"answer", e.in_answer}});
  }
  data["edges"] = std::move(edges);
  return data;
}

}  // namespace

std::string ScriptSafeJson(const Json& value) {
  const std::string dumped = value.dump(-1, ' ', false, Json::error_handler_t::replace);
  std::string out;
  out.reserve(dumped.size());
  for (size_t i = 0; i < dumped.size(); ++i) {
    const char c = dumped[i];
    if (c == '<') {
      out += "\\u003c";
    } else if (c == '>') {
      out += "\\u003e";
    } else if (c == '&') {
      out += "\\u0026";
    } else if (c == '\xE2' && i + 2 < dumped.size() && dumped[i + 1] == '\x80' &&
               (dumped[i + 2] == '\xA8' || dumped[i + 2] == '\xA9')) {
      out += dumped[i + 2] == '\xA8' ? "\\u2028" : "\\u2029";
      i += 2;
    } else {
      out += c;
    }
  }
  return out;
}

Result<std::string> WriteHtml(const Subgraph& g) {
  if (kLibraryJs.empty()) {
    return Status::NotSupported(
        "this amem was built without the graph library the HTML view embeds; run "
        "`bash tools/view/fetch_library.sh` (or `bash tools/bootstrap.sh demo`), then "
        "configure and build again (cmake -S . -B build && cmake --build build), or choose "
        "--format dot, mermaid or graphml");
  }
  std::string licence;
  for (char c : kLibraryLicense) licence += c == '-' ? ' ' : c;  // no "--" in a comment
  std::string out =
      "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
      "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
      "script-src 'unsafe-inline'; style-src 'unsafe-inline'\">\n"
      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
      "<title>amem view " + HtmlText(g.header.query) + "</title>\n<style>" +
      std::string(kStyle) + "</style>\n</head>\n<body>\n"
      "<header><h1 id=\"title\"></h1><p id=\"source\"></p></header>\n"
      "<div id=\"toolbar\">\n"
      "<input id=\"search\" type=\"search\" placeholder=\"search keys and content\">\n"
      "<select id=\"type\" title=\"show one node type\"></select>\n"
      "<select id=\"rel\" title=\"show one relation\"></select>\n"
      "<label>colour by <select id=\"colour\"><option value=\"type\">type</option>"
      "<option value=\"role\">role in the answer</option>"
      "<option value=\"depth\">depth</option></select></label>\n"
      "<span id=\"status\"></span><span id=\"legend\"></span>\n</div>\n"
      "<main><div id=\"cy\"></div><aside id=\"details\">Click a node to see its record."
      "</aside></main>\n"
      "<script type=\"application/json\" id=\"amem-data\">" +
      ScriptSafeJson(PageData(g)) + "</script>\n<!-- " + HtmlText(std::string(kLibraryName)) +
      ", embedded under its licence:\n" + HtmlText(licence) + "-->\n<script>" +
      std::string(kLibraryJs) + "</script>\n<script>" + std::string(kPageJs) +
      "</script>\n</body>\n</html>\n";
  return out;
}

}  // namespace amem::view
