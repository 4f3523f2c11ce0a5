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
namespace {

constexpr const char* kDefaultScope = "project";

// Records as tool output: the CLI's JSON (tools/io/json_records.h), so both interfaces name
// fields alike; a node's vector is replaced by has_vector.
Json NodeJson(const NodeRecord& n) {
  Json j = io::NodeToJson(n);
  j.erase("vector");
  j["has_vector"] = !n.vector.empty();
  return j;
}

Json EdgeJson(const EdgeRecord& e) { return io::EdgeToJson(e); }
Json KvJson(const KvRecord& kv) { return io::KvToJson(kv, /*with_deleted=*/true); }
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

Json SliceProperties(const std::string& field, std::string_view what) {
  Json p = Json::object();
  p[field + "_offset"] = {
      {"type", "integer"},
      {"minimum", 0},
      {"description", "Byte offset in the " + std::string(what) +
                          " to start at (default 0): pass next_" + field +
                          "_offset of the previous call to read on."}};
  p["max_" + field + "_bytes"] = {
      {"type", "integer"},
      {"minimum", 1},
      {"maximum", kMaxTextSliceBytes},
      {"description", "Return at most this many bytes of the " + std::string(what) +
                          " (default " + std::to_string(kDefaultTextSliceBytes) +
                          "); a longer one comes with truncated: true, " + field +
                          "_bytes and next_" + field + "_offset."}};
  return p;
}

// A kv entry in a list: its value cut to kListValueBytes (then truncated: true and
// value_bytes say so; recall by key reads it whole).
Json ListedKvJson(const KvRecord& kv) {
  Json j = KvJson(kv);
  (void)PutTextSlice(&j, "value", kv.value, 0, kListValueBytes, kMaxResultBytes);
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
      {"namespace", Merge(Str("Kind of policy: decisions, constraints or procedures (the "
                              "conventional ones), or any other name.",
                              256),
                          Json{{"minLength", 1}})},
      {"key", Merge(Str("Short stable name of the entry, e.g. \"storage-engine\".", 256),
                    Json{{"minLength", 1}})},
      {"scope", Merge(Str("Project or area the entry applies to (default \"project\").", 256),
                      Json{{"minLength", 1}})}};
}

// Pages `items` (already as JSON) from the cursor's offset.
ToolResult PageOf(const std::vector<Json>& items, const char* field, const Json& args,
                  const PageStart& start, uint64_t revision, int default_limit) {
  BoundedList list(static_cast<size_t>(ArgInt(args, "limit", default_limit)), kMaxResultBytes);
  size_t i = start.offset;
  while (i < items.size() && list.Add(items[i])) ++i;
  ToolResult r;
  r.structured["total"] = items.size();
  r.structured[field] = list.Take();
  if (i < items.size()) r.structured["nextCursor"] = MakeCursor(revision, i);
  return r;
}

void AddKvTools(ToolRegistry* registry, Store* store) {
  Tool t;
  t.name = "remember";
  t.title = "Remember a decision, constraint or procedure";
  t.description =
      "Record policy memory: a decision (what we chose and why), a constraint (a rule that "
      "must hold) or a procedure (how to do something), under namespace/key in a scope. "
      "Writing an existing key replaces its value; every earlier value stays in its history "
      "(recall with history: true). Returns the store revision of the write.";
  t.input_schema = ObjectSchema(
      Merge(Merge(KvProperties(),
                  Json{{"value",
                        {{"type", Json::array({"string", "object", "array"})},
                         {"description",
                          "The text to remember (objects and arrays are stored as JSON)."}}}}),
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
      "Read policy memory. With key: that entry (with history: true, every version oldest "
      "first, deletions included). Without key: every entry of the namespace in the scope. "
      "as_of/at read the memory as it was at an earlier revision or time. A long value "
      "comes in slices (truncated: true, value_bytes, next_value_offset: pass it as "
      "value_offset); in lists values are cut to 2 KiB: recall the key (with as_of for an "
      "old version) to read one whole.";
  t.input_schema = ObjectSchema(
      Merge(Merge(Merge(Merge(KvProperties(),
                              Json{{"history",
                                    {{"type", "boolean"},
                                     {"description", "With key: return every version of the entry."}}}}),
                        AsOfProperties()),
                  PageProperties(100, 1000)),
            SliceProperties("value", "value")),
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
          kMaxResultBytes);
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
      "Delete a policy memory entry (decision, constraint, procedure). Its history is kept "
      "and still readable with recall history: true or as_of.";
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
      Json{{"rel", Str("Relation, e.g. part_of, defines, calls, supports, caused_by.")},
           {"to", Str("Key of the node this memory points to (this --rel--> to).")},
           {"from", Str("Key of the node pointing to this memory (from --rel--> this).")},
           {"weight", {{"type", "number"}, {"description", "Edge weight (default 1)."}}}},
      {"rel"});
}

Tool PutMemoryTool(Store* store) {
  Tool t;
  t.name = "put_memory";
  t.title = "Store a typed memory";
  t.description =
      "Store one memory as a graph node under a canonical key you choose, e.g. "
      "file:src/store/store.cc, symbol:amem::Store::PutNode, module:store, "
      "decision:use-lmdb, fact:lmdb-map-grows. Writing an existing key replaces it (the "
      "old version stays in history). links adds typed edges in the same write: "
      "{rel, to} for this --rel--> to, {rel, from} for from --rel--> this. Directions: "
      "A caused_by B (effect to cause), A supports B (evidence to claim), A supersedes B "
      "(new to old), member part_of whole, file defines symbol, constraint constrains "
      "entity, decision decided_for entity.";
  t.input_schema = ObjectSchema(
      Merge(Json{{"key", Merge(Str("Canonical key, e.g. file:src/a.cc or decision:use-lmdb.", 1024),
                               Json{{"minLength", 1}})},
                 {"type", {{"enum", TypeEnum()}, {"description", "Kind of memory."}}},
                 {"content", Str("The memory itself, in plain text (up to 1 MiB).")},
                 {"meta", {{"type", "object"},
                           {"additionalProperties", {{"type", "string"}}},
                           {"description", "Extra attributes as string values."}}},
                 {"confidence", {{"type", "number"}, {"minimum", 0}, {"maximum", 1},
                                 {"description", "How sure you are, 0..1 (default 1)."}}},
                 {"links", Merge(ArrayOf(LinkItemSchema(), "Edges to add with this memory."),
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
      "Read one memory by key (or 16-hex-digit id): its content, type, meta, confidence, "
      "attribution, and the edges leaving and entering it. as_of/at read an earlier state. "
      "A long content comes in slices of max_content_bytes (default 8192): the node then "
      "has truncated: true, content_bytes (the whole length) and next_content_offset; call "
      "again with content_offset set to it to read on. out_total/in_total count all edges "
      "when fewer are listed.";
  t.input_schema = ObjectSchema(
      Merge(Merge(Json{{"node", NodeArg("Key or 16-hex-digit id of the memory.")},
                       {"edge_limit", {{"type", "integer"}, {"minimum", 0}, {"maximum", 1000},
                                       {"description", "At most this many edges each way (default 50)."}}}},
                  SliceProperties("content", "content")),
            AsOfProperties()),
      {"node"});
  t.read_only = true;
  t.idempotent = true;
  t.handler = [store](const Json& args) {
    auto view = ViewFromArgs(args);
    if (!view.ok()) return ToolError(view.status().message());
    std::string arg = args["node"];
    auto node = store->ResolveNode(arg, *view);
    if (!node.ok()) return ToolErrorFromStatus("get_memory " + arg, node.status());
    // The node takes what its content slice needs, leaving at least kEdgeReserve
    // for the edges; the edges share the rest of the budget.
    constexpr size_t kEdgeReserve = 8 << 10;
    Json node_json = NodeJson(*node);
    Status sliced = PutTextSlice(
        &node_json, "content", node->content, static_cast<size_t>(ArgInt(args, "content_offset", 0)),
        static_cast<size_t>(ArgInt(args, "max_content_bytes", kDefaultTextSliceBytes)),
        kMaxResultBytes - kEdgeReserve);
    if (!sliced.ok()) return ToolErrorFromStatus("get_memory " + arg, sliced);
    size_t edge_budget = kMaxResultBytes - std::min(kMaxResultBytes, ResultCost(node_json));
    ToolResult r;
    r.structured["node"] = std::move(node_json);
    size_t limit = static_cast<size_t>(ArgInt(args, "edge_limit", 50));
    for (bool outgoing : {true, false}) {
      auto edges = outgoing ? store->Out(node->key, {}, *view) : store->In(node->key, {}, *view);
      if (!edges.ok()) return ToolErrorFromStatus("get_memory " + arg, edges.status());
      BoundedList list(limit, edge_budget / 2);
      for (const auto& e : *edges) {
        if (!list.Add(EdgeJson(e))) break;
      }
      r.structured[outgoing ? "out_total" : "in_total"] = edges->size();
      r.structured[outgoing ? "out" : "in"] = list.Take();
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
      "Delete one memory (by key or id) and every edge touching it, or with keep_edges "
      "only the memory (its edges stay, dangling, as the CLI's del-node does by default). "
      "The old versions stay in history and remain readable with as_of.";
  t.input_schema = ObjectSchema(
      Merge(Json{{"node", NodeArg("Key or 16-hex-digit id of the memory.")},
                 {"keep_edges",
                  {{"type", "boolean"},
                   {"description", "Leave the memory's edges in place (default false)."}}}},
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
      "Add or replace the typed edge src --rel--> dst. Built-in relations: caused_by "
      "(effect to cause), supports (evidence to claim), contradicts, supersedes (new to "
      "old), related_to, part_of (member to whole), temporal_next (earlier to later), "
      "defines (file to symbol), references, calls, imports, tests (test to code), "
      "implements, constrains (constraint to entity), decided_for (decision to entity), "
      "derived_from (memory to source). Other relations must be defined first with "
      "define_relation. Endpoints need not exist yet.";
  t.input_schema = ObjectSchema(
      Merge(Json{{"src", NodeArg("Key (or id) of the source node.")},
                 {"rel", Merge(Str("Relation name."), Json{{"minLength", 1}})},
                 {"dst", NodeArg("Key (or id) of the destination node.")},
                 {"weight", {{"type", "number"}, {"description", "Edge weight (default 1)."}}},
                 {"payload", {{"description", "Any JSON attached to the edge."}}}},
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
  t.description = "Delete the edge src --rel--> dst (its history is kept).";
  t.input_schema = ObjectSchema(
      Merge(Json{{"src", NodeArg("Key (or id) of the source node.")},
                 {"rel", Merge(Str("Relation name."), Json{{"minLength", 1}})},
                 {"dst", NodeArg("Key (or id) of the destination node.")}},
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
      "Define a custom relation name (1-64 characters of a-z, 0-9 and _, starting with a "
      "letter) so that link can use it. Defining an existing relation does nothing.";
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
      "Apply many operations in one transaction (all or nothing), in the `amem ingest` "
      "format: {\"op\":\"node\",\"key\",\"type\",\"content\",\"meta\",\"confidence\"}, "
      "{\"op\":\"edge\",\"src\",\"rel\",\"dst\",\"weight\",\"payload\"}, "
      "{\"op\":\"kv\",\"scope\",\"ns\",\"key\",\"value\"}, {\"op\":\"del_node\",\"key\"}, "
      "{\"op\":\"del_edge\",\"src\",\"rel\",\"dst\"}, {\"op\":\"del_kv\",\"scope\",\"ns\",\"key\"}, "
      "{\"op\":\"rel\",\"name\"}. An error names the operation and nothing is written.";
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
      "List what was written after a revision (since_rev) or a Unix time (since_ts), oldest "
      "first: nodes, edges and policy entries put or deleted, with revision, time, run and "
      "task. Use it at the start of a session to catch up on what other agents did. as_of "
      "(a revision) or at (a time) ends the window there: what changed between two states. "
      "The result's revision is the last one the list covers.";
  t.input_schema = ObjectSchema(
      Merge(Json{{"since_rev", {{"type", "integer"}, {"minimum", 0},
                                {"description", "Changes in revisions after this one."}}},
                 {"since_ts", {{"type", "integer"},
                               {"description", "Changes committed after this Unix time."}}},
                 {"as_of", {{"type", "integer"}, {"minimum", 0},
                            {"description", "Only changes up to and including this revision "
                                            "(default: the latest)."}}},
                 {"at", {{"type", "integer"},
                         {"description", "Only changes committed at or before this Unix time. "
                                         "Use as_of or at, not both."}}}},
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
      "Where the memory lives and how big it is: path, current revision, live and deleted "
      "nodes and edges, policy entries, history size, warnings. Always the latest state: "
      "the store keeps these counts for its latest revision only, so there is no as_of "
      "(read_graph, recall and get_memory take as_of for the past).";
  t.input_schema = ObjectSchema(Json::object());
  t.read_only = true;
  t.idempotent = true;
  t.handler = [store](const Json&) {
    auto s = store->Stats();
    if (!s.ok()) return ToolErrorFromStatus("store_stats", s.status());
    ToolResult r;
    r.structured = Json{{"path", store->path()}};
    Json stats = io::StatsToJson(*s);
    for (const auto& [k, v] : stats.items()) r.structured[k] = v;
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
  return "amem is this project's graph memory, shared by every agent working on it and kept "
         "with full history. Record what you learn as you work: put_memory for files, "
         "symbols, modules, facts, decisions and corrections (canonical keys such as "
         "file:src/a.cc), link to connect them with typed edges, remember for decisions, "
         "constraints and procedures. Before changing code, ask: get_memory and "
         "changes_since, and recall constraints. The create_entities/search_nodes family "
         "works like the standard memory server. At the start of a task, call context with "
         "the files or symbols you will touch or your question, and text_search to find "
         "memories by keyword. Every read takes as_of (a revision) or at (a time) to see the "
         "past.";
}

}  // namespace amem::mcp
