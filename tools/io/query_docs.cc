#include "tools/io/query_docs.h"

#include "tools/io/query_table.h"

namespace amem::io {

namespace {

// One line of a Markdown table cell: no pipes, no line breaks.
std::string Cell(std::string_view text) {
  std::string out;
  for (const char c : text) {
    if (c == '|') {
      out += "\\|";
    } else if (c == '\n') {
      out += ' ';
    } else {
      out += c;
    }
  }
  return out;
}

std::string TypeName(const Param& p) {
  switch (p.type) {
    case ParamType::kString: return "string";
    case ParamType::kInteger: return "integer";
    case ParamType::kNumber: return "number";
    case ParamType::kBoolean: return "boolean";
    case ParamType::kStrings: return "list of strings";
    case ParamType::kVector: return "list of numbers";
  }
  return "string";
}

std::string Range(const Param& p) {
  const std::optional<double> lo = p.mcp_min ? p.mcp_min : p.min;
  const std::optional<double> hi = p.mcp_max ? p.mcp_max : p.max;
  if (!lo && !hi) return "";
  if (lo && hi) return DefaultText(*lo) + " to " + DefaultText(*hi);
  return lo ? "at least " + DefaultText(*lo) : "at most " + DefaultText(*hi);
}

std::string Names(const std::vector<std::string>& names) {
  std::string out;
  for (size_t i = 0; i < names.size(); ++i) {
    if (i > 0) out += i + 1 == names.size() ? " or " : ", ";
    out += "`" + names[i] + "`";
  }
  return out;
}

}  // namespace

std::string QueryToolReference() {
  std::string out;
  for (const QueryDef& def : Queries()) {
    out += "\n### `" + def.tool + "` (`amem " + def.command + "`)\n\n";
    out += def.description + "\n";
    if (!def.exactly_one.empty()) out += "\nGive exactly one of " + Names(def.exactly_one) + ".\n";
    if (!def.at_least_one.empty()) {
      out += "\nGive at least one of " + Names(def.at_least_one) + ".\n";
    }
    out += "\n| argument | type | what it is |\n|---|---|---|\n";
    for (const Param& p : def.params) {
      if (p.scope == ParamScope::kCliOnly) continue;
      std::string type = TypeName(p);
      if (p.required) type += ", required";
      const std::string range = Range(p);
      if (!range.empty()) type += ", " + range;
      std::string what = p.help;
      if (p.role == ParamRole::kNode) what += ": a key, a 16-hex-digit id or `#N`";
      if (p.role == ParamRole::kNodes) what += " (keys, 16-hex-digit ids or `#N`)";
      if (!p.choices.empty()) what += "; one of " + Names(p.choices);
      if (!p.default_text.empty()) what += " (default " + p.default_text + ")";
      if (p.latest_only) what += "; writes, so only on the latest state";
      out += "| `" + p.name + "` | " + Cell(type) + " | " + Cell(what) + " |\n";
    }
  }
  return out;
}

}  // namespace amem::io
