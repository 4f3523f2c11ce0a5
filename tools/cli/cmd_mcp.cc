#include "tools/cli/cmd_mcp.h"

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <system_error>

#include <unistd.h>

#include "common/huge_pages.h"
#include "common/progress.h"
#include "tools/cli/query_args.h"
#include "tools/mcp/compat.h"
#include "tools/mcp/profiles.h"
#include "tools/mcp/resources.h"
#include "tools/mcp/server.h"
#include "tools/mcp/memory_tools.h"

namespace amem::mcp {

Result<std::string> ResolveStoreDir(const std::string& explicit_dir, const std::string& cwd) {
  if (!explicit_dir.empty()) return explicit_dir;
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::path dir = fs::weakly_canonical(fs::path(cwd), ec);
  if (ec) dir = fs::path(cwd);
  for (;;) {
    // .git is a directory in a clone and a file in a worktree or submodule.
    if (fs::exists(dir / ".git", ec)) return (dir / ".amem").string();
    if (!dir.has_parent_path() || dir.parent_path() == dir) break;
    dir = dir.parent_path();
  }
  return Status::NotFound(
      "no store: " + cwd +
      " is not inside a git work tree; pass --store DIR or set AMEM_STORE (amem never "
      "falls back to a global store)");
}

}  // namespace amem::mcp

namespace amem::cli {
namespace {

// --store or AMEM_STORE when the user gave one, else empty (the CLI's own default,
// ./.amem, is not used by the MCP commands).
std::string ExplicitStore(const CLI::App& root, const Context& ctx) {
  const CLI::Option* opt = root.get_option_no_throw("--store");
  if ((opt != nullptr && opt->count() > 0) || std::getenv("AMEM_STORE") != nullptr) {
    return ctx.store_dir();
  }
  return {};
}

Result<std::unique_ptr<Store>> OpenMcpStore(const CLI::App& root, const Context& ctx) {
  std::error_code ec;
  std::string cwd = std::filesystem::current_path(ec).string();
  if (ec) return Status::IOError("cannot read the current directory: " + ec.message());
  auto dir = mcp::ResolveStoreDir(ExplicitStore(root, ctx), cwd);
  if (!dir.ok()) return dir.status();
  StoreOptions options;
  options.read_only = ctx.read_only();  // and then never creates the store
  options.read_only_if_needed = true;  // a read-only file system: reads still work
  Result<std::unique_ptr<Store>> store = Store::Open(*dir, options);
  if (!store.ok()) return store;
  // A store bound to a stream publishes every write to it first (replication.h).
  AMEM_RETURN_IF_ERROR(InstallReplication(*dir, store->get()));
  return store;
}

// --tools, else AMEM_MCP_TOOLS, else empty (the default profile).
std::string ToolSpec(const std::string& flag) {
  if (!flag.empty()) return flag;
  const char* env = std::getenv(std::string(mcp::kToolsEnv).c_str());
  return env != nullptr ? env : "";
}

Status RunMcp(const CLI::App& root, Context& ctx, const std::string& export_dir,
              const std::string& tools) {
  auto live_options = snapshot::LiveOptionsFromEnv();
  if (!live_options.ok()) return ctx.UsageError(live_options.status().message());
  const std::string spec = ToolSpec(tools);
  {
    // The selection is checked before anything is opened: a typo fails at start.
    mcp::ToolContext probe{nullptr};
    mcp::ToolRegistry all = mcp::BuildRegistry(&probe);
    Status s = mcp::ApplyToolSpec(&all, spec);
    if (!s.ok()) {
      return ctx.UsageError((tools.empty() && !spec.empty() ? std::string(mcp::kToolsEnv)
                                                            : std::string("--tools")) +
                            ": " + s.message());
    }
  }
  auto store = OpenMcpStore(root, ctx);
  if (!store.ok()) return store.status();
  std::error_code ec;
  std::filesystem::path exports = export_dir.empty() ? std::filesystem::current_path(ec)
                                                     : std::filesystem::path(export_dir);
  exports = std::filesystem::canonical(exports, ec);
  if (ec || !std::filesystem::is_directory(exports, ec)) {
    return Status::InvalidArgument("--export-dir " + export_dir +
                                   ": not an existing directory");
  }
  std::fprintf(stderr, "amem mcp: serving the store at %s on stdio\n", (*store)->path().c_str());
  // Clients often attach stderr to a terminal or a log; a redrawn line is noise there.
  EnableProgressOnTerminal(false);
  mcp::ToolContext tool_ctx{store->get()};
  tool_ctx.export_dir = exports.string();
  tool_ctx.query_log = ctx.query_log();
  tool_ctx.live_options = *live_options;
  tool_ctx.live_options.write_delta_file = false;  // the server keeps its view in memory
  // A base is mapped lazily, as a CLI query maps it, so that no call waits for a
  // whole check: the server's start and each background merge check its records
  // whole on a thread of their own (LiveOptions::warm_base, StartLiveBaseWork), and
  // the calls meanwhile check what they read.
  tool_ctx.live_options.check_records = false;
  // A merge past the delta's bound runs on a thread; the calls meanwhile answer
  // from the views kept (snapshot/live.h). Exit waits for one that runs.
  tool_ctx.live_options.background_merge = true;
  // Level 0 of the views kept is compiled again on a thread too, so that no call
  // compiles every record since the base.
  tool_ctx.live_options.background_fold = true;
  mcp::ToolRegistry registry = mcp::BuildRegistry(&tool_ctx);
  AMEM_RETURN_IF_ERROR(mcp::ApplyToolSpec(&registry, spec));
  // Each base's first-use work off the calls' path: the base found now, on a
  // thread begun here, and each background merge's, on its thread.
  mcp::StartLiveBaseWork(&tool_ctx);
  // The instructions name context, impact and put_memory: a selection without them
  // (the memory profile, as the official server) gets none.
  const bool guided = registry.Find("context") != nullptr && registry.Find("impact") != nullptr;
  mcp::Server server(&registry, guided ? mcp::ServerInstructions() : std::string());
  // Each call after a write builds a view of a few MiB and frees the last one:
  // reusing those pages keeps the call off the page-fault path.
  KeepHeapWarm(size_t{16} << 20, size_t{64} << 20);
  mcp::Resources resources(store->get());  // in every profile: resources are not tools
  server.SetResources(&resources);
  if (server.Serve(STDIN_FILENO, STDOUT_FILENO) != 0) {
    return Status::IOError("the client closed the connection");
  }
  return Status::OK();
}

Status RunImport(const CLI::App& root, Context& ctx, const std::string& file, bool no_compile) {
  std::ifstream in(file, std::ios::binary);
  if (!in) return Status::IOError("cannot open " + file);
  std::stringstream text;
  text << in.rdbuf();
  if (in.bad()) return Status::IOError("cannot read " + file);
  auto graph = mcp::ParseMemoryJsonl(text.str());
  if (!graph.ok()) return graph.status().WithContext(file);
  auto store = OpenMcpStore(root, ctx);
  if (!store.ok()) return store.status();
  auto report = mcp::ImportKnowledgeGraph(store->get(), *graph);
  if (!report.ok()) return report.status();
  // As after amem ingest: the first query after importing a large file exports
  // nothing in the foreground.
  const bool wrote =
      report->entities_created + report->observations_added + report->relations_created > 0;
  if (wrote && !no_compile) CompileQueryView(**store, "amem import-mcp-memory");
  if (ctx.json()) {
    ctx.SetJsonOutput(Json{{"store", (*store)->path()},
                  {"entities_created", report->entities_created},
                  {"entities_merged", report->entities_merged},
                  {"observations_added", report->observations_added},
                  {"relations_created", report->relations_created},
                  {"revision", report->revision}});
  } else {
    ctx.Out() += "imported " + file + " into " + (*store)->path() + ": " +
                 std::to_string(report->entities_created) + " entities created, " +
                 std::to_string(report->entities_merged) + " merged, " +
                 std::to_string(report->observations_added) + " observations, " +
                 std::to_string(report->relations_created) + " relations (revision " +
                 std::to_string(report->revision) + ")\n";
  }
  return Status::OK();
}

std::string ToolsHelp() {
  std::string h = "Which tools to serve: a profile or tool names, comma-separated (default: " +
                  std::string(mcp::kDefaultProfile) + "; also AMEM_MCP_TOOLS). Profiles:";
  for (const auto& p : mcp::ToolProfiles()) {
    h += "\n  " + std::string(p.name) + ": " + std::string(p.summary);
  }
  return h;
}

}  // namespace

void AddMcpCommands(CLI::App& app, Context& ctx) {
  CLI::App* cmd = ctx.AddCommand(
      app, "mcp",
      "Serve the store to coding agents over the Model Context Protocol (stdio). The store "
      "is --store/AMEM_STORE, else .amem in the git top level of the current directory "
      "(created when missing). stdout carries only protocol messages; logs go to stderr.",
      "claude mcp add amem -- amem mcp\namem --store /path/to/.amem mcp");
  auto export_dir = std::make_shared<std::string>();
  PathArgument(cmd->add_option(
      "--export-dir", *export_dir,
      "The directory tree the export_snapshot tool may write into (default: the working "
      "directory). Paths outside it, absolute paths, '..' and symbolic links that leave it "
      "are refused."));
  auto tools = std::make_shared<std::string>();
  cmd->add_option("--tools", *tools, ToolsHelp())->option_text("PROFILE|NAME,...");
  ctx.SetAction(cmd, [&app, &ctx, export_dir, tools] {
    return RunMcp(app, ctx, *export_dir, *tools);
  });

  auto file = std::make_shared<std::string>();
  cmd = ctx.AddCommand(
      app, "import-mcp-memory",
      "Import the memory.jsonl file of the official MCP memory server "
      "(@modelcontextprotocol/server-memory) losslessly, in one transaction, into the store "
      "`amem mcp` uses. Existing entities gain the missing observations.",
      "amem import-mcp-memory ~/.npm/_npx/.../memory.jsonl");
  PathArgument(cmd->add_option("FILE", *file, "The memory.jsonl file"))->required();
  auto no_compile = std::make_shared<bool>(false);
  cmd->add_flag("--no-compile", *no_compile, kNoCompileHelp);
  ctx.SetAction(cmd, [&app, &ctx, file, no_compile] {
    return RunImport(app, ctx, *file, *no_compile);
  });
}

}  // namespace amem::cli
