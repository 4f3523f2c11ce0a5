#include "tools/mcp/query_tools.h"

#include <sys/stat.h>

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/files.h"
#include "common/model.h"
#include "snapshot/live.h"
#include "snapshot/export.h"
#include "snapshot/format.h"
#include "snapshot/reader.h"
#include "tools/mcp/file_target.h"
#include "tools/mcp/schema.h"
#include "tools/mcp/server.h"
#include "tools/io/query_log.h"
#include "tools/io/json_records.h"
#include "tools/io/query_table.h"

namespace amem::mcp {

std::optional<std::vector<size_t>> FitToBudget(Json* doc, size_t budget,
                                               const std::vector<size_t>& skip) {
  // Drop what earlier pages gave; `given` counts it per array field, in order.
  std::vector<std::string> order;
  std::vector<size_t> given;
  for (auto& [field, value] : doc->items()) {
    if (!value.is_array()) continue;
    size_t drop = std::min(order.size() < skip.size() ? skip[order.size()] : 0, value.size());
    value.erase(value.begin(), value.begin() + static_cast<std::ptrdiff_t>(drop));
    order.push_back(field);
    given.push_back(drop);
  }
  // Fields that are arrays with rows, smallest first: a small list keeps all of its
  // rows and leaves its unused share to the larger ones.
  std::vector<std::pair<size_t, std::string>> arrays;
  Json frame = Json::object();    // the document with every list emptied
  Json omitted = Json::object();  // the largest "omitted" it could get
  for (const auto& [field, value] : doc->items()) {
    if (value.is_array() && !value.empty()) {
      arrays.emplace_back(ResultCost(value), field);
      frame[field] = Json::array();
      omitted[field] = value.size();
    } else {
      frame[field] = value;
    }
  }
  if (arrays.empty()) return std::nullopt;
  std::sort(arrays.begin(), arrays.end());
  size_t used = ResultCost(frame) + ResultCost(Json{{"omitted", omitted}});
  size_t left = budget > used ? budget - used : 0;
  omitted = Json::object();
  size_t remaining = arrays.size();
  for (const auto& [cost, field] : arrays) {
    size_t share = left / remaining--;
    Json& rows = (*doc)[field];
    BoundedList list(rows.size(), share);
    size_t taken = 0;
    for (auto& row : rows) {
      if (!list.Add(std::move(row))) break;
      ++taken;
    }
    if (taken < rows.size()) omitted[field] = rows.size() - taken;
    left -= std::min(left, list.bytes());
    rows = list.Take();
    size_t k = static_cast<size_t>(std::find(order.begin(), order.end(), field) - order.begin());
    given[k] += taken;
  }
  if (omitted.empty()) return std::nullopt;
  (*doc)["omitted"] = std::move(omitted);
  (*doc)["truncated"] = true;
  return given;
}

namespace {

// The JSON Schema property of one table parameter.
Json SchemaProperty(const io::Param& p) {
  auto number = [](double v) -> Json {
    if (v == static_cast<double>(static_cast<int64_t>(v))) return static_cast<int64_t>(v);
    return v;
  };
  Json s = Json::object();
  switch (p.type) {
    case io::ParamType::kString:
      if (!p.choices.empty()) {
        s["enum"] = p.choices;
      } else {
        s = Json{{"type", "string"}};
        if (!p.allow_empty) s["minLength"] = 1;
        s["maxLength"] = io::MaxTextChars(p);
      }
      break;
    case io::ParamType::kInteger: s["type"] = "integer"; break;
    case io::ParamType::kNumber: s["type"] = "number"; break;
    case io::ParamType::kBoolean: s["type"] = "boolean"; break;
    case io::ParamType::kStrings: {
      // Names of runs may be empty (the run of writes that named none).
      Json item = p.role == io::ParamRole::kPlain ? Json{{"type", "string"}}
                                                   : Json{{"type", "string"}, {"minLength", 1}};
      if (p.role == io::ParamRole::kTypes) {
        Json names = Json::array();
        for (int i = 0; i < kNodeTypeCount; ++i) {
          names.push_back(NodeTypeName(static_cast<NodeType>(i)));
        }
        item = Json{{"enum", names}};
      }
      s = Json{{"type", "array"}, {"items", item}};
      if (p.role == io::ParamRole::kNodes) s["minItems"] = 1;
      break;
    }
    case io::ParamType::kVector:
      s = Json{{"type", "array"}, {"items", Json{{"type", "number"}}}, {"minItems", 1}};
      break;
  }
  if (p.max_items) s["maxItems"] = *p.max_items;
  if (auto min = p.mcp_min ? p.mcp_min : p.min) s["minimum"] = number(*min);
  if (auto max = p.mcp_max ? p.mcp_max : p.max) s["maximum"] = number(*max);
  s["description"] = io::ParamHelp(p, io::FrontEnd::kMcp);
  return s;
}

// A chain answer (path: nodes[i] and edges[i] are its steps) cut by length, so that
// nodes and edges stay aligned (FitToBudget would cut each list on its own): as
// many steps as `budget` holds, after the `skip` = {nodes, edges} earlier pages gave.
// A first page gives its nodes and the edges between them; a later page's first
// edge is the one entering its first node (it leaves the previous page's last).
// Returns what the next page skips, or nullopt when the rest fitted.
std::optional<std::vector<size_t>> FitChain(Json* doc, size_t budget,
                                            const std::vector<size_t>& skip) {
  Json& nodes = (*doc)["nodes"];
  Json& edges = (*doc)["edges"];
  const size_t skip_nodes = std::min(skip.empty() ? 0 : skip[0], nodes.size());
  const size_t skip_edges = std::min(skip.size() < 2 ? 0 : skip[1], edges.size());
  nodes.erase(nodes.begin(), nodes.begin() + static_cast<ptrdiff_t>(skip_nodes));
  edges.erase(edges.begin(), edges.begin() + static_cast<ptrdiff_t>(skip_edges));
  BoundedList fit(SIZE_MAX, budget);
  size_t n = 0;
  while (n < nodes.size() &&
         fit.Add(Json::array({nodes[n], n < edges.size() ? edges[n] : Json()}))) {
    ++n;
  }
  if (n == 0 || n == nodes.size()) return std::nullopt;
  const size_t keep_edges = skip_nodes > 0 ? n : n - 1;
  nodes.erase(nodes.begin() + static_cast<ptrdiff_t>(n), nodes.end());
  if (edges.size() > keep_edges) {
    edges.erase(edges.begin() + static_cast<ptrdiff_t>(keep_edges), edges.end());
  }
  (*doc)["truncated"] = true;
  return std::vector<size_t>{skip_nodes + n, skip_edges + keep_edges};
}

// Whether the tool's answers page (a cursor in, nextCursor out): every read-only
// query but context (a prompt within budget_tokens: its text is the answer, and a
// second page of it would repeat it). A chain (path) pages by steps (FitChain).
bool Pages(const io::QueryDef& def) { return !def.writes && def.tool != "context"; }

// Runs the query on the store's snapshot as of the call's as_of/at (or on
// ctx->reader) and bounds the answer; records the call in the query log.
ToolResult RunOnSnapshot(const ToolContext* ctx, const io::QueryDef& def, const Json& args) {
  const std::string& name = def.tool;
  // budget_tokens (context, impact) is a size the caller asked for: it raises the
  // answer's bound to what it needs (tools/mcp/tool.h), up to kMaxAnswerBytes.
  const int64_t tokens = std::max<int64_t>(0, ArgInt(args, "budget_tokens", 0));
  const size_t asked = HasArg(args, "budget_tokens") ? 4 * static_cast<size_t>(tokens) + 1024 : 0;
  const size_t call_bound = AnswerBytes();  // max_bytes, which the server took from args
  RaiseAnswerBytes(asked);
  for (const io::Param& p : def.params) {
    if (p.latest_only && ArgBool(args, p.name, false) &&
        (ctx->reader != nullptr || HasArg(args, "as_of") || HasArg(args, "at"))) {
      return ToolErrorFromStatus(name, io::LatestOnlyError(p, io::FrontEnd::kMcp));
    }
  }
  if (Status given = io::CheckGiven(def, args, io::FrontEnd::kMcp); !given.ok()) {
    return ToolErrorFromStatus(name, given);
  }
  // A cursor reads the revision of the first page again and skips what it gave.
  uint64_t cursor_revision = 0;
  std::vector<size_t> skip;
  Json paged_args;
  if (HasArg(args, "cursor")) {
    Status s = ParseQueryCursor(ArgString(args, "cursor"), &cursor_revision, &skip);
    if (!s.ok()) return ToolErrorFromStatus(name, s);
    paged_args = args;
    paged_args.erase("cursor");
    if (ctx->reader == nullptr) {  // replay-queries reads its snapshot file instead
      paged_args.erase("at");
      paged_args["as_of"] = cursor_revision;
    }
  }
  const Json& run_args = paged_args.is_null() ? args : paged_args;
  std::optional<io::QueryAnswer> answer;
  std::optional<uint64_t> revision;
  Status ran = AskOnSnapshot(ctx, name, run_args, [&](const SnapshotRead& read, bool* wrote) {
    revision = read.revision;
    io::QueryCall call{.reader = *read.reader,
                       .args = run_args,
                       .def = def,
                       .front_end = io::FrontEnd::kMcp,
                       .store = ctx->reader == nullptr ? ctx->store : nullptr,
                       .latest = read.latest,
                       .write = WriteOptionsFromArgs(run_args)};
    Result<io::QueryAnswer> got = def.run(call);
    if (!got.ok()) return got.status();
    *wrote = got->wrote;
    answer = std::move(*got);
    return Status::OK();
  });
  if (!ran.ok()) return ToolErrorFromStatus(name, ran);
  ToolResult r;
  r.structured = std::move(answer->doc);
  if (revision) r.structured["revision"] = *revision;
  r.text = std::move(answer->text);
  // Each copy (the text, structuredContent) within the call's bound: with a text of
  // its own (context's prompt) structuredContent is sent once, its ResultCost twice.
  const size_t budget = ResultBudget();
  std::optional<std::vector<size_t>> next;
  if (def.chain) next = FitChain(&r.structured, budget - std::min<size_t>(budget / 2, 2048), skip);
  auto rest = FitToBudget(&r.structured, budget, def.chain ? std::vector<size_t>{} : skip);
  if (!def.chain) next = std::move(rest);
  if (next && revision && Pages(def)) r.structured["nextCursor"] = QueryCursor(*revision, *next);
  // A consolidation that wrote is a write: it leaves nothing in the query log.
  if (!ctx->query_log.empty() && !answer->wrote) {
    Json logged = args;  // as the call was made, so that replay-queries bounds it alike
    if (call_bound != kDefaultAnswerBytes) logged[std::string(kAnswerBytesArg)] = call_bound;
    io::QueryRecord record{"mcp", name, logged, revision, io::AnswerDigest(r.structured)};
    Status s = io::AppendQueryLog(ctx->query_log, record);
    if (!s.ok()) std::fprintf(stderr, "amem mcp: warning: %s\n", s.ToString().c_str());
  }
  return r;
}

// The tool of one table query: its parameters plus as_of/at (and, when it writes,
// the write attribution).
Tool QueryTool(const ToolContext* ctx, const io::QueryDef& def) {
  Json properties = Json::object();
  std::vector<std::string> required;
  for (const io::Param& p : def.params) {
    if (p.scope == io::ParamScope::kCliOnly) continue;
    properties[p.name] = SchemaProperty(p);
    if (p.required) required.push_back(p.name);
  }
  properties = Merge(std::move(properties), AsOfProperties());
  if (Pages(def)) properties["cursor"] = CursorProperty();
  if (def.writes) properties = Merge(std::move(properties), WriteProperties());
  Tool t;
  t.name = def.tool;
  t.title = def.title;
  t.description = def.brief;
  t.input_schema = ObjectSchema(std::move(properties), std::move(required));
  t.read_only = !def.writes;
  t.destructive = false;
  t.idempotent = true;
  t.handler = [ctx, &def](const Json& args) { return RunOnSnapshot(ctx, def, args); };
  return t;
}

// Whether `path` starts with a snapshot's magic: the only file export_snapshot
// replaces.
bool IsSnapshotFile(const std::filesystem::path& path) {
  char magic[sizeof(snapshot::kMagic)] = {};
  std::ifstream in(path, std::ios::binary);
  return in.read(magic, sizeof(magic)) && std::memcmp(magic, snapshot::kMagic, sizeof(magic)) == 0;
}

void AddExportTool(ToolRegistry* registry, ToolContext* ctx) {
  Tool t;
  t.name = "export_snapshot";
  t.title = "Export a snapshot file";
  t.description =
      "Write the memory (or its state as_of/at) to a .amem snapshot file under the export "
      "directory.";
  t.input_schema = ObjectSchema(
      Merge(Json{{"path", Json{{"type", "string"},
                                {"minLength", 1},
                                {"description", "e.g. snapshots/v1.amem."}}},
                 {"overwrite", Json{{"type", "boolean"},
                                    {"description", "Replace an existing snapshot."}}}},
            AsOfProperties()),
      {"path"});
  t.read_only = false;
  t.destructive = true;  // with overwrite: true it replaces a file
  t.idempotent = false;
  t.handler = [ctx](const Json& args) {
    Store* store = ctx->store;
    auto view = ViewFromArgs(args);
    if (!view.ok()) return ToolErrorFromStatus("export_snapshot", view.status());
    auto path = FileTarget(ctx->export_dir, store->path(), ArgString(args, "path"),
                           ArgBool(args, "overwrite", false),
                           {".amem", "an .amem snapshot", IsSnapshotFile});
    if (!path.ok()) return ToolErrorFromStatus("export_snapshot", path.status());
    snapshot::ExportOptions options;
    options.view = *view;
    auto res = snapshot::ExportSnapshot(*store, path->string(), options);
    if (!res.ok()) return ToolErrorFromStatus("export_snapshot", res.status());
    ToolResult r;
    r.structured = io::ExportResultToJson(path->string(), *res);
    return r;
  };
  registry->Add(std::move(t));
}

}  // namespace

void AddQueryTools(ToolRegistry* registry, ToolContext* ctx) {
  for (const io::QueryDef& def : io::Queries()) registry->Add(QueryTool(ctx, def));
  AddExportTool(registry, ctx);
}

}  // namespace amem::mcp
