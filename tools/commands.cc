// The list of command families and the driver that runs one command.
#include <cstdio>
#include <exception>
#include <iostream>
#include <string>

#include <unistd.h>

#include "common/progress.h"
#include "tools/cmd_query_cog.h"
#include "tools/cmd_query_core.h"
#include "tools/cmd_query_rank.h"
#include "tools/command.h"
#include "tools/mcp_command.h"

namespace amem::cli {

namespace {

// Every family of subcommands, in --help order. Add new families here.
constexpr void (*kCommandFamilies[])(CLI::App&, Context&) = {
    AddStoreCommands,
    AddKvCommands,
    AddIngestCommands,
    AddSnapshotCommands,
    AddQueryCoreCommands,
    AddQueryRankCommands,
    AddQueryCogCommands,
    AddMcpCommands,
};

// The most deeply selected subcommand's name ("amem" when none was selected).
std::string SelectedName(const CLI::App& app, const CLI::App** selected) {
  const CLI::App* cur = &app;
  std::string name = "amem";
  for (;;) {
    auto subs = cur->get_subcommands();
    if (subs.empty()) break;
    cur = subs.front();
    name += " " + cur->get_name();
  }
  if (selected != nullptr) *selected = cur;
  return name;
}

void PrintErrorLine(const std::string& command, const std::string& message) {
  std::string line = command + ": " + message;
  for (char& c : line) {
    if (c == '\n' || c == '\r') c = ' ';
  }
  line += '\n';
  std::fwrite(line.data(), 1, line.size(), stderr);
}

}  // namespace

int RunCli(int argc, char** argv) {
  Context ctx;
  CLI::App app("amem: an embedded graph memory for coding agents (LMDB store).", "amem");
  app.footer(std::string(ExitCodeHelp()) + "\n");
  // At most one; none is reported below, so an unknown word is "not expected".
  app.require_subcommand(0, 1);
  *ctx.mutable_store_dir() = "./.amem";
  app.add_option("--store", *ctx.mutable_store_dir(),
                 "Store directory (default: $AMEM_STORE, else ./.amem)")
      ->envname("AMEM_STORE")
      ->type_name("DIR");
  app.add_flag("--json", *ctx.mutable_json(),
               "Print one JSON document on stdout instead of text");
  for (auto add : kCommandFamilies) add(app, ctx);

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e, std::cout, std::cerr);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e, std::cout, std::cerr);
  } catch (const CLI::ParseError& e) {
    std::string name = SelectedName(app, nullptr);
    PrintErrorLine(name, std::string("usage: ") + e.what() + " (see " + name + " --help)");
    return kExitUsage;
  }

  const CLI::App* selected = nullptr;
  std::string name = SelectedName(app, &selected);
  const std::function<Status()>* action = ctx.ActionFor(selected);
  if (action == nullptr) {
    PrintErrorLine(name, "usage: a subcommand is required (see " + name + " --help)");
    return kExitUsage;
  }
  // Progress lines only where a person watches: never into a pipe, a file or MCP.
  EnableProgressOnTerminal(isatty(STDERR_FILENO) == 1);
  Status status;
  try {
    status = (*action)();
  } catch (const std::exception& e) {
    status = Status::IOError(std::string("unexpected exception: ") + e.what());
  }
  if (!status.ok()) {
    PrintErrorLine(name, ctx.usage_error() ? "usage: " + status.message() : status.ToString());
    return ctx.usage_error() ? kExitUsage : ExitCodeForStatus(status);
  }
  const std::string& out = ctx.buffered_output();
  std::fwrite(out.data(), 1, out.size(), stdout);
  if (std::fflush(stdout) != 0) {
    PrintErrorLine(name, "IO error: cannot write stdout");
    return kExitIOError;
  }
  return ctx.answer_false() ? kExitFalse : kExitOk;
}

}  // namespace amem::cli
