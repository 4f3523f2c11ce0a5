// amem view QUERY ARGS... [--format html|dot|mermaid|graphml] [--out FILE], and
// amem view --all (docs/VIEW.md): a query's answer drawn as a graph. Each query is a
// subcommand of `view` made from the query table, as the query commands are
// (tools/cli/query_args.h), so its flags keep their meaning; the answer comes from
// the same runner, and tools/view draws it.
#include <sys/stat.h>

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "common/files.h"
#include "snapshot/reader.h"
#include "store/store.h"
#include "tools/cli/command.h"
#include "tools/cli/query_args.h"
#include "tools/io/query_table.h"
#include "tools/view/view.h"

namespace amem::cli {

namespace {

struct ViewArgs {
  std::vector<std::string> unknown;  // a word that names no query
  std::string format;
  std::string out;
  bool all = false;
  SnapshotArgs snap;  // --all only (a query has its own)
};

void AddViewFlags(CLI::App* cmd, ViewArgs* v) {
  cmd->add_option("--format", v->format,
                  "html (one self-contained page), dot, mermaid or graphml (default: what "
                  "--out's name ends in: .html, .mmd, .graphml; else dot)")
      ->type_name("FORMAT");
  PathArgument(cmd->add_option("--out", v->out,
                               "Write the view to FILE (replaced whole) instead of stdout"))
      ->type_name("FILE");
}

// The query's arguments as given, without --out and --format (the header names
// what was asked, not where it was written).
std::string ShownArgs(const std::vector<std::string>& args) {
  std::string out;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "--out" || a == "--format") {
      ++i;
      continue;
    }
    if (a.rfind("--out=", 0) == 0 || a.rfind("--format=", 0) == 0) continue;
    if (!out.empty()) out += ' ';
    out += a;
  }
  return out;
}

// "revision R, committed T" for the store's view, or "snapshot FILE".
std::string Source(Context& ctx, const SnapshotArgs& snap, const snapshot::Reader& reader) {
  if (!snap.snapshot.empty()) {
    return "snapshot " + std::filesystem::path(snap.snapshot).filename().string() +
           ", newest write " + view::FormatTime(reader.newest_timestamp());
  }
  Result<Store*> store = ctx.OpenStore();
  if (!store.ok()) return "revision " + std::to_string(ctx.query_revision().value_or(0));
  return view::RevisionSource(**store, ctx.query_revision().value_or(0));
}

// Each node's last-write revision, from the store the view was read from (a
// snapshot file holds none).
Status AddRevisions(Context& ctx, const SnapshotArgs& snap, view::Subgraph* g) {
  if (!snap.snapshot.empty() || !ctx.query_revision()) return Status::OK();
  AMEM_ASSIGN_OR_RETURN(store, ctx.OpenStore());
  return view::AddRevisions(*store, *ctx.query_revision(), g);
}

// Where the view goes: FILE checked first (a usage error changes nothing), then
// the format: --format, else what FILE's name implies.
Result<view::Format> ChooseFormat(Context& ctx, const ViewArgs& v) {
  if (!v.out.empty()) {
    namespace fs = std::filesystem;
    std::error_code ec;
    const fs::path out(v.out);
    if (fs::is_directory(out, ec)) {
      return ctx.UsageError("--out " + v.out + ": is a directory; give a file name");
    }
    const fs::path parent = out.has_parent_path() ? out.parent_path() : fs::path(".");
    if (!fs::is_directory(parent, ec)) {
      return ctx.UsageError("--out " + v.out + ": directory " + parent.string() +
                            " does not exist");
    }
    const fs::path store = fs::weakly_canonical(fs::absolute(ctx.store_dir(), ec), ec);
    const fs::path target = fs::weakly_canonical(fs::absolute(out, ec), ec);
    const fs::path rel = target.lexically_relative(store);
    if (!rel.empty() && *rel.begin() != "..") {
      return ctx.UsageError("--out " + v.out + ": is inside the store directory " +
                            store.string() + "; choose a path outside it");
    }
  }
  if (v.format.empty()) return view::DefaultFormat(v.out);
  Result<view::Format> f = view::ParseFormat(v.format);
  if (!f.ok()) return ctx.UsageError("--format: " + f.status().message());
  return f;
}

Status Emit(Context& ctx, const ViewArgs& v, const view::Subgraph& g, view::Format format) {
  AMEM_ASSIGN_OR_RETURN(bytes, view::Write(g, format));
  if (v.out.empty()) {
    ctx.Out() += bytes;
    return Status::OK();
  }
  AtomicFile file;
  AMEM_RETURN_IF_ERROR(file.Open(v.out));
  AMEM_RETURN_IF_ERROR(file.Append(bytes));
  AMEM_RETURN_IF_ERROR(file.Commit(Durability::kCache));
  if (ctx.json()) {
    ctx.SetJsonOutput(Json{{"wrote", v.out},
                           {"format", view::FormatName(format)},
                           {"nodes", g.nodes.size()},
                           {"edges", g.edges.size()}});
  } else {
    ctx.Out() += "wrote " + v.out + " (" + view::FormatName(format) + ", " +
                 std::to_string(g.nodes.size()) + " nodes, " + std::to_string(g.edges.size()) +
                 " edges)\n";
  }
  return Status::OK();
}

Status ViewQuery(Context& ctx, const io::QueryDef& def, const QueryArgs& a, const ViewArgs& v) {
  AMEM_ASSIGN_OR_RETURN(format, ChooseFormat(ctx, v));
  std::shared_ptr<const snapshot::Reader> reader;
  AMEM_ASSIGN_OR_RETURN(answer, AnswerQuery(ctx, def, a, &reader));
  view::Header header{def.command, ShownArgs(ctx.command_args()), Source(ctx, a.snap, *reader)};
  AMEM_ASSIGN_OR_RETURN(g, view::FromAnswer(*reader, answer.doc, std::move(header)));
  AMEM_RETURN_IF_ERROR(AddRevisions(ctx, a.snap, &g));
  return Emit(ctx, v, g, format);
}

Status ViewAll(Context& ctx, const ViewArgs& v, const std::vector<std::string>& extra) {
  if (!extra.empty()) {
    std::string names;
    for (const io::QueryDef& def : io::Queries()) {
      if (def.writes) continue;
      if (!names.empty()) names += ", ";
      names += def.command;
    }
    return ctx.UsageError("unknown query '" + extra.front() + "'; view draws one of " + names +
                          ", or --all");
  }
  if (!v.all) return ctx.UsageError("name a query (e.g. amem view impact NODE) or give --all");
  AMEM_ASSIGN_OR_RETURN(format, ChooseFormat(ctx, v));
  AMEM_ASSIGN_OR_RETURN(reader, OpenSnapshot(ctx, v.snap));
  view::Header header{"", ShownArgs(ctx.command_args()), Source(ctx, v.snap, *reader)};
  AMEM_ASSIGN_OR_RETURN(g, view::WholeGraph(*reader, std::move(header)));
  AMEM_RETURN_IF_ERROR(AddRevisions(ctx, v.snap, &g));
  return Emit(ctx, v, g, format);
}

}  // namespace

void AddViewCommands(CLI::App& app, Context& ctx) {
  if (!ctx.Wants("view")) return;
  CLI::App* view = ctx.AddCommand(
      app, "view",
      "Draw a query's answer, or a whole small store (--all), as a graph: a self-contained "
      "HTML page (opens offline), Graphviz DOT, a Mermaid flowchart or GraphML. The "
      "query's own flags keep their meaning (docs/VIEW.md)",
      "amem view impact fact:lmdb-one-writer --out impact.html\n"
      "amem view path file:a.cc file:b.cc --format mermaid\n"
      "amem view --all --format graphml --out memory.graphml");
  auto top = std::make_shared<ViewArgs>();
  AddViewFlags(view, top.get());
  view->add_flag("--all", top->all,
                 "Draw every node and edge of the store (at most " +
                     std::to_string(view::kMaxAllNodes) + " nodes and " +
                     std::to_string(view::kMaxAllEdges) + " edges)");
  AddSnapshotFlags(view, &top->snap);
  view->add_option("QUERY", top->unknown, "The query to draw (its subcommands below)");
  ctx.SetAction(view, [&ctx, top] { return ViewAll(ctx, *top, top->unknown); });
  for (const io::QueryDef& def : io::Queries()) {
    if (def.writes) continue;  // a view only reads
    auto a = std::make_shared<QueryArgs>();
    auto v = std::make_shared<ViewArgs>();
    CLI::App* cmd = ctx.AddCommand(*view, def.command, "View: " + def.cli_help, def.example);
    // context's --format (text or json) says how to print an answer; here --format
    // is the view's.
    AddQueryParams(cmd, def, a.get(), {"format"});
    AddViewFlags(cmd, v.get());
    ctx.SetAction(cmd, [&ctx, &def, a, v] { return ViewQuery(ctx, def, *a, *v); });
  }
}

}  // namespace amem::cli
