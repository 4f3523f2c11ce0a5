// Snapshot commands: export, import, verify, info, diff (docs/DESIGN.md §4, docs/FORMAT.md).
// The work is done by snapshot/ library functions; this file parses and renders.
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "snapshot/agentic_import.h"
#include "snapshot/agentic_memory.h"
#include "snapshot/diff.h"
#include "snapshot/export.h"
#include "snapshot/info.h"
#include "snapshot/reader.h"
#include "tools/cli/command.h"
#include "tools/cli/query_args.h"
#include "tools/cli/replication.h"
#include "tools/io/json_records.h"

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

struct ImportArgs {
  std::string path;
  std::string from = "auto";  // auto | amem | agentic-memory
  std::string name;           // AgenticMemory files: the key prefix's name
  uint64_t revision = 0;      // amem files: the store's revision after it (0: 1)
  int64_t revision_ts = 0;    // and its commit time (0: the file's newest)
};

namespace agentic = snapshot::agentic;

// Which reader a file goes to. A header that claims the AgenticMemory layout but
// whose offsets disagree is still amem's if amem's reader opens it; otherwise the
// AgenticMemory reader's error says what is damaged.
enum class Format { kAmem, kAgenticMemory };

Result<Format> DetectFormat(const std::string& path) {
  Result<std::string> head = agentic::ReadFilePrefix(path, agentic::kHeaderLength);
  if (!head.ok()) return head.status();
  switch (agentic::MatchHeader(*head)) {
    case agentic::HeaderMatch::kYes:
      return Format::kAgenticMemory;
    case agentic::HeaderMatch::kClaimed:
      return snapshot::Reader::Open(path).ok() ? Format::kAmem : Format::kAgenticMemory;
    case agentic::HeaderMatch::kNo:
      break;
  }
  return Format::kAmem;
}

Result<agentic::File> ReadAgenticFile(const std::string& path) {
  Result<std::string> bytes = agentic::ReadWholeFile(path);
  if (!bytes.ok()) return bytes.status();
  Result<agentic::File> file = agentic::Parse(*bytes);
  if (!file.ok()) return file.status().WithContext(path);
  return file;
}

Json AgenticImportJson(const std::string& path, const agentic::File& f,
                       const agentic::ImportResult& r) {
  return Json{{"path", path},
              {"format", "agentic-memory"},
              {"version", f.version},
              {"prefix", r.prefix},
              {"nodes", r.nodes},
              {"nodes_written", r.nodes_written},
              {"edges", r.edges},
              {"edges_written", r.edges_written},
              {"merged_edges", r.merged_edges},
              {"sessions", r.sessions},
              {"vectors", r.vectors},
              {"revision", r.revision}};
}

std::string AgenticImportText(const std::string& path, const agentic::File& f,
                              const agentic::ImportResult& r) {
  std::string merged;
  if (r.merged_edges) {
    merged = " (" + std::to_string(r.merged_edges) + " parallel edges of one type merged)";
  }
  return "imported " + path + " (AgenticMemory, format version " + std::to_string(f.version) +
         ") as " + r.prefix + ": " + std::to_string(r.nodes) + " nodes (" +
         std::to_string(r.nodes_written) + " written), " + std::to_string(r.edges) +
         " edges (" + std::to_string(r.edges_written) + " written)" + merged + ", " +
         std::to_string(r.sessions) + " sessions, " + std::to_string(r.vectors) +
         " vectors; store at revision " + std::to_string(r.revision) + "\n";
}

Status ImportAgenticFile(Context& ctx, Store* store, const std::string& path,
                         const std::string& name, Json* json) {
  Result<agentic::File> file = ReadAgenticFile(path);
  if (!file.ok()) return file.status();
  Result<agentic::ImportResult> r = agentic::Import(*file, name, store);
  if (!r.ok()) return r.status().WithContext(path);
  if (json) *json = AgenticImportJson(path, *file, *r);
  else ctx.Out() += AgenticImportText(path, *file, *r);
  return Status::OK();
}

Status ImportAmemFile(Context& ctx, Store* store, const ImportArgs& args) {
  const std::string& path = args.path;
  snapshot::ImportOptions options;
  if (args.revision > 0) options.revision = args.revision;
  if (args.revision_ts != 0) options.revision_ts = args.revision_ts;
  Result<snapshot::ImportResult> r = snapshot::ImportSnapshot(path, store, options);
  if (!r.ok()) return r.status();
  if (ctx.json()) {
    Json doc;
    doc["path"] = path;
    doc["revision"] = r->revision;
    doc["nodes"] = r->nodes;
    doc["edges"] = r->edges;
    doc["kv"] = r->kv;
    ctx.SetJsonOutput(doc);
  } else {
    ctx.Out() += "imported " + path + ": " + std::to_string(r->nodes) + " nodes, " +
                 std::to_string(r->edges) + " edges, " + std::to_string(r->kv) +
                 " kv entries; store now at revision " + std::to_string(r->revision) +
                 " (its history starts there)\n";
  }
  return Status::OK();
}

// A directory: every regular file in it (not recursive, in name order) that is an
// AgenticMemory file is imported, each in its own transaction under its stem. All
// of them are read and checked first, so a damaged one writes nothing at all.
Status ImportDirectory(Context& ctx, Store* store, const ImportArgs& args) {
  namespace fs = std::filesystem;
  std::error_code ec;
  std::vector<std::string> files;
  for (const fs::directory_entry& e : fs::directory_iterator(args.path, ec)) {
    if (e.is_regular_file(ec)) files.push_back(e.path().string());
  }
  if (ec) return Status::IOError(args.path + ": " + ec.message());
  std::sort(files.begin(), files.end());
  struct Skip {
    std::string path, reason;
  };
  std::vector<std::string> todo;
  std::vector<Skip> skipped;
  std::vector<std::string> names;
  for (const std::string& f : files) {
    Result<Format> format = DetectFormat(f);
    if (!format.ok()) return format.status();
    if (*format == Format::kAmem) {
      Result<std::string> head = agentic::ReadFilePrefix(f, 4);
      const bool amem = head.ok() && *head == "AMEM";
      skipped.push_back({f, amem ? "an amem snapshot (import it on its own into an empty store)"
                                 : "not a snapshot"});
      continue;
    }
    Result<agentic::File> file = ReadAgenticFile(f);
    if (!file.ok()) return file.status();
    const std::string name = agentic::DefaultImportName(f);
    if (Status s = agentic::ValidateImportName(name); !s.ok()) return s.WithContext(f);
    if (std::find(names.begin(), names.end(), name) != names.end()) {
      return Status::InvalidArgument(f + ": another file of the directory has the stem \"" +
                                     name + "\"; import them one at a time with --name");
    }
    AMEM_RETURN_IF_ERROR(agentic::CheckDimension(*file, store->dimension()).WithContext(f));
    names.push_back(name);
    todo.push_back(f);
  }
  Json imported = Json::array();
  for (size_t i = 0; i < todo.size(); ++i) {
    Json doc;
    AMEM_RETURN_IF_ERROR(
        ImportAgenticFile(ctx, store, todo[i], names[i], ctx.json() ? &doc : nullptr));
    if (ctx.json()) imported.push_back(doc);
  }
  AMEM_ASSIGN_OR_RETURN(revision, store->revision());
  if (ctx.json()) {
    Json skips = Json::array();
    for (const Skip& s : skipped) skips.push_back({{"path", s.path}, {"reason", s.reason}});
    ctx.SetJsonOutput(Json{{"directory", args.path},
                  {"imported", imported},
                  {"skipped", skips},
                  {"revision", revision}});
  } else {
    for (const Skip& s : skipped) ctx.Out() += "skipped " + s.path + ": " + s.reason + "\n";
    if (todo.empty()) ctx.Out() += "no AgenticMemory files in " + args.path + "\n";
  }
  return Status::OK();
}

Status RunExport(Context& ctx, const ExportArgs& args) {
  Result<Store*> store = ctx.OpenStore();
  if (!store.ok()) return store.status();
  snapshot::ExportOptions options;
  options.view = args.view.view();
  Result<snapshot::ExportResult> r = snapshot::ExportSnapshot(**store, args.out, options);
  if (!r.ok()) return r.status();
  if (ctx.json()) {
    ctx.SetJsonOutput(io::ExportResultToJson(args.out, *r));
  } else {
    ctx.Out() += "exported revision " + std::to_string(r->revision) + " to " + args.out + ": " +
                 std::to_string(r->nodes) + " nodes (" + std::to_string(r->stubs) +
                 " stubs), " + std::to_string(r->edges) + " edges, " +
                 std::to_string(r->kv) + " kv entries, " + std::to_string(r->bytes) +
                 " bytes\n";
  }
  return Status::OK();
}

Status RunImport(Context& ctx, const ImportArgs& args) {
  std::error_code ec;
  const bool dir = std::filesystem::is_directory(args.path, ec);
  if (dir && args.from == "amem") {
    return ctx.UsageError("a directory import reads AgenticMemory files; "
                          "import amem snapshots one at a time");
  }
  if (dir && !args.name.empty()) {
    return ctx.UsageError("--name names one file; a directory import names each file "
                          "by its stem");
  }
  if (!args.name.empty()) AMEM_RETURN_IF_ERROR(agentic::ValidateImportName(args.name));
  Format format = args.from == "amem" ? Format::kAmem : Format::kAgenticMemory;
  if (!dir && args.from == "auto") {
    Result<Format> detected = DetectFormat(args.path);
    if (!detected.ok()) return detected.status();
    format = *detected;
  }
  if (format != Format::kAmem && (args.revision > 0 || args.revision_ts != 0)) {
    return ctx.UsageError("--revision and --revision-ts apply to amem snapshots");
  }
  if (format == Format::kAmem && !args.name.empty()) {
    return ctx.UsageError("--name applies to AgenticMemory files; " + args.path +
                          " is read as an amem snapshot");
  }
  Result<Store*> store = ctx.OpenStore();
  if (!store.ok()) return store.status();
  if (dir) return ImportDirectory(ctx, *store, args);
  if (format == Format::kAmem) {
    // The import is no write of the stream's (it would not be in it): a replica
    // starts from a snapshot with `amem clone`.
    if (std::filesystem::exists(std::filesystem::path(ctx.store_dir()) / kRemoteFile, ec)) {
      return Status::InvalidArgument(
          "the store is bound to a stream: an imported snapshot would not be in it (amem "
          "clone starts a replica from the stream's snapshot; amem remote remove unbinds)");
    }
    return ImportAmemFile(ctx, *store, args);
  }
  const std::string name =
      args.name.empty() ? agentic::DefaultImportName(args.path) : args.name;
  if (Status s = agentic::ValidateImportName(name); !s.ok()) {
    return Status::InvalidArgument(s.message() + " (the file's stem; choose one with --name)");
  }
  Json doc;
  AMEM_RETURN_IF_ERROR(
      ImportAgenticFile(ctx, *store, args.path, name, ctx.json() ? &doc : nullptr));
  if (ctx.json()) ctx.SetJsonOutput(doc);
  return Status::OK();
}

// Exit codes: 0 intact; 1 the structure is valid but the checksum or the content
// frame does not match, or the file has no checksum block (unless
// --allow-no-checksum); 5 the structure or an index is invalid; 6 unreadable.
// An AgenticMemory file has no checksum: 0 when all of it parses, else 5.
Status RunVerify(Context& ctx, const FileArgs& args) {
  Result<Format> format = DetectFormat(args.a);
  if (!format.ok()) return format.status();
  if (*format == Format::kAgenticMemory) {
    Result<agentic::File> file = ReadAgenticFile(args.a);
    if (!file.ok()) return file.status();
    if (ctx.json()) {
      ctx.SetJsonOutput(Json{{"path", args.a},
                    {"ok", true},
                    {"format", "agentic-memory"},
                    {"version", file->version},
                    {"structure", "ok"},
                    {"checksum", "none"},
                    {"import", "amem import " + args.a}});
    } else {
      ctx.Out() += args.a + ": an AgenticMemory file (format version " +
                   std::to_string(file->version) + ", " + std::to_string(file->nodes.size()) +
                   " nodes, " + std::to_string(file->edges.size()) +
                   " edges), not an amem snapshot: structure ok, no checksum in this "
                   "layout; import it with `amem import " + args.a + "`\n";
    }
    return Status::OK();
  }
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
    ctx.SetJsonOutput(doc);
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
  Result<Format> format = DetectFormat(args.a);
  if (!format.ok()) return format.status();
  if (*format == Format::kAgenticMemory) {
    Result<agentic::File> file = ReadAgenticFile(args.a);
    if (!file.ok()) return file.status();
    ctx.Out() += ctx.json() ? agentic::InfoToJson(*file, args.a) + "\n"
                            : agentic::InfoToText(*file, args.a);
    return Status::OK();
  }
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
    PathArgument(cmd->add_option("OUT", a->out, "Snapshot file to write, e.g. run.amem"))
        ->required();
    AddReadViewFlags(cmd, &a->view);
    ctx.SetAction(cmd, [&ctx, a] { return RunExport(ctx, *a); });
  }
  {
    auto a = std::make_shared<ImportArgs>();
    CLI::App* cmd = ctx.AddCommand(
        app, "import",
        "Load a .amem snapshot into an empty store (export -> import -> export gives "
        "identical bytes) as one revision, --revision (default 1): the store's history "
        "starts there, and --as-of reads before it are refused. Or import files written "
        "by AgenticMemory's own tool (a file, or every such file of a directory) as "
        "agentic:<name>/<id> nodes in one transaction per file; importing one twice writes "
        "nothing (docs/AGENTIC_MEMORY.md).",
        "amem --store /tmp/copy init && amem --store /tmp/copy import run.amem\n"
        "amem import ~/agentic/project.amem\namem import ~/agentic/");
    PathArgument(cmd->add_option("FILE", a->path,
                                 "Snapshot file, or a directory of AgenticMemory files"))
        ->required();
    cmd->add_option("--from", a->from, "File layout: auto (by its header), amem, agentic-memory")
        ->check(CLI::IsMember({"auto", "amem", "agentic-memory"}));
    cmd->add_option("--name", a->name,
                    "AgenticMemory file: keys are agentic:NAME/<id> (default: the file's stem)");
    cmd->add_option("--revision", a->revision,
                    "amem snapshot: the revision it was exported at, the store's after the "
                    "import (default 1)")
        ->type_name("REV")
        ->check(CLI::PositiveNumber);
    cmd->add_option("--revision-ts", a->revision_ts,
                    "amem snapshot: that revision's commit time, Unix seconds (default: the "
                    "file's newest timestamp)")
        ->type_name("TS");
    ctx.SetAction(cmd, [&ctx, a] { return RunImport(ctx, *a); });
  }
  {
    auto a = std::make_shared<FileArgs>();
    CLI::App* cmd = ctx.AddCommand(
        app, "verify",
        "Check a snapshot's structure, indexes and checksum. Exit 0 intact; 1 "
        "structure valid but checksum or content mismatch, or no checksum block; 5 "
        "structure or index invalid; 6 unreadable. A file written by AgenticMemory's "
        "own tool is checked as a whole (it has no checksum).",
        "amem verify run.amem");
    PathArgument(cmd->add_option("FILE", a->a, "Snapshot file"))->required();
    cmd->add_flag("--allow-no-checksum", a->allow_no_checksum,
                  "Exit 0 for an intact file without a checksum block (e.g. written by a "
                  "seed-spec tool)");
    ctx.SetAction(cmd, [&ctx, a] { return RunVerify(ctx, *a); });
  }
  {
    auto a = std::make_shared<FileArgs>();
    CLI::App* cmd = ctx.AddCommand(
        app, "info",
        "Describe a snapshot (or a file written by AgenticMemory's own tool): counts, "
        "sizes, flags, dimension, sessions, blocks.",
        "amem info run.amem --json");
    PathArgument(cmd->add_option("FILE", a->a, "Snapshot file"))->required();
    ctx.SetAction(cmd, [&ctx, a] { return RunInfo(ctx, *a); });
  }
  {
    auto a = std::make_shared<FileArgs>();
    CLI::App* cmd = ctx.AddCommand(
        app, "diff",
        "Compare two snapshots by key: nodes, edges and kv entries added, removed, "
        "changed. Exit 0 when equal, 1 when different (like diff).",
        "amem diff before.amem after.amem --json");
    PathArgument(cmd->add_option("A", a->a, "Older snapshot"))->required();
    PathArgument(cmd->add_option("B", a->b, "Newer snapshot"))->required();
    ctx.SetAction(cmd, [&ctx, a] { return RunDiff(ctx, *a); });
  }
}

}  // namespace amem::cli
