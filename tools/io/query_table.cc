#include "tools/io/query_table.h"

#include <algorithm>

#include <cmath>
#include <cstdio>
#include <utility>

#include "common/model.h"
#include "common/utf8.h"
#include "query/query.h"
#include "tools/io/internal/query_families.h"
#include "tools/io/json_input.h"

namespace amem::io {

const std::vector<QueryDef>& Queries() {
  static const std::vector<QueryDef> queries = [] {
    std::vector<QueryDef> all;
    for (auto family : {GraphQueries, RankingQueries, CognitiveQueries}) {
      for (QueryDef& q : family()) all.push_back(std::move(q));
    }
    return all;
  }();
  return queries;
}

bool IsQueryCommand(std::string_view command) {
  const std::vector<QueryDef>& all = Queries();
  return std::any_of(all.begin(), all.end(),
                     [&](const QueryDef& q) { return q.command == command; });
}

std::string CliSpelling(const Param& p) {
  if (!p.cli.empty()) return p.cli;
  std::string flag = "--" + p.name;
  for (char& c : flag) {
    if (c == '_') c = '-';
  }
  return flag;
}

std::string DefaultText(double value) {
  char buf[32];
  if (value == std::floor(value) && std::fabs(value) < 1e15) {
    std::snprintf(buf, sizeof(buf), "%.0f", value);
  } else {
    std::snprintf(buf, sizeof(buf), "%g", value);
  }
  return buf;
}

namespace {

// "a, b, c": the names name(0) ... name(count - 1).
template <typename Name>
std::string JoinNames(int count, Name name) {
  std::string out;
  for (int i = 0; i < count; ++i) {
    if (i > 0) out += ", ";
    out += name(i);
  }
  return out;
}

std::string NodeTypeNames() {
  return JoinNames(kNodeTypeCount, [](int i) { return NodeTypeName(static_cast<NodeType>(i)); });
}

std::string BuiltinRelationNames() {
  return JoinNames(kBuiltinRelationCount,
                   [](int i) { return BuiltinRelationName(static_cast<RelationId>(i)); });
}

}  // namespace

std::string ParamHelp(const Param& p, FrontEnd front_end) {
  std::string h = front_end == FrontEnd::kMcp && !p.brief.empty() ? p.brief : p.help;
  // The MCP help is short (the schema names the types; docs/MCP.md says the rest):
  // tools/list is sent with every turn.
  const bool cli = front_end == FrontEnd::kCli;
  switch (p.role) {
    case ParamRole::kNode:
      h += cli ? ": a key (e.g. file:src/a.cc, decision:use-lmdb), a 16-hex-digit id or a dense "
                 "index #N (the index field of a result row)"
               : std::string();  // docs/MCP.md: a key, a 16-hex id or #N
      break;
    case ParamRole::kNodes:
      h += cli ? " (keys, 16-hex-digit ids or dense indexes #N)" : " (keys, ids or #N)";
      break;
    case ParamRole::kTypes:
      if (cli) h += " (" + NodeTypeNames() + ")";
      break;
    case ParamRole::kRelations:
      h += cli ? " (built-in: " + BuiltinRelationNames() + "; custom ones by name; or ids)"
               : std::string();
      break;
    case ParamRole::kFileText:
      if (front_end == FrontEnd::kCli) h += ", read from this file (- for stdin)";
      break;
    case ParamRole::kPlain:
    case ParamRole::kWords:
      break;
  }
  if (front_end == FrontEnd::kCli && p.type == ParamType::kStrings &&
      p.role != ParamRole::kNodes && CliSpelling(p).rfind("--", 0) == 0) {
    h += "; repeat or comma-separate";
  }
  // A filter's "all" goes without saying in MCP's short help.
  if (!p.default_text.empty() && (cli || p.default_text != "all")) {
    h += " (default " + p.default_text + ")";
  }
  if (front_end == FrontEnd::kMcp) h += ".";
  return h;
}

Status LatestOnlyError(const Param& p, FrontEnd front_end) {
  if (front_end == FrontEnd::kMcp) {
    return Status::InvalidArgument("\"" + p.name + "\" writes to the store's latest state: "
                                   "leave out as_of/at, or set " + p.name + ": false");
  }
  return Status::InvalidArgument(CliSpelling(p) + " writes to the store's latest state: not "
                                 "with --snapshot, --as-of or --at");
}

namespace {

bool Given(const QueryJson& args, std::string_view name) {
  auto it = args.find(name);
  return it != args.end() && !it->is_null();
}

// NODE or --text (CLI), "node" (MCP).
std::string Spelling(const QueryDef& def, std::string_view name, FrontEnd front_end) {
  if (front_end == FrontEnd::kMcp) return "\"" + std::string(name) + "\"";
  for (const Param& p : def.params) {
    if (p.name == name) return CliSpelling(p);
  }
  return std::string(name);
}

// "A, B or C" of the names as spelled; a list of memory keys (a kNodes parameter,
// like context's seeds) says so.
std::string Alternatives(const QueryDef& def, const std::vector<std::string>& names,
                         FrontEnd front_end, std::string_view last_joiner) {
  std::string list;
  for (size_t i = 0; i < names.size(); ++i) {
    if (i > 0) list += i + 1 == names.size() ? last_joiner : ", ";
    list += Spelling(def, names[i], front_end);
    for (const Param& p : def.params) {
      if (p.name == names[i] && p.role == ParamRole::kNodes) list += " (memory keys)";
    }
  }
  return list;
}

}  // namespace

Status CheckGiven(const QueryDef& def, const QueryJson& args, FrontEnd front_end) {
  auto count = [&](const std::vector<std::string>& names) {
    return std::count_if(names.begin(), names.end(),
                         [&](const std::string& n) { return Given(args, n); });
  };
  if (!def.exactly_one.empty() && count(def.exactly_one) != 1) {
    if (def.exactly_one.size() == 2) {
      return Status::InvalidArgument("give either " +
                                     Alternatives(def, def.exactly_one, front_end, " or ") +
                                     " (exactly one)");
    }
    return Status::InvalidArgument("give exactly one of " +
                                   Alternatives(def, def.exactly_one, front_end, " or "));
  }
  if (!def.at_least_one.empty() && count(def.at_least_one) == 0) {
    const char* joiner = def.at_least_one.size() == 2 ? ", " : " or ";
    std::string message = "give " + Alternatives(def, def.at_least_one, front_end, joiner);
    if (def.at_least_one.size() == 2) message += " or both";
    return Status::InvalidArgument(message);
  }
  return Status::OK();
}

size_t MaxTextChars(const Param& p) {
  if (p.type != ParamType::kString) return 0;
  return p.role == ParamRole::kFileText ? kMaxFileTextChars : kMaxTextChars;
}

Status CheckTextLengths(const QueryDef& def, const QueryJson& args, FrontEnd front_end) {
  for (const Param& p : def.params) {
    const size_t cap = MaxTextChars(p);
    auto it = args.find(p.name);
    if (cap == 0 || it == args.end() || !it->is_string()) continue;
    const std::string& text = it->get_ref<const std::string&>();
    if (text.size() <= cap) continue;  // no more characters than bytes
    const size_t chars = Utf8CharCount(text);
    if (chars <= cap) continue;
    return Status::InvalidArgument(Spelling(def, p.name, front_end) + ": at most " +
                                   std::to_string(cap) + " characters, got " +
                                   std::to_string(chars) + " (docs/QUERIES.md)");
  }
  return Status::OK();
}

// ---- QueryCall ----

bool QueryCall::Has(std::string_view name) const { return Given(args, name); }

std::string QueryCall::String(std::string_view name, std::string_view fallback) const {
  return Has(name) ? args[std::string(name)].get<std::string>() : std::string(fallback);
}

int64_t QueryCall::IntValue(std::string_view name) const {
  return ClampedInt64(args[std::string(name)]);
}

double QueryCall::Number(std::string_view name, double fallback) const {
  return Has(name) ? args[std::string(name)].get<double>() : fallback;
}

bool QueryCall::Bool(std::string_view name, bool fallback) const {
  return Has(name) ? args[std::string(name)].get<bool>() : fallback;
}

std::vector<std::string> QueryCall::Strings(std::string_view name) const {
  std::vector<std::string> out;
  if (Has(name)) {
    for (const auto& s : args[std::string(name)]) out.push_back(s.get<std::string>());
  }
  return out;
}

Result<std::vector<float>> QueryCall::Floats(std::string_view name) const {
  if (!Has(name)) return std::vector<float>{};
  return VectorFromJson(args[std::string(name)],
                        front_end == FrontEnd::kMcp ? std::string(name) : Spell(name));
}

Result<uint32_t> QueryCall::Node(std::string_view name) const {
  return query::ResolveNode(reader, String(name));
}

std::string QueryCall::Spell(std::string_view name) const {
  return Spelling(def, name, front_end);
}

Status QueryCall::UsageError(std::string message) const {
  usage_error = true;
  return Status::InvalidArgument(message);
}

// ---- parameters several queries share (internal/query_families.h) ----

Param LimitParam(size_t default_limit, int mcp_max, std::string help) {
  Param p{.name = "limit", .type = ParamType::kInteger, .help = std::move(help)};
  p.default_text = DefaultText(static_cast<double>(default_limit));
  p.min = 0;
  p.max = UINT32_MAX;  // the widest limit field of the Options structs
  p.mcp_min = 1;
  p.mcp_max = mcp_max;
  return p;
}

Param NodeParam(std::string name, std::string cli, std::string help, bool required) {
  return Param{.name = std::move(name), .role = ParamRole::kNode, .help = std::move(help),
               .cli = std::move(cli), .required = required};
}

Param TypesParam(std::string help) {
  // No max_items: the enum of kNodeTypeCount names says it, and a repeat is harmless.
  return Param{.name = "types", .type = ParamType::kStrings, .role = ParamRole::kTypes,
               .help = std::move(help), .default_text = "all",
               .cli = "--type"};
}

Param RunsParam(std::string help) {
  return Param{.name = "runs", .type = ParamType::kStrings, .help = std::move(help),
               .max_items = 100, .cli = "--run"};
}

Param RelationsParam(std::string help) {
  return Param{.name = "relations", .type = ParamType::kStrings, .role = ParamRole::kRelations,
               .help = std::move(help), .default_text = "all", .max_items = 100,
               .cli = "--rel"};
}

Param Brief(Param p, std::string brief) {
  p.brief = std::move(brief);
  return p;
}

Param DirectionParam(const char* default_direction) {
  return Param{.name = "direction",
               .help = "out: follow edges src -> dst; in: dst -> src; both: either way", .brief = "out, in or both",
               .default_text = default_direction,
               .choices = {"out", "in", "both"}};
}

}  // namespace amem::io
