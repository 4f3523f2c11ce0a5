#include "tools/mcp/memory_tools.h"

#include <algorithm>
#include <utility>

#include "common/hash.h"
#include "common/model.h"
#include "tools/io/node_arg.h"
#include "tools/io/ingest.h"
#include "tools/mcp/compat.h"
#include "tools/mcp/query_tools.h"
#include "tools/mcp/schema.h"
#include "tools/mcp/server.h"
#include "tools/mcp/view_tool.h"
#include "tools/io/json_records.h"

namespace amem::mcp {

Json NodeJson(const NodeRecord& n) {
  Json j = io::NodeToJson(n);
  j.erase("vector");
  j["has_vector"] = !n.vector.empty();
  return j;
}

Json KvJson(const KvRecord& kv) { return io::KvToJson(kv, /*with_deleted=*/true); }

Result<Json> StoreStatsJson(const Store& store) {
  AMEM_ASSIGN_OR_RETURN(stats, store.Stats());
  Json doc{{"path", store.path()}};
  const Json counts = io::StatsToJson(stats);
  for (const auto& [k, v] : counts.items()) doc[k] = v;
  return doc;
}

namespace {

constexpr const char* kDefaultScope = "project";

Json EdgeJson(const EdgeRecord& e) { return io::EdgeToJson(e); }
Json ChangeJson(const Change& c) { return io::ChangeToJson(c); }


// Applies operations written in the ingest format (tools/io/ingest.h) in one
// transaction, so MCP writes are validated exactly as `amem ingest` lines are.
Result<uint64_t> ApplyOps(Store* store, const std::vector<Json>& ops, const WriteOptions& w) {
  WriteTurn turn(*store);
  Batch batch;
  for (size_t i = 0; i < ops.size(); ++i) {
    Status s = io::AddIngestOp(nlohmann::json(ops[i]), &batch);
    if (!s.ok()) {
      return ops.size() == 1 ? s : s.WithContext("operations[" + std::to_string(i) + "]");
    }
  }
  auto rev = store->Apply(batch, w);
  if (!rev.ok() && ops.size() == 1 && rev.status().message().starts_with("op 0: ")) {
    // One operation: "op 0" says nothing to the model.
    return Status::InvalidArgument(rev.status().message().substr(6));
  }
  return rev;
}

ToolResult Written(Store* store, const std::vector<Json>& ops, const Json& args,
                   std::string_view what, Json result) {
  auto rev = ApplyOps(store, ops, WriteOptionsFromArgs(args));
  if (!rev.ok()) return ToolErrorFromStatus(what, rev.status());
  ToolResult r;
  r.structured = std::move(result);
  r.structured["revision"] = *rev;
  return r;
}

// Written, for the attempt of a read-modify-write (RetryOnConflict): `ops` were
// built from the store as of `revision`, so they apply only if it is still there;
// Aborted otherwise, and the attempt runs again.
Result<ToolResult> WrittenAt(Store* store, uint64_t revision, const std::vector<Json>& ops,
                             const Json& args, std::string_view what, Json result) {
  WriteOptions w = WriteOptionsFromArgs(args);
  w.expected_revision = revision;
  auto rev = ApplyOps(store, ops, w);
  if (!rev.ok() && rev.status().IsAborted()) return rev.status();
  if (!rev.ok()) return ToolErrorFromStatus(what, rev.status());
  ToolResult r;
  r.structured = std::move(result);
  r.structured["revision"] = *rev;
  return r;
}

ToolResult Unchanged(Json result) {
  ToolResult r;
  r.structured = std::move(result);
  return r;
}

// How much of a long content or value one call returns by default, and at most.
constexpr int kDefaultTextSliceBytes = 8192;
constexpr int kMaxTextSliceBytes = 24576;
// A value in a list (recall without key) is cut to this; recall by key reads it all.
constexpr size_t kListValueBytes = 2048;

Json SliceProperties(const std::string& field) {
  Json p = Json::object();
  p[field + "_offset"] = {
      {"type", "integer"},
      {"minimum", 0},
      {"description", "next_" + field + "_offset of the last call."}};
  p["max_" + field + "_bytes"] = {
      {"type", "integer"},
      {"minimum", 1},
      {"maximum", kMaxTextSliceBytes},
      {"description", "Slice bytes (default " + std::to_string(kDefaultTextSliceBytes) + ")."}};
  return p;
}

// A kv entry in a list: its value cut to kListValueBytes (then truncated: true and
// value_bytes say so; recall by key reads it whole).
Json ListedKvJson(const KvRecord& kv) {
  Json j = KvJson(kv);
  (void)PutTextSlice(&j, "value", kv.value, 0, kListValueBytes, ResultBudget());
  return j;
}

Json TypeEnum() {
  Json names = Json::array();
  for (int i = 0; i < kNodeTypeCount; ++i) names.push_back(NodeTypeName(static_cast<NodeType>(i)));
  names.push_back("procedure");
  return names;
}

Json NodeArg(std::string_view description) {
  return Json{{"type", "string"}, {"minLength", 1}, {"description", description}};
}

Json Str(std::string_view description, int max_len = 0) {
  Json j{{"type", "string"}, {"description", description}};
  if (max_len > 0) j["maxLength"] = max_len;
  return j;
}

Json KvProperties() {
  return Json{
      {"namespace", Merge(Str("decisions, constraints, procedures or any name.",
                              256),
                          Json{{"minLength", 1}})},
      {"key", Merge(Str("Stable name, e.g. storage-engine.", 256),
                    Json{{"minLength", 1}})},
      {"scope", Merge(Str("Default project.", 256),
                      Json{{"minLength", 1}})}};
}

// Pages `items` (already as JSON) from the cursor's offset.
ToolResult PageOf(const std::vector<Json>& items, const char* field, const Json& args,
                  const PageStart& start, uint64_t revision, int default_limit) {
  BoundedList list(static_cast<size_t>(ArgInt(args, "limit", default_limit)), ResultBudget());
  size_t i = start.offset;
  while (i < items.size() && list.Add(items[i])) ++i;
  ToolResult r;
  r.structured["total"] = items.size();
  r.structured[field] = list.Take();
  if (i < items.size()) {
    r.structured["nextCursor"] = MakeCursor(revision, i);
    r.structured["truncated"] = true;
  }
  return r;
}

void AddKvTools(ToolRegistry* registry, Store* store) {
  Tool t;
  t.name = "remember";
  t.title = "Remember a decision, constraint or procedure";
  t.description =
      "Record a decision (what and why), constraint (a rule that must hold) or procedure "
      "under namespace/key; history keeps old values.";
  t.input_schema = ObjectSchema(
      Merge(Merge(KvProperties(),
                  Json{{"value",
                        {{"type", Json::array({"string", "object", "array"})},
                         {"description",
                          "Text (or JSON)."}}}}),
            WriteProperties()),
      {"namespace", "key", "value"});
  t.idempotent = true;
  t.handler = [store](const Json& args) {
    std::string scope = ArgString(args, "scope", kDefaultScope);
    Json op{{"op", "kv"}, {"scope", scope}, {"ns", args["namespace"]}, {"key", args["key"]},
            {"value", args["value"]}};
    return Written(store, {op}, args, "remember",
                   Json{{"scope", scope}, {"namespace", args["namespace"]}, {"key", args["key"]}});
  };
  registry->Add(t);

  t = Tool();
  t.name = "recall";
  t.title = "Recall policy memory";
  t.description =
      "Read policy memory: one entry by key (history: true for every version), or every "
      "entry of a namespace. Long values come in slices (next_value_offset).";
  t.input_schema = ObjectSchema(
      Merge(Merge(Merge(Merge(KvProperties(),
                              Json{{"history",
                                    {{"type", "boolean"},
                                     {"description", "Every version of key."}}}}),
                        AsOfProperties()),
                  PageProperties(100, 1000)),
            SliceProperties("value")),
      {"namespace"});
  t.read_only = true;
  t.idempotent = true;
  t.handler = [store](const Json& args) {
    std::string scope = ArgString(args, "scope", kDefaultScope);
    std::string ns = args["namespace"];
    auto start = PageStartFromArgs(args);
    if (!start.ok()) return ToolError(start.status().message());
    auto view = PageViewFromArgs(args, *start);
    if (!view.ok()) return ToolError(view.status().message());
    if (HasArg(args, "key") && !ArgBool(args, "history", false)) {
      auto kv = store->GetKv(scope, ns, ArgString(args, "key"), *view);
      if (!kv.ok()) {
        return ToolErrorFromStatus("recall " + scope + "/" + ns + "/" + ArgString(args, "key"),
                                   kv.status());
      }
      Json entry = KvJson(*kv);
      Status s = PutTextSlice(
          &entry, "value", kv->value, static_cast<size_t>(ArgInt(args, "value_offset", 0)),
          static_cast<size_t>(ArgInt(args, "max_value_bytes", kDefaultTextSliceBytes)),
          ResultBudget());
      if (!s.ok()) return ToolErrorFromStatus("recall", s);
      ToolResult r;
      r.structured["entry"] = std::move(entry);
      return r;
    }
    auto rev = store->ResolveRevision(*view);
    if (!rev.ok()) return ToolErrorFromStatus("recall", rev.status());
    std::vector<Json> items;
    const char* field = "entries";
    if (HasArg(args, "key")) {
      auto hist = store->KvHistory(scope, ns, ArgString(args, "key"));
      if (!hist.ok()) return ToolErrorFromStatus("recall", hist.status());
      for (const auto& kv : *hist) {
        if (kv.rev <= *rev) items.push_back(ListedKvJson(kv));
      }
      field = "versions";
    } else {
      auto list = store->ListKv(scope, ns, ReadView::AtRevision(*rev));
      if (!list.ok()) return ToolErrorFromStatus("recall", list.status());
      for (const auto& kv : *list) items.push_back(ListedKvJson(kv));
    }
    return PageOf(items, field, args, *start, *rev, 100);
  };
  registry->Add(t);

  t = Tool();
  t.name = "forget";
  t.title = "Forget a policy entry";
  t.description =
      "Delete a policy entry; its history stays readable (recall history, as_of).";
  t.input_schema = ObjectSchema(Merge(KvProperties(), WriteProperties()), {"namespace", "key"});
  t.destructive = true;
  t.idempotent = true;
  t.handler = [store](const Json& args) {
    std::string scope = ArgString(args, "scope", kDefaultScope);
    // deleted says whether this call removed the entry, so the check and the delete
    // must see one state: read-modify-write.
    return RetryOnConflict(store, "forget", [&](uint64_t at) -> Result<ToolResult> {
      Json result{{"scope", scope}, {"namespace", args["namespace"]}, {"key", args["key"]}};
      auto kv = store->GetKv(scope, args["namespace"].get<std::string>(),
                             args["key"].get<std::string>(), ReadView::AtRevision(at));
      if (!kv.ok() && !kv.status().IsNotFound()) return kv.status();
      result["deleted"] = kv.ok();
      if (!kv.ok()) return Unchanged(std::move(result));
      Json op{{"op", "del_kv"}, {"scope", scope}, {"ns", args["namespace"]}, {"key", args["key"]}};
      return WrittenAt(store, at, {op}, args, "forget", std::move(result));
    });
  };
  registry->Add(t);
}

// One of put_memory's links: an edge from or to the memory.
Json LinkItemSchema() {
  return ObjectSchema(
      Json{{"rel", Str("Relation.")},
           {"to", Str("Target key.")},
           {"from", Str("Source key.")},
           {"weight", {{"type", "number"}, {"description", "Default 1."}}}},
      {"rel"});
}

Tool PutMemoryTool(Store* store) {
  Tool t;
  t.name = "put_memory";
  t.title = "Store a typed memory";
  t.description =
      "Store a memory under a canonical key (file:src/a.cc, symbol:ns::F, decision:use-lmdb), "
      "replacing it (history kept), with links {rel,to} or {rel,from}.";
  t.input_schema = ObjectSchema(
      Merge(Json{{"key", Merge(Str("Canonical key.", 1024),
                               Json{{"minLength", 1}})},
                 {"type", {{"enum", TypeEnum()}, {"description", "Kind of memory."}}},
                 {"content", Str("The memory, plain text.")},
                 {"meta", {{"type", "object"},
                           {"additionalProperties", {{"type", "string"}}},
                           {"description", "String attributes."}}},
                 {"confidence", {{"type", "number"}, {"minimum", 0}, {"maximum", 1},
                                 {"description", "0..1 (default 1)."}}},
                 {"links", Merge(ArrayOf(LinkItemSchema(), "Edges to add."),
                                 Json{{"maxItems", 1000}})}},
            WriteProperties()),
      {"key", "type"});
  t.idempotent = true;
  t.handler = [store](const Json& args) {
    std::string key = args["key"];
    Json node{{"op", "node"}, {"key", key}, {"type", args["type"]}};
    for (const char* f : {"content", "meta", "confidence", "scope"}) {
      if (HasArg(args, f)) node[f] = args[f];
    }
    std::vector<Json> ops{node};
    if (HasArg(args, "links")) {
      const Json& links = args["links"];
      for (size_t i = 0; i < links.size(); ++i) {
        const Json& l = links[i];
        bool to = l.contains("to"), from = l.contains("from");
        if (to == from) {
          return ToolError("invalid arguments for put_memory: links[" + std::to_string(i) +
                           "]: give exactly one of \"to\" or \"from\"");
        }
        Json edge{{"op", "edge"},
                  {"src", to ? key : io::NodeKeyForArg(*store, l["from"].get<std::string>())},
                  {"rel", l["rel"]},
                  {"dst", to ? io::NodeKeyForArg(*store, l["to"].get<std::string>()) : key}};
        if (l.contains("weight")) edge["weight"] = l["weight"];
        ops.push_back(std::move(edge));
      }
    }
    return Written(store, ops, args, "put_memory",
                   Json{{"key", key}, {"id", FormatHexId(NodeIdForKey(key))},
                        {"links", ops.size() - 1}});
  };
  return t;
}

Tool GetMemoryTool(Store* store) {
  Tool t;
  t.name = "get_memory";
  t.title = "Get a memory and its edges";
  t.description =
      "Read a memory by key or id, with its edges in and out. Long content comes in "
      "slices (next_content_offset).";
  t.input_schema = ObjectSchema(
      Merge(Merge(Json{{"node", NodeArg("Key or id.")},
                       {"edge_limit", {{"type", "integer"}, {"minimum", 0}, {"maximum", 1000},
                                       {"description", "Max edges each way (default 50)."}}},
                       {"cursor", CursorProperty()}},
                  SliceProperties("content")),
            AsOfProperties()),
      {"node"});
  t.read_only = true;
  t.idempotent = true;
  t.handler = [store](const Json& args) {
    // A cursor (the nextCursor of a page whose edges were cut) names the revision
    // read and the out and in edges given so far.
    uint64_t revision = 0;
    std::vector<size_t> given;
    if (HasArg(args, "cursor")) {
      Status s = ParseQueryCursor(ArgString(args, "cursor"), &revision, &given);
      if (s.ok() && given.size() != 2) {
        s = Status::InvalidArgument("cursor \"" + ArgString(args, "cursor") +
                                    "\" is not a nextCursor this server returned");
      }
      if (!s.ok()) return ToolErrorFromStatus("get_memory", s);
    }
    auto view = revision != 0 ? Result<ReadView>(ReadView::AtRevision(revision))
                              : ViewFromArgs(args);
    if (!view.ok()) return ToolError(view.status().message());
    if (revision == 0) {
      auto at = store->ResolveRevision(*view);
      if (!at.ok()) return ToolErrorFromStatus("get_memory", at.status());
      revision = *at;
      given = {0, 0};
    }
    std::string arg = args["node"];
    auto node = store->ResolveNode(arg, *view);
    if (!node.ok()) return ToolErrorFromStatus("get_memory " + arg, node.status());
    // The node takes what its content slice needs, leaving at least kEdgeReserve
    // for the edges; the edges share the rest of the budget.
    const size_t budget = ResultBudget(), edge_reserve = budget / 4;
    Json node_json = NodeJson(*node);
    Status sliced = PutTextSlice(
        &node_json, "content", node->content, static_cast<size_t>(ArgInt(args, "content_offset", 0)),
        static_cast<size_t>(ArgInt(args, "max_content_bytes", kDefaultTextSliceBytes)),
        budget - edge_reserve);
    if (!sliced.ok()) return ToolErrorFromStatus("get_memory " + arg, sliced);
    size_t edge_budget = budget - std::min(budget, ResultCost(node_json));
    ToolResult r;
    r.structured["node"] = std::move(node_json);
    size_t limit = static_cast<size_t>(ArgInt(args, "edge_limit", 50));
    std::vector<size_t> next = given;
    bool more = false;
    for (bool outgoing : {true, false}) {
      auto edges = outgoing ? store->Out(node->key, {}, *view) : store->In(node->key, {}, *view);
      if (!edges.ok()) return ToolErrorFromStatus("get_memory " + arg, edges.status());
      size_t& at = next[outgoing ? 0 : 1];
      if (at > edges->size()) {
        return ToolErrorFromStatus(
            "get_memory", Status::InvalidArgument("cursor \"" + ArgString(args, "cursor") +
                                                  "\" is not a nextCursor this server returned"));
      }
      BoundedList list(limit, edge_budget / 2);
      for (size_t i = at; i < edges->size(); ++i) {
        if (!list.Add(EdgeJson((*edges)[i]))) break;
      }
      at += list.size();
      r.structured[outgoing ? "out_total" : "in_total"] = edges->size();
      more = more || at < edges->size();
      r.structured[outgoing ? "out" : "in"] = list.Take();
    }
    if (more) {
      r.structured["truncated"] = true;
      r.structured["nextCursor"] = QueryCursor(revision, next);
    }
    return r;
  };
  return t;
}

Tool DeleteMemoryTool(Store* store) {
  Tool t;
  t.name = "delete_memory";
  t.title = "Delete a memory";
  t.description =
      "Delete a memory and its edges (keep_edges: the node only); history keeps it.";
  t.input_schema = ObjectSchema(
      Merge(Json{{"node", NodeArg("Key or id.")},
                 {"keep_edges",
                  {{"type", "boolean"},
                   {"description", "Keep its edges."}}}},
            WriteProperties()),
      {"node"});
  t.destructive = true;
  t.idempotent = true;
  t.handler = [store](const Json& args) {
    std::string arg = args["node"];
    const bool keep_edges = args.value("keep_edges", false);
    // The edges to delete are the ones read: an edge linked in between would be
    // left dangling, so the delete applies only to the state it was read from.
    return RetryOnConflict(store, "delete_memory", [&](uint64_t at) -> Result<ToolResult> {
      ReadView view = ReadView::AtRevision(at);
      auto node = store->ResolveNode(arg, view);
      if (!node.ok()) return ToolErrorFromStatus("delete_memory " + arg, node.status());
      std::vector<Json> ops;
      if (!keep_edges) {
        auto edges = io::EdgesTouching(*store, node->key, view);
        if (!edges.ok()) return edges.status();
        for (const auto& e : *edges) {
          ops.push_back(Json{{"op", "del_edge"}, {"src", e.src_key}, {"rel", e.rel_name},
                             {"dst", e.dst_key}});
        }
      }
      size_t edges = ops.size();
      ops.push_back(Json{{"op", "del_node"}, {"key", node->key}});
      return WrittenAt(store, at, ops, args, "delete_memory",
                       Json{{"deleted", node->key}, {"edges_deleted", edges}});
    });
  };
  return t;
}

Tool LinkTool(Store* store) {
  Tool t;
  t.name = "link";
  t.title = "Link two memories";
  t.description =
      "Add or replace the edge src --rel--> dst, e.g. caused_by (effect to cause), supports, "
      "supersedes (new to old), part_of, constrains, decided_for.";
  t.input_schema = ObjectSchema(
      Merge(Json{{"src", NodeArg("Source key or id.")},
                 {"rel", Merge(Str("Relation."), Json{{"minLength", 1}})},
                 {"dst", NodeArg("Target key or id.")},
                 {"weight", {{"type", "number"}, {"description", "Edge weight (default 1)."}}},
                 {"payload", {{"description", "Any JSON."}}}},
            WriteProperties()),
      {"src", "rel", "dst"});
  t.idempotent = true;
  t.handler = [store](const Json& args) {
    std::string src = io::NodeKeyForArg(*store, args["src"].get<std::string>()), dst = io::NodeKeyForArg(*store, args["dst"].get<std::string>());
    Json op{{"op", "edge"}, {"src", src}, {"rel", args["rel"]}, {"dst", dst}};
    for (const char* f : {"weight", "payload"}) {
      if (args.contains(f)) op[f] = args[f];
    }
    return Written(store, {op}, args, "link",
                   Json{{"src", src}, {"rel", args["rel"]}, {"dst", dst}});
  };
  return t;
}

Tool UnlinkTool(Store* store) {
  Tool t;
  t.name = "unlink";
  t.title = "Remove a link";
  t.description =
      "Delete the edge src --rel--> dst (history kept).";
  t.input_schema = ObjectSchema(
      Merge(Json{{"src", NodeArg("Source key or id.")},
                 {"rel", Merge(Str("Relation."), Json{{"minLength", 1}})},
                 {"dst", NodeArg("Target key or id.")}},
            WriteProperties()),
      {"src", "rel", "dst"});
  t.destructive = true;
  t.idempotent = true;
  t.handler = [store](const Json& args) {
    // deleted says whether this call removed the edge: read-modify-write.
    return RetryOnConflict(store, "unlink", [&](uint64_t at) -> Result<ToolResult> {
      ReadView view = ReadView::AtRevision(at);
      std::string src = io::NodeKeyForArg(*store, args["src"].get<std::string>(), view);
      std::string dst = io::NodeKeyForArg(*store, args["dst"].get<std::string>(), view);
      std::string rel = args["rel"];
      Json result{{"src", src}, {"rel", rel}, {"dst", dst}};
      auto edge = store->GetEdge(src, rel, dst, view);
      if (!edge.ok() && !edge.status().IsNotFound()) return ToolErrorFromStatus("unlink", edge.status());
      result["deleted"] = edge.ok();
      if (!edge.ok()) return Unchanged(std::move(result));
      return WrittenAt(store, at,
                       {Json{{"op", "del_edge"}, {"src", src}, {"rel", rel}, {"dst", dst}}}, args,
                       "unlink", std::move(result));
    });
  };
  return t;
}

Tool DefineRelationTool(Store* store) {
  Tool t;
  t.name = "define_relation";
  t.title = "Define a custom relation";
  t.description =
      "Define a custom relation name (a-z, 0-9, _; up to 64) for link.";
  t.input_schema = ObjectSchema(
      Json{{"name", Merge(Str("The relation name, e.g. blocks.", 64), Json{{"minLength", 1}})}},
      {"name"});
  t.idempotent = true;
  t.handler = [store](const Json& args) {
    return Written(store, {Json{{"op", "rel"}, {"name", args["name"]}}}, args, "define_relation",
                   Json{{"name", args["name"]}});
  };
  return t;
}

Tool WriteBatchTool(Store* store) {
  Tool t;
  t.name = "write_batch";
  t.title = "Write many memories at once";
  t.description =
      "Apply many operations in one all-or-nothing transaction, in the `amem ingest` "
      "format: {op: node|edge|kv|del_node|del_edge|del_kv|rel, ...}.";
  t.input_schema = ObjectSchema(
      Merge(Json{{"operations", Merge(ArrayOf(Json{{"type", "object"}}, "The operations, in order."),
                                      Json{{"minItems", 1}, {"maxItems", 10000}})}},
            WriteProperties()),
      {"operations"});
  t.handler = [store](const Json& args) {
    std::vector<Json> ops(args["operations"].begin(), args["operations"].end());
    return Written(store, ops, args, "write_batch", Json{{"operations", ops.size()}});
  };
  return t;
}

void AddGraphTools(ToolRegistry* registry, Store* store) {
  registry->Add(PutMemoryTool(store));
  registry->Add(GetMemoryTool(store));
  registry->Add(DeleteMemoryTool(store));
  registry->Add(LinkTool(store));
  registry->Add(UnlinkTool(store));
  registry->Add(DefineRelationTool(store));
  registry->Add(WriteBatchTool(store));
}

void AddHistoryTools(ToolRegistry* registry, Store* store) {
  Tool t;
  t.name = "changes_since";
  t.title = "What changed since a revision or time";
  t.description =
      "What was written after since_rev or since_ts, oldest first: catch up on other agents' "
      "work.";
  t.input_schema = ObjectSchema(
      Merge(Json{{"since_rev", {{"type", "integer"}, {"minimum", 0},
                                {"description", "After this revision."}}},
                 {"since_ts", {{"type", "integer"},
                               {"description", "After this Unix time."}}},
                 {"as_of", {{"type", "integer"}, {"minimum", 0},
                            {"description", "End at this revision."}}},
                 {"at", {{"type", "integer"},
                         {"description", "End at this Unix time."}}}},
            PageProperties(200, 2000)));
  t.read_only = true;
  t.idempotent = true;
  t.handler = [store](const Json& args) {
    bool by_rev = HasArg(args, "since_rev"), by_ts = HasArg(args, "since_ts");
    if (by_rev == by_ts) {
      return ToolError("invalid arguments for changes_since: give since_rev or since_ts (one of them)");
    }
    auto start = PageStartFromArgs(args);
    if (!start.ok()) return ToolError(start.status().message());
    // The window's end: the cursor's pinned revision, else as_of/at, else the latest.
    auto view = PageViewFromArgs(args, *start);
    if (!view.ok()) return ToolError(view.status().message());
    auto end = store->ResolveRevision(*view);
    if (!end.ok()) return ToolErrorFromStatus("changes_since", end.status());
    auto changes = by_rev ? store->ChangesSinceRevision(static_cast<uint64_t>(ArgInt(args, "since_rev", 0)))
                          : store->ChangesSinceTime(ArgInt(args, "since_ts", 0));
    if (!changes.ok()) return ToolErrorFromStatus("changes_since", changes.status());
    uint64_t pinned = *end;
    std::vector<Json> items;
    for (const auto& c : *changes) {
      if (c.rev <= pinned) items.push_back(ChangeJson(c));
    }
    ToolResult r = PageOf(items, "changes", args, *start, pinned, 200);
    r.structured["revision"] = pinned;
    return r;
  };
  registry->Add(t);

  t = Tool();
  t.name = "store_stats";
  t.title = "Store statistics";
  t.description =
      "Store path, revision and counts: the latest state only (no as_of).";
  t.input_schema = ObjectSchema(Json::object());
  t.read_only = true;
  t.idempotent = true;
  t.handler = [store](const Json&) {
    auto s = StoreStatsJson(*store);
    if (!s.ok()) return ToolErrorFromStatus("store_stats", s.status());
    ToolResult r;
    r.structured = std::move(*s);
    return r;
  };
  registry->Add(t);
}

}  // namespace

void AddMemoryTools(ToolRegistry* registry, ToolContext* ctx) {
  AddKvTools(registry, ctx->store);
  AddGraphTools(registry, ctx->store);
  AddHistoryTools(registry, ctx->store);
}

ToolRegistry BuildRegistry(ToolContext* ctx) {
  ToolRegistry registry;
  AddMemoryTools(&registry, ctx);
  AddCodeTools(&registry, ctx);
  AddQueryTools(&registry, ctx);
  AddViewTool(&registry, ctx);
  AddCompatTools(&registry, ctx);
  return registry;
}

std::string ServerInstructions() {
  // Sent once per session (initialize); kMaxInstructionsBytes bounds it. It also says
  // what the schemas leave out to stay short: as_of/at, run and max_bytes.
  return "amem is this project's shared graph memory, kept with full history. Use it as "
         "you work:\n"
         "- Record decisions (what and why) and constraints with the code they concern: "
         "remember, or put_memory with a canonical key (decision:..., file:src/a.cc, "
         "symbol:...) and links to that code (decided_for, constrains).\n"
         "- Before editing, ask context with the files or symbols you will touch, or your "
         "question; search with hybrid_search, read one memory with get_memory.\n"
         "- Before committing, ask impact with the diff (git diff) to see what depends on "
         "the change, the tests that reach it and the memories about it.\n"
         "- To see the past, give any read as_of (a store revision; every write returns "
         "its revision) or at (a Unix time).\n"
         "- Give writes run (your session id) so others can tell who wrote what; "
         "changes_since shows what others wrote.\n"
         "- Answers stop near " + std::to_string(kDefaultAnswerBytes) +
         " bytes (truncated: true): pass nextCursor back as cursor, or give any tool "
         "max_bytes (up to " + std::to_string(kMaxAnswerBytes) + ").";
}

}  // namespace amem::mcp
