// Snapshot commands: export, import, verify, info, diff (DESIGN.md §4, docs/FORMAT.md).
// The work is done by snapshot/ library functions; this file parses and renders.
#include <memory>
#include <string>

#include "snapshot/diff.h"
#include "snapshot/export.h"
#include "snapshot/info.h"
#include "snapshot/reader.h"
#include "tools/command.h"
#include "tools/query_cli.h"
#include "tools/records.h"

namespace amem::cli {

namespace {

struct ExportArgs {
  std::string out;
  ReadViewFlags view;
};

struct FileArgs {
  std::string a, b;
  bool allow_no_checksum = false;  // verify
};

Status RunExport(Context& ctx, const ExportArgs& args) {
  Result<Store*> store = ctx.OpenStore();
  if (!store.ok()) return store.status();
  snapshot::ExportOptions options;
  options.view = args.view.view();
  Result<snapshot::ExportResult> r = snapshot::ExportSnapshot(**store, args.out, options);
  if (!r.ok()) return r.status();
  if (ctx.json()) {
    ctx.Json(ExportResultToJson(args.out, *r));
  } else {
    ctx.Out() += "exported revision " + std::to_string(r->revision) + " to " + args.out + ": " +
                 std::to_string(r->nodes) + " nodes (" + std::to_string(r->stubs) +
                 " stubs), " + std::to_string(r->edges) + " edges, " +
                 std::to_string(r->kv) + " kv entries, " + std::to_string(r->bytes) +
                 " bytes\n";
  }
  return Status::OK();
}

Status RunImport(Context& ctx, const FileArgs& args) {
  Result<Store*> store = ctx.OpenStore();
  if (!store.ok()) return store.status();
  Result<snapshot::ImportResult> r = snapshot::ImportSnapshot(args.a, *store);
  if (!r.ok()) return r.status();
  if (ctx.json()) {
    Json doc;
    doc["path"] = args.a;
    doc["revision"] = r->revision;
    doc["nodes"] = r->nodes;
    doc["edges"] = r->edges;
    doc["kv"] = r->kv;
    ctx.Json(doc);
  } else {
    ctx.Out() += "imported " + args.a + ": " + std::to_string(r->nodes) + " nodes, " +
                 std::to_string(r->edges) + " edges, " + std::to_string(r->kv) +
                 " kv entries; store now at revision " + std::to_string(r->revision) + "\n";
  }
  return Status::OK();
}

// Exit codes: 0 intact; 1 the structure is valid but the checksum or the content
// frame does not match, or the file has no checksum block (unless
// --allow-no-checksum); 5 the structure or an index is invalid; 6 unreadable.
Status RunVerify(Context& ctx, const FileArgs& args) {
  snapshot::VerifyReport report = snapshot::VerifySnapshotFile(args.a);
  using Outcome = snapshot::VerifyReport::Outcome;
  if (report.outcome == Outcome::kIOError || report.outcome == Outcome::kStructure) {
    return report.status;
  }
  const bool intact = report.outcome == Outcome::kOk;
  const bool unchecked = intact && !report.has_checksum;
  const bool ok = intact && (report.has_checksum || args.allow_no_checksum);
  if (!ok) ctx.set_answer_false();
  if (ctx.json()) {
    Json doc;
    doc["path"] = args.a;
    doc["ok"] = ok;
    doc["structure"] = "ok";
    doc["checksum"] = !intact ? "mismatch" : report.has_checksum ? "ok" : "none";
    if (!intact) doc["error"] = report.status.ToString();
    ctx.Json(doc);
  } else if (!intact) {
    ctx.Out() += args.a + ": structure ok, " + report.status.ToString() + "\n";
  } else if (unchecked) {
    ctx.Out() += args.a +
                 ": structure and indexes ok, NO CHECKSUM: this file carries no checksum "
                 "block, so changed bytes cannot be detected" +
                 (args.allow_no_checksum
                      ? std::string(" (allowed)\n")
                      : std::string("; exit 1 (--allow-no-checksum accepts it)\n"));
  } else {
    ctx.Out() += args.a + ": ok (structure and checksum)\n";
  }
  return Status::OK();
}

Status RunInfo(Context& ctx, const FileArgs& args) {
  Result<snapshot::InfoResult> info = snapshot::SnapshotInfo(args.a);
  if (!info.ok()) return info.status();
  ctx.Out() += ctx.json() ? snapshot::InfoToJson(*info) + "\n" : snapshot::InfoToText(*info);
  return Status::OK();
}

Status RunDiff(Context& ctx, const FileArgs& args) {
  Result<std::unique_ptr<snapshot::Reader>> a = snapshot::Reader::Open(args.a, kCheckedRead);
  if (!a.ok()) return a.status().WithContext(args.a);
  Result<std::unique_ptr<snapshot::Reader>> b = snapshot::Reader::Open(args.b, kCheckedRead);
  if (!b.ok()) return b.status().WithContext(args.b);
  snapshot::DiffResult diff = snapshot::DiffSnapshots(**a, **b);
  // Undecodable content would read as "" and show as changed on every node.
  AMEM_RETURN_IF_ERROR((*a)->ContentStatus().WithContext(args.a));
  AMEM_RETURN_IF_ERROR((*b)->ContentStatus().WithContext(args.b));
  if (!diff.equal()) ctx.set_answer_false();
  ctx.Out() += ctx.json() ? snapshot::DiffToJson(diff) + "\n" : snapshot::DiffToText(diff);
  return Status::OK();
}

}  // namespace

void AddSnapshotCommands(CLI::App& app, Context& ctx) {
  {
    auto a = std::make_shared<ExportArgs>();
    CLI::App* cmd = ctx.AddCommand(
        app, "export",
        "Compile the store (latest, or as of a revision/time) into a read-only .amem "
        "snapshot. Written atomically: a crash leaves the previous file.",
        "amem export run.amem\namem export before.amem --as-of 3");
    cmd->add_option("OUT", a->out, "Snapshot file to write, e.g. run.amem")->required();
    AddReadViewFlags(cmd, &a->view);
    ctx.SetAction(cmd, [&ctx, a] { return RunExport(ctx, *a); });
  }
  {
    auto a = std::make_shared<FileArgs>();
    CLI::App* cmd = ctx.AddCommand(
        app, "import",
        "Load a .amem snapshot into an empty store (export -> import -> export gives "
        "identical bytes).",
        "amem --store /tmp/copy init && amem --store /tmp/copy import run.amem");
    cmd->add_option("FILE", a->a, "Snapshot file to read")->required();
    ctx.SetAction(cmd, [&ctx, a] { return RunImport(ctx, *a); });
  }
  {
    auto a = std::make_shared<FileArgs>();
    CLI::App* cmd = ctx.AddCommand(
        app, "verify",
        "Check a snapshot's structure, indexes and checksum. Exit 0 intact; 1 "
        "structure valid but checksum or content mismatch, or no checksum block; 5 "
        "structure or index invalid; 6 unreadable.",
        "amem verify run.amem");
    cmd->add_option("FILE", a->a, "Snapshot file")->required();
    cmd->add_flag("--allow-no-checksum", a->allow_no_checksum,
                  "Exit 0 for an intact file without a checksum block (e.g. written by a "
                  "seed-spec tool)");
    ctx.SetAction(cmd, [&ctx, a] { return RunVerify(ctx, *a); });
  }
  {
    auto a = std::make_shared<FileArgs>();
    CLI::App* cmd = ctx.AddCommand(
        app, "info", "Describe a snapshot: counts, sizes, flags, dimension, sessions, blocks.",
        "amem info run.amem --json");
    cmd->add_option("FILE", a->a, "Snapshot file")->required();
    ctx.SetAction(cmd, [&ctx, a] { return RunInfo(ctx, *a); });
  }
  {
    auto a = std::make_shared<FileArgs>();
    CLI::App* cmd = ctx.AddCommand(
        app, "diff",
        "Compare two snapshots by key: nodes, edges and kv entries added, removed, "
        "changed. Exit 0 when equal, 1 when different (like diff).",
        "amem diff before.amem after.amem --json");
    cmd->add_option("A", a->a, "Older snapshot")->required();
    cmd->add_option("B", a->b, "Newer snapshot")->required();
    ctx.SetAction(cmd, [&ctx, a] { return RunDiff(ctx, *a); });
  }
}

}  // namespace amem::cli
