// Store commands: init, put-node, get-node, del-node, put-edge, del-edge, def-rel,
// out, in, changes, compact, stats (docs/DESIGN.md §6).
#include <filesystem>
#include <memory>
#include <string>

#include "common/files.h"
#include "common/hash.h"
#include "common/model.h"
#include "snapshot/live.h"
#include "tools/cli/command.h"
#include "tools/io/json_input.h"
#include "tools/io/json_records.h"
#include "tools/io/node_arg.h"

namespace amem::cli {

namespace {

const char* kNodeHelp = "Node key (e.g. file:src/a.cc) or 16-hex-digit node id";

// ---- init ----
struct InitArgs {
  uint32_t dimension = kDefaultDimension;
  CLI::Option* dimension_opt = nullptr;
};

Status RunInit(Context& ctx, const InitArgs& a) {
  bool created = false;
  Result<Store*> store = ctx.OpenStore();
  if (store.ok()) {
    if (a.dimension_opt->count() > 0 && (*store)->dimension() != a.dimension) {
      return Status::InvalidArgument("store at " + ctx.store_dir() +
                                     " already exists with dimension " +
                                     std::to_string((*store)->dimension()));
    }
  } else if (store.status().IsNotFound()) {
    StoreOptions options;
    options.dimension = a.dimension;
    store = ctx.OpenOrCreateStore(options);
    if (!store.ok()) return store.status();
    created = true;
  } else {
    return store.status();
  }
  AMEM_ASSIGN_OR_RETURN(rev, (*store)->revision());
  if (ctx.json()) {
    Json doc;
    doc["store"] = ctx.store_dir();
    doc["created"] = created;
    doc["dimension"] = (*store)->dimension();
    doc["revision"] = rev;
    ctx.SetJsonOutput(doc);
  } else {
    ctx.Out() += std::string(created ? "created" : "already exists:") + " store " +
                 ctx.store_dir() + " (dimension " + std::to_string((*store)->dimension()) +
                 ", revision " + std::to_string(rev) + ")\n";
  }
  return Status::OK();
}

// ---- put-node ----
struct PutNodeArgs {
  std::string key, type, content, meta, vector;
  double confidence = 1.0;
  CLI::Option* meta_opt = nullptr;
  CLI::Option* vector_opt = nullptr;
  WriteFlags write;
};

Status RunPutNode(Context& ctx, const PutNodeArgs& a) {
  NodeInput node;
  node.key = a.key;
  std::optional<NodeType> type = ParseNodeType(a.type);
  if (!type) {
    return Status::InvalidArgument("--type: unknown node type \"" + a.type +
                                   "\" (fact, decision, inference, correction, skill, "
                                   "episode, constraint, file, symbol, module, entity)");
  }
  node.type = *type;
  node.content = a.content;
  if (a.meta_opt->count() > 0) {
    Result<nlohmann::json> meta = io::ParseJson(a.meta, "--meta");
    if (!meta.ok()) return meta.status();
    Result<std::string> text = io::ObjectTextFromJson(*meta, "--meta");
    if (!text.ok()) return text.status();
    node.meta = std::move(text).value();
  }
  Result<float> confidence = io::FiniteFloat(a.confidence, "--confidence");
  if (!confidence.ok()) return confidence.status();
  node.confidence = *confidence;
  if (a.vector_opt->count() > 0) {
    Result<std::vector<float>> floats = io::VectorFromText(a.vector, "--vector");
    if (!floats.ok()) return floats.status();
    node.vector = std::move(floats).value();
  }
  Result<Store*> store = ctx.OpenStore();
  if (!store.ok()) return store.status();
  Result<uint64_t> rev = (*store)->PutNode(node, a.write.options());
  if (!rev.ok()) return SingleWriteError(rev.status());
  Json doc;
  doc["key"] = a.key;
  doc["id"] = FormatHexId(NodeIdForKey(a.key));
  EmitWrite(ctx, doc, "put node " + io::OneLine(a.key) + " (id " + FormatHexId(NodeIdForKey(a.key)) + ")", *rev);
  return Status::OK();
}

// ---- get-node ----
struct NodeArgs {
  std::string node;
  ReadViewFlags view;
  WriteFlags write;
  bool with_edges = false;  // del-node
};

Status RunGetNode(Context& ctx, const NodeArgs& a) {
  Result<Store*> store = ctx.OpenStore();
  if (!store.ok()) return store.status();
  Result<NodeRecord> node = (*store)->ResolveNode(a.node, a.view.view());
  if (!node.ok()) return node.status();
  if (ctx.json()) {
    ctx.SetJsonOutput(io::NodeToJson(*node));
  } else {
    io::AppendNodeText(*node, &ctx.Out());
  }
  return Status::OK();
}

Status RunDelNode(Context& ctx, const NodeArgs& a) {
  Result<Store*> store = ctx.OpenStore();
  if (!store.ok()) return store.status();
  std::string key = io::NodeKeyForArg(**store, a.node);
  size_t edges = 0;
  Result<uint64_t> rev = a.with_edges ? io::DeleteNodeAndEdges(*store, key, a.write.options(), &edges)
                                      : (*store)->DeleteNode(key, a.write.options());
  if (!rev.ok()) return SingleWriteError(rev.status());
  WarnIfTombstonesAccumulated(**store);
  Json doc;
  doc["key"] = key;
  if (a.with_edges) doc["edges_deleted"] = edges;
  EmitWrite(ctx, doc,
            "deleted node " + io::OneLine(key) +
                (a.with_edges ? " and its " + std::to_string(edges) + " edges" : ""),
            *rev);
  return Status::OK();
}

// ---- put-edge / del-edge ----
struct EdgeArgs {
  std::string src, rel, dst, payload;
  double weight = 1.0;
  CLI::Option* payload_opt = nullptr;
  WriteFlags write;
};

Json EdgeDoc(const std::string& src, const std::string& rel, const std::string& dst) {
  Json doc;
  doc["src"] = src;
  doc["rel"] = rel;
  doc["dst"] = dst;
  return doc;
}

Status RunPutEdge(Context& ctx, const EdgeArgs& a) {
  EdgeInput edge;
  Result<float> weight = io::FiniteFloat(a.weight, "--weight");
  if (!weight.ok()) return weight.status();
  edge.weight = *weight;
  if (a.payload_opt->count() > 0) {
    Result<nlohmann::json> payload = io::ParseJson(a.payload, "--payload");
    if (!payload.ok()) return payload.status();
    edge.payload = payload->dump();
  }
  Result<Store*> store = ctx.OpenStore();
  if (!store.ok()) return store.status();
  edge.src = io::NodeKeyForArg(**store, a.src);
  edge.rel = a.rel;
  edge.dst = io::NodeKeyForArg(**store, a.dst);
  Json doc = EdgeDoc(edge.src, edge.rel, edge.dst);
  std::string text = "put edge " + io::OneLine(edge.src) + " --" + edge.rel + "--> " + io::OneLine(edge.dst);
  Result<uint64_t> rev = (*store)->PutEdge(std::move(edge), a.write.options());
  if (!rev.ok()) return SingleWriteError(rev.status());
  EmitWrite(ctx, doc, text, *rev);
  return Status::OK();
}

Status RunDelEdge(Context& ctx, const EdgeArgs& a) {
  Result<Store*> store = ctx.OpenStore();
  if (!store.ok()) return store.status();
  std::string src = io::NodeKeyForArg(**store, a.src);
  std::string dst = io::NodeKeyForArg(**store, a.dst);
  Result<uint64_t> rev = (*store)->DeleteEdge(src, a.rel, dst, a.write.options());
  if (!rev.ok()) return SingleWriteError(rev.status());
  WarnIfTombstonesAccumulated(**store);
  EmitWrite(ctx, EdgeDoc(src, a.rel, dst),
              "deleted edge " + io::OneLine(src) + " --" + a.rel + "--> " + io::OneLine(dst), *rev);
  return Status::OK();
}

// ---- def-rel ----
struct DefRelArgs {
  std::string name;
  WriteFlags write;
};

Status RunDefRel(Context& ctx, const DefRelArgs& a) {
  Result<Store*> store = ctx.OpenStore();
  if (!store.ok()) return store.status();
  Batch batch;
  batch.DefineRelation(a.name);
  Result<uint64_t> rev = (*store)->Apply(batch, a.write.options());
  if (!rev.ok()) return SingleWriteError(rev.status());
  Result<RelationId> id = (*store)->LookupRelation(a.name);
  if (!id.ok()) return id.status();
  Json doc;
  doc["name"] = a.name;
  doc["id"] = *id;
  EmitWrite(ctx, doc, "relation " + a.name + " (id " + std::to_string(*id) + ")", *rev);
  return Status::OK();
}

// ---- out / in ----
struct AdjacencyArgs {
  std::string node, rel;
  ReadViewFlags view;
};

Status RunAdjacency(Context& ctx, const AdjacencyArgs& a, bool outgoing) {
  Result<Store*> store = ctx.OpenStore();
  if (!store.ok()) return store.status();
  ReadView view = a.view.view();
  Result<NodeRecord> node = (*store)->ResolveNode(a.node, view);
  if (!node.ok() && !node.status().IsNotFound()) return node.status();
  // A node that does not exist may still have edges pointing at it (dangling).
  std::string key = node.ok() ? node->key : a.node;
  Result<std::vector<EdgeRecord>> edges =
      outgoing ? (*store)->Out(key, a.rel, view) : (*store)->In(key, a.rel, view);
  if (!edges.ok()) return edges.status();
  if (!node.ok() && edges->empty()) return node.status();
  Json doc;
  doc["node"] = key;
  doc["direction"] = outgoing ? "out" : "in";
  EmitList(ctx, std::move(doc), "edges", *edges, io::EdgeToJson, io::AppendEdgeLine);
  return Status::OK();
}

// ---- changes ----
struct ChangesArgs {
  uint64_t since_rev = 0;
  int64_t since = 0;
  CLI::Option* since_rev_opt = nullptr;
};

Status RunChanges(Context& ctx, const ChangesArgs& a) {
  Result<Store*> store = ctx.OpenStore();
  if (!store.ok()) return store.status();
  bool by_rev = a.since_rev_opt->count() > 0;
  Result<std::vector<Change>> changes = by_rev ? (*store)->ChangesSinceRevision(a.since_rev)
                                               : (*store)->ChangesSinceTime(a.since);
  if (!changes.ok()) return changes.status();
  Json doc;
  if (by_rev) {
    doc["since_rev"] = a.since_rev;
  } else {
    doc["since"] = a.since;
  }
  EmitList(ctx, std::move(doc), "changes", *changes, io::ChangeToJson, io::AppendChangeLine);
  return Status::OK();
}

// ---- compact / stats ----
struct CompactArgs {
  bool dry_run = false;
  uint64_t drop_history_before = 0;
};

Status RunCompact(Context& ctx, const CompactArgs& a) {
  Result<Store*> store = ctx.OpenStore();
  if (!store.ok()) return store.status();
  CompactOptions options;
  options.dry_run = a.dry_run;
  options.drop_history_before = a.drop_history_before;
  Result<CompactReport> report = (*store)->Compact(options);
  if (!report.ok()) return report.status();
  size_t stale = 0;  // temp files that killed writers left in the store directory
  if (!a.dry_run) {
    stale = RemoveStaleTempFiles((*store)->path()) +
            RemoveStaleTempFiles((*store)->path() + "/snapshots");
    // The queries' base is rebuilt at the compacted state, so the next query layers
    // no delta (snapshot/live.h); a store never queried has none to rebuild.
    std::error_code ec;
    if (std::filesystem::exists((*store)->path() + "/current.amem", ec)) {
      Result<snapshot::SnapshotFile> base = snapshot::EnsureSnapshot(**store);
      if (!base.ok()) return base.status().WithContext("rebuild the query snapshot");
      std::filesystem::remove((*store)->path() + "/current.amdl", ec);
    }
  }
  if (ctx.json()) {
    Json doc = io::CompactReportToJson(*report);
    if (stale > 0) doc["stale_temp_files_removed"] = stale;
    ctx.SetJsonOutput(doc);
  } else {
    io::AppendCompactReportText(*report, &ctx.Out());
    if (stale > 0) {
      ctx.Out() += "removed " + std::to_string(stale) + " stale temp file" +
                   (stale == 1 ? "" : "s") + " left by killed writers\n";
    }
  }
  return Status::OK();
}

Status RunStats(Context& ctx) {
  Result<Store*> store = ctx.OpenStore();
  if (!store.ok()) return store.status();
  Result<StoreStats> stats = (*store)->Stats();
  if (!stats.ok()) return stats.status();
  if (ctx.json()) {
    Json doc;
    doc["store"] = ctx.store_dir();
    doc.update(io::StatsToJson(*stats));
    ctx.SetJsonOutput(doc);
  } else {
    ctx.Out() += "Store: " + ctx.store_dir() + "\n";
    io::AppendStatsText(*stats, &ctx.Out());
  }
  return Status::OK();
}

}  // namespace

void AddStoreCommands(CLI::App& app, Context& ctx) {
  {
    auto a = std::make_shared<InitArgs>();
    CLI::App* cmd = ctx.AddCommand(
        app, "init", "Create the store directory (nothing happens if it exists).",
        "amem --store ./.amem init --dimension 128");
    a->dimension_opt =
        cmd->add_option("--dimension", a->dimension,
                        "Length of node vectors, 1-4096 (default 128); fixed at creation")
            ->check(CLI::Range(1u, kMaxDimension));
    ctx.SetAction(cmd, [&ctx, a] { return RunInit(ctx, *a); });
  }
  {
    auto a = std::make_shared<PutNodeArgs>();
    CLI::App* cmd = ctx.AddCommand(
        app, "put-node", "Create or update (append a new version of) a node.",
        "amem put-node file:src/store/store.cc --type file --content 'LMDB store' \\\n"
        "      --meta '{\"lang\":\"c++\"}' --confidence 0.9 --scope amem --ts 1700000000");
    cmd->add_option("KEY", a->key, "Canonical node key, e.g. file:src/a.cc, decision:use-lmdb")
        ->required();
    cmd->add_option("--type", a->type,
                    "fact, decision, inference, correction, skill (procedure), episode, "
                    "constraint, file, symbol, module or entity")
        ->required();
    cmd->add_option("--content", a->content, "UTF-8 text, at most 1 MiB");
    a->meta_opt = cmd->add_option("--meta", a->meta,
                                  "Flat JSON object of string values, e.g. '{\"lang\":\"c++\"}'");
    cmd->add_option("--confidence", a->confidence, "Finite number in 0..1 (default 1)");
    a->vector_opt = cmd->add_option(
        "--vector", a->vector, "JSON array of exactly <dimension> finite numbers");
    AddWriteFlags(cmd, &a->write, /*with_scope=*/true);
    ctx.SetAction(cmd, [&ctx, a] { return RunPutNode(ctx, *a); });
  }
  {
    auto a = std::make_shared<NodeArgs>();
    CLI::App* cmd = ctx.AddCommand(app, "get-node", "Print a node (latest or as of a past state).",
                                   "amem get-node fact:build-uses-make --as-of 3");
    cmd->add_option("NODE", a->node, kNodeHelp)->required();
    AddReadViewFlags(cmd, &a->view);
    ctx.SetAction(cmd, [&ctx, a] { return RunGetNode(ctx, *a); });
  }
  {
    auto a = std::make_shared<NodeArgs>();
    CLI::App* cmd = ctx.AddCommand(
        app, "del-node",
        "Delete a node (a tombstone version; history is kept). Its edges stay, and count as "
        "dangling, unless --with-edges (as MCP delete_memory does by default).",
        "amem del-node file:src/old.cc --ts 1700000500\namem del-node file:src/old.cc --with-edges");
    cmd->add_option("NODE", a->node, kNodeHelp)->required();
    cmd->add_flag("--with-edges", a->with_edges,
                  "Also delete every live edge touching the node, in the same revision");
    AddWriteFlags(cmd, &a->write, /*with_scope=*/false);
    ctx.SetAction(cmd, [&ctx, a] { return RunDelNode(ctx, *a); });
  }
  {
    auto a = std::make_shared<EdgeArgs>();
    CLI::App* cmd = ctx.AddCommand(
        app, "put-edge", "Create or update the edge SRC -REL-> DST (endpoints may not exist yet).",
        "amem put-edge file:src/store/store.cc defines symbol:amem::Store --weight 1");
    cmd->add_option("SRC", a->src, kNodeHelp)->required();
    cmd->add_option("REL", a->rel,
                    "Built-in relation (caused_by, supports, contradicts, supersedes, "
                    "related_to, part_of, temporal_next, defines, references, calls, "
                    "imports, tests, implements, constrains, decided_for, derived_from) "
                    "or one defined with def-rel")
        ->required();
    cmd->add_option("DST", a->dst, kNodeHelp)->required();
    cmd->add_option("--weight", a->weight, "Finite number (default 1)");
    a->payload_opt = cmd->add_option("--payload", a->payload, "Any JSON value, at most 64 KiB");
    AddWriteFlags(cmd, &a->write, /*with_scope=*/false);
    ctx.SetAction(cmd, [&ctx, a] { return RunPutEdge(ctx, *a); });
  }
  {
    auto a = std::make_shared<EdgeArgs>();
    CLI::App* cmd = ctx.AddCommand(app, "del-edge", "Delete the edge SRC -REL-> DST.",
                                   "amem del-edge module:cli imports module:store");
    cmd->add_option("SRC", a->src, kNodeHelp)->required();
    cmd->add_option("REL", a->rel, "Relation name")->required();
    cmd->add_option("DST", a->dst, kNodeHelp)->required();
    AddWriteFlags(cmd, &a->write, /*with_scope=*/false);
    ctx.SetAction(cmd, [&ctx, a] { return RunDelEdge(ctx, *a); });
  }
  {
    auto a = std::make_shared<DefRelArgs>();
    CLI::App* cmd = ctx.AddCommand(
        app, "def-rel", "Define a custom relation (ids from 64); edges may only use known ones.",
        "amem def-rel blocks");
    cmd->add_option("NAME", a->name, "1-64 characters of [a-z0-9_], starting with a letter")
        ->required();
    AddWriteFlags(cmd, &a->write, /*with_scope=*/false);
    ctx.SetAction(cmd, [&ctx, a] { return RunDefRel(ctx, *a); });
  }
  for (bool outgoing : {true, false}) {
    auto a = std::make_shared<AdjacencyArgs>();
    CLI::App* cmd = ctx.AddCommand(
        app, outgoing ? "out" : "in",
        outgoing ? "List the live edges leaving a node, by (relation, target)."
                 : "List the live edges entering a node, by (relation, source).",
        outgoing ? "amem out file:src/store/store.cc --rel defines"
                 : "amem in module:store --rel imports --as-of 2");
    cmd->add_option("NODE", a->node, kNodeHelp)->required();
    cmd->add_option("--rel", a->rel, "Only this relation");
    AddReadViewFlags(cmd, &a->view);
    ctx.SetAction(cmd, [&ctx, a, outgoing] { return RunAdjacency(ctx, *a, outgoing); });
  }
  {
    auto a = std::make_shared<ChangesArgs>();
    CLI::App* cmd = ctx.AddCommand(
        app, "changes", "List what changed after a revision or a time (diff_since), in order.",
        "amem changes --since-rev 1\n  amem changes --since 1700000000");
    CLI::Option_group* since = cmd->add_option_group("since", "exactly one of");
    a->since_rev_opt =
        since->add_option("--since-rev", a->since_rev, "Changes in revisions after REV")
            ->type_name("REV");
    since->add_option("--since", a->since, "Changes committed after Unix time TS")
        ->type_name("TS");
    since->require_option(1);
    ctx.SetAction(cmd, [&ctx, a] { return RunChanges(ctx, *a); });
  }
  {
    auto a = std::make_shared<CompactArgs>();
    CLI::App* cmd = ctx.AddCommand(
        app, "compact", "Rewrite adjacency lists without dead entries; optionally drop history.",
        "amem compact --dry-run\n  amem compact --drop-history-before 100");
    cmd->add_flag("--dry-run", a->dry_run, "Report what would be done; write nothing");
    cmd->add_option("--drop-history-before", a->drop_history_before,
                    "Drop versions older than revision REV; as-of reads before it then fail")
        ->type_name("REV");
    ctx.SetAction(cmd, [&ctx, a] { return RunCompact(ctx, *a); });
  }
  {
    CLI::App* cmd = ctx.AddCommand(
        app, "stats", "Print store statistics and compaction warnings (like mdb_stat).",
        "amem stats --json");
    ctx.SetAction(cmd, [&ctx] { return RunStats(ctx); });
  }
}

}  // namespace amem::cli
