// The text formats of `amem view`: DOT, Mermaid and GraphML (docs/VIEW.md). Node
// identifiers are "n" + the snapshot index, safe in all three; every label goes
// through its format's escaping, so a key with quotes, brackets, newlines or -->
// stays text.
#include <cctype>
#include <cstdio>
#include <ctime>
#include <map>
#include <string>

#include "tools/view/view.h"

namespace amem::view {

namespace {

std::string Weight(float w) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.3g", static_cast<double>(w));
  return buf;
}

std::string Id(const Node& n) { return "n" + std::to_string(n.index); }

// Control characters (other than in the escapes each format has) as spaces.
bool IsControl(unsigned char c) { return c < 0x20 || c == 0x7F; }

// The colour of each node type in a subgraph: a fixed palette, assigned in the
// order of the sorted type names (deterministic; the HTML page uses the same).
constexpr const char* kPalette[] = {"#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2",
                                    "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac"};

std::map<std::string, std::string> TypeColours(const Subgraph& g) {
  std::map<std::string, std::string> colours;
  for (const Node& n : g.nodes) colours.emplace(n.type, "");
  size_t k = 0;
  for (auto& [type, colour] : colours) colour = kPalette[k++ % std::size(kPalette)];
  return colours;
}

std::string HeaderLine(const Subgraph& g) {
  std::string line = "amem view";
  if (!g.header.query.empty()) line += " " + g.header.query;
  if (!g.header.args.empty()) line += " " + g.header.args;
  if (!g.header.source.empty()) line += " (" + g.header.source + ")";
  return line;
}

// ---- DOT ----

// A DOT quoted string: backslash and quote escaped, newlines as \n.
std::string DotQuote(std::string_view s) {
  std::string out = "\"";
  for (char ch : s) {
    unsigned char c = static_cast<unsigned char>(ch);
    if (ch == '"' || ch == '\\') {
      out += '\\';
      out += ch;
    } else if (ch == '\n') {
      out += "\\n";
    } else if (IsControl(c)) {
      out += ' ';
    } else {
      out += ch;
    }
  }
  return out + "\"";
}

// ---- Mermaid ----

// Text inside a Mermaid quoted label: the characters that could end the label or
// turn into markup (quote, #, <, >, &, |, backtick, backslash, ;) as entity codes,
// newlines and controls as spaces. Inside the quotes, brackets and --> are text.
std::string MermaidText(std::string_view s) {
  std::string out;
  for (char ch : s) {
    unsigned char c = static_cast<unsigned char>(ch);
    switch (ch) {
      case '"': out += "#quot;"; break;
      case '#': out += "#35;"; break;
      case '<': out += "#lt;"; break;
      case '>': out += "#gt;"; break;
      case '&': out += "#amp;"; break;
      case '|': out += "#124;"; break;
      case '`': out += "#96;"; break;
      case ';': out += "#59;"; break;
      case '\\': out += "#92;"; break;
      default: out += IsControl(c) ? ' ' : ch;
    }
  }
  return out;
}

// A Mermaid class name for a type: letters, digits and _ only.
std::string MermaidClass(std::string_view type) {
  std::string out = "t_";
  for (char c : type) {
    out += (std::isalnum(static_cast<unsigned char>(c)) || c == '_') ? c : '_';
  }
  return out;
}

// ---- GraphML ----

// XML character data / attribute value: markup escaped; characters XML 1.0 does
// not allow (controls other than tab, newline, CR) as U+FFFD.
std::string Xml(std::string_view s) {
  std::string out;
  for (char ch : s) {
    unsigned char c = static_cast<unsigned char>(ch);
    switch (ch) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&apos;"; break;
      default:
        if ((c < 0x20 && ch != '\t' && ch != '\n' && ch != '\r') || c == 0x7F) {
          out += "\xEF\xBF\xBD";
        } else {
          out += ch;
        }
    }
  }
  return out;
}

}  // namespace

std::string WriteDot(const Subgraph& g) {
  const auto colours = TypeColours(g);
  std::string out = "digraph amem {\n";
  out += "  label=" + DotQuote(HeaderLine(g)) + ";\n  labelloc=t;\n";
  out += "  node [shape=box, style=\"rounded,filled\", fontcolor=white, fontname=Helvetica];\n";
  out += "  edge [fontname=Helvetica, fontsize=10];\n";
  for (const Node& n : g.nodes) {
    out += "  " + Id(n) + " [label=" + DotQuote(n.key + "\n(" + n.type + ")") +
           ", fillcolor=\"" + colours.at(n.type) + "\", tooltip=" + DotQuote(n.role);
    if (n.role == "root" || n.role == "start" || n.role == "retracted" || n.role == "changed") {
      out += ", penwidth=3, color=black";
    }
    out += "];\n";
  }
  for (const Edge& e : g.edges) {
    out += "  " + Id(g.nodes[e.src]) + " -> " + Id(g.nodes[e.dst]) +
           " [label=" + DotQuote(e.rel + " " + Weight(e.weight)) +
           (e.in_answer ? ", penwidth=2" : ", style=dashed") + "];\n";
  }
  out += "}\n";
  return out;
}

std::string WriteMermaid(const Subgraph& g) {
  const auto colours = TypeColours(g);
  std::string out = "---\ntitle: \"" + MermaidText(HeaderLine(g)) + "\"\n---\nflowchart LR\n";
  for (const Node& n : g.nodes) {
    out += "  " + Id(n) + "[\"" + MermaidText(n.key) + "<br/>(" + MermaidText(n.type) + ")\"]\n";
  }
  for (const Edge& e : g.edges) {
    out += "  " + Id(g.nodes[e.src]) + (e.in_answer ? " ==>" : " -->") + "|\"" +
           MermaidText(e.rel + " " + Weight(e.weight)) + "\"| " + Id(g.nodes[e.dst]) + "\n";
  }
  std::map<std::string, std::string> members;  // class -> "n1,n2"
  for (const Node& n : g.nodes) {
    std::string& list = members[MermaidClass(n.type)];
    if (!list.empty()) list += ',';
    list += Id(n);
  }
  for (const auto& [type, colour] : colours) {
    out += "  classDef " + MermaidClass(type) + " fill:" + colour + ",color:#fff\n";
    out += "  class " + members[MermaidClass(type)] + " " + MermaidClass(type) + "\n";
  }
  return out;
}

std::string WriteGraphml(const Subgraph& g) {
  std::string out =
      "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
      "<graphml xmlns=\"http://graphml.graphdrawing.org/xmlns\">\n"
      "  <key id=\"key\" for=\"node\" attr.name=\"key\" attr.type=\"string\"/>\n"
      "  <key id=\"type\" for=\"node\" attr.name=\"type\" attr.type=\"string\"/>\n"
      "  <key id=\"role\" for=\"node\" attr.name=\"role\" attr.type=\"string\"/>\n"
      "  <key id=\"content\" for=\"node\" attr.name=\"content\" attr.type=\"string\"/>\n"
      "  <key id=\"confidence\" for=\"node\" attr.name=\"confidence\" attr.type=\"double\"/>\n"
      "  <key id=\"depth\" for=\"node\" attr.name=\"depth\" attr.type=\"long\"/>\n"
      "  <key id=\"rel\" for=\"edge\" attr.name=\"rel\" attr.type=\"string\"/>\n"
      "  <key id=\"weight\" for=\"edge\" attr.name=\"weight\" attr.type=\"double\"/>\n"
      "  <key id=\"in_answer\" for=\"edge\" attr.name=\"in_answer\" attr.type=\"boolean\"/>\n"
      "  <graph id=\"amem\" edgedefault=\"directed\">\n"
      "    <desc>" + Xml(HeaderLine(g)) + "</desc>\n";
  for (const Node& n : g.nodes) {
    out += "    <node id=\"" + Id(n) + "\">\n";
    out += "      <data key=\"key\">" + Xml(n.key) + "</data>\n";
    out += "      <data key=\"type\">" + Xml(n.type) + "</data>\n";
    out += "      <data key=\"role\">" + Xml(n.role) + "</data>\n";
    out += "      <data key=\"content\">" + Xml(n.content) + "</data>\n";
    out += "      <data key=\"confidence\">" + Weight(n.confidence) + "</data>\n";
    if (n.depth) out += "      <data key=\"depth\">" + std::to_string(*n.depth) + "</data>\n";
    out += "    </node>\n";
  }
  size_t k = 0;
  for (const Edge& e : g.edges) {
    out += "    <edge id=\"e" + std::to_string(k++) + "\" source=\"" + Id(g.nodes[e.src]) +
           "\" target=\"" + Id(g.nodes[e.dst]) + "\">\n";
    out += "      <data key=\"rel\">" + Xml(e.rel) + "</data>\n";
    out += "      <data key=\"weight\">" + Weight(e.weight) + "</data>\n";
    out += "      <data key=\"in_answer\">" + std::string(e.in_answer ? "true" : "false") +
           "</data>\n";
    out += "    </edge>\n";
  }
  out += "  </graph>\n</graphml>\n";
  return out;
}

std::string FormatTime(int64_t ts) {
  std::time_t t = static_cast<std::time_t>(ts);
  std::tm tm{};
  if (gmtime_r(&t, &tm) == nullptr) return std::to_string(ts);
  char buf[40];
  std::strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

Result<Format> ParseFormat(std::string_view name) {
  if (name == "html") return Format::kHtml;
  if (name == "dot") return Format::kDot;
  if (name == "mermaid") return Format::kMermaid;
  if (name == "graphml") return Format::kGraphml;
  return Status::InvalidArgument("unknown format '" + std::string(name) +
                                 "'; choose html, dot, mermaid or graphml");
}

const char* FormatName(Format format) {
  switch (format) {
    case Format::kHtml: return "html";
    case Format::kDot: return "dot";
    case Format::kMermaid: return "mermaid";
    case Format::kGraphml: return "graphml";
  }
  return "dot";
}

Format DefaultFormat(std::string_view out_path) {
  auto ends = [&](std::string_view suffix) {
    return out_path.size() >= suffix.size() &&
           out_path.substr(out_path.size() - suffix.size()) == suffix;
  };
  if (ends(".html") || ends(".htm")) return Format::kHtml;
  if (ends(".mmd")) return Format::kMermaid;
  if (ends(".graphml")) return Format::kGraphml;
  return Format::kDot;
}

Result<std::string> Write(const Subgraph& g, Format format) {
  switch (format) {
    case Format::kHtml: return WriteHtml(g);
    case Format::kDot: return WriteDot(g);
    case Format::kMermaid: return WriteMermaid(g);
    case Format::kGraphml: return WriteGraphml(g);
  }
  return WriteDot(g);
}

}  // namespace amem::view
