// The list of command families and the driver that runs one command.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <iostream>
#include <string>
#include <string_view>
#include <vector>

#include <unistd.h>

#include "common/progress.h"
#include "snapshot/format.h"
#include "store/store.h"
#include "tools/cli/command.h"
#include "tools/cli/cmd_mcp.h"
#include "tools/io/query_log.h"
#include "tools/io/query_table.h"

namespace amem::cli {

namespace {

// Every family of subcommands, in --help order. Add new families here.
constexpr void (*kCommandFamilies[])(CLI::App&, Context&) = {
    AddStoreCommands,
    AddKvCommands,
    AddIngestCommands,
    AddIndexCommands,
    AddSnapshotCommands,
    AddMergeCommands,
    AddLogCommands,
    AddRemoteCommands,
    AddQueryCommands,
    AddViewCommands,
    AddMcpCommands,
    AddReplayQueriesCommands,
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

// What `amem --version` prints: the program's version and the formats it
// writes and reads.
std::string VersionText() {
  return "amem " AMEM_VERSION " (store format " + std::to_string(StoreFormatVersion()) +
         ", reads " + std::to_string(OldestReadableStoreFormat()) + "-" +
         std::to_string(StoreFormatVersion()) + "; .amem snapshot format " +
         std::to_string(snapshot::kFormatVersion) + ")";
}

// The first word of the command line that is not a global option or its value:
// the command the user meant, when it is not one.
std::string FirstWord(const std::vector<std::string>& argv) {
  for (size_t i = 0; i < argv.size(); ++i) {
    const std::string& a = argv[i];
    if (a == "--store" || a == "--query-log") {
      ++i;
    } else if (a.empty() || a[0] != '-') {
      return a;
    }
  }
  return "";
}

// The command to build alone (Context::BuildOnly): the first word, unless a help
// or version flag comes before it (those list every command); "" for all.
std::string OnlyCommand(const std::vector<std::string>& argv) {
  const std::string word = FirstWord(argv);
  for (const std::string& a : argv) {
    if (a == word) break;
    if (a == "-h" || a == "--help" || a == "--help-all" || a == "--version") return "";
  }
  return word;
}

// Levenshtein distance (a mistyped command is short: no need for less memory).
size_t EditDistance(std::string_view a, std::string_view b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = up;
    }
  }
  return row[b.size()];
}

// The subcommand nearest to `word`, when it is close enough to be a typo: at most
// two edits and fewer than half of the word; ties go to the first in --help order.
std::string NearestCommand(const CLI::App& app, const std::string& word) {
  std::string best;
  size_t best_distance = SIZE_MAX;
  for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; })) {
    if (sub->get_group().empty()) continue;  // hidden (merge-base): never suggested
    const size_t d = EditDistance(word, sub->get_name());
    if (d < best_distance) {
      best = sub->get_name();
      best_distance = d;
    }
  }
  return best_distance <= 2 && 2 * best_distance < word.size() ? best : "";
}

// The whole `amem` app: global flags and every command family.
void BuildApp(CLI::App& app, Context& ctx) {
  app.footer(std::string(ExitCodeHelp()) + "\n");
  // At most one; none is reported below, so an unknown word is "not expected".
  app.require_subcommand(0, 1);
  *ctx.mutable_store_dir() = "./.amem";
  PathArgument(app.add_option("--store", *ctx.mutable_store_dir(),
                              "Store directory (default: $AMEM_STORE, else ./.amem)"))
      ->envname("AMEM_STORE")
      ->type_name("DIR");
  app.add_flag("--json", *ctx.mutable_json(),
               "Print one JSON document on stdout instead of text");
  PathArgument(app.add_option("--query-log", *ctx.mutable_query_log(),
                              "Append every query asked (CLI or amem mcp) to FILE as a JSON "
                              "line (docs/LOG.md; default: $AMEM_QUERY_LOG)"))
      ->envname("AMEM_QUERY_LOG")
      ->type_name("FILE");
  app.add_flag("--read-only", *ctx.mutable_read_only(),
               "Open the store for reads only: writes fail, nothing is written beside the "
               "store (queries build what the snapshot cache lacks in memory). A store on a "
               "read-only file system is opened so by itself");
  for (auto add : kCommandFamilies) {
    add(app, ctx);
    if (ctx.built_only()) break;  // the command asked for is there: the rest is not needed
  }
  app.set_version_flag("--version", VersionText(),
                       "Print amem's version and the store and snapshot formats it reads");
}

// The arguments after the command's name, without the global --store and
// --query-log (which name this machine's files, not the question).
std::vector<std::string> CommandArgs(const std::vector<std::string>& argv,
                                     const std::string& command) {
  std::vector<std::string> out;
  bool seen_command = false;
  for (size_t i = 0; i < argv.size(); ++i) {
    const std::string& a = argv[i];
    if (a == "--store" || a == "--query-log") {
      ++i;
      continue;
    }
    if (a.rfind("--store=", 0) == 0 || a.rfind("--query-log=", 0) == 0) continue;
    if (!seen_command && a == command) {
      seen_command = true;
      continue;
    }
    if (seen_command) out.push_back(a);
  }
  return out;
}

// Appends the query the command answered to the query log, if both exist. A
// failure is a warning: the answer was given.
void LogQuery(const Context& ctx) {
  if (ctx.query_log().empty() || !ctx.query_answer()) return;
  io::QueryRecord record;
  record.source = "cli";
  record.query = ctx.command_name();
  record.args = ctx.command_args();
  record.revision = ctx.query_revision();
  record.digest = io::AnswerDigest(*ctx.query_answer());
  Status s = io::AppendQueryLog(ctx.query_log(), record);
  if (!s.ok()) PrintErrorLine("amem " + ctx.command_name(), "warning: " + s.ToString());
}

}  // namespace

Result<Json> RunQueryCommand(const std::vector<std::string>& argv) {
  // Only the 16 queries: no other command (replay-queries itself, which recursed
  // until the stack ran out; a command that writes) runs from a recorded line.
  if (argv.empty() || !io::IsQueryCommand(argv.front())) {
    return Status::InvalidArgument("\"" + (argv.empty() ? std::string() : argv.front()) +
                                   "\" is not one of the " + std::to_string(io::Queries().size()) +
                                   " query commands (docs/QUERIES.md)");
  }
  Context ctx;
  ctx.BuildOnly(OnlyCommand(argv));
  CLI::App app("amem", "amem");
  BuildApp(app, ctx);
  std::vector<std::string> reversed(argv.rbegin(), argv.rend());
  try {
    app.parse(reversed);
  } catch (const CLI::ParseError& e) {
    return Status::InvalidArgument(std::string("usage: ") + e.what());
  }
  const CLI::App* selected = nullptr;
  SelectedName(app, &selected);
  const std::function<Status()>* action = ctx.ActionFor(selected);
  if (action == nullptr) return Status::InvalidArgument("not a command: " + argv.front());
  AMEM_RETURN_IF_ERROR((*action)());
  if (!ctx.query_answer()) {
    return Status::InvalidArgument(argv.front() + " is not a query (it records no answer)");
  }
  return *ctx.query_answer();
}

int RunCli(int argc, char** argv) {
  Context ctx;
  ctx.BuildOnly(OnlyCommand(std::vector<std::string>(argv + 1, argv + argc)));
  CLI::App app("amem: an embedded graph memory for coding agents (LMDB store).", "amem");
  BuildApp(app, ctx);
  if (argc <= 1) {  // `amem` alone: the overview --help prints
    std::cout << app.help();
    return kExitOk;
  }

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e, std::cout, std::cerr);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e, std::cout, std::cerr);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e, std::cout, std::cerr);
  } catch (const CLI::ParseError& e) {
    std::string name = SelectedName(app, nullptr);
    const std::string word = FirstWord(std::vector<std::string>(argv + 1, argv + argc));
    if (name == "amem" && !word.empty()) {  // not a command: say so, and what was meant
      Context all;  // the app was built for `word` alone: the suggestion needs every command
      CLI::App every("amem", "amem");
      BuildApp(every, all);
      const std::string nearest = NearestCommand(every, word);
      PrintErrorLine(name, "usage: unknown command '" + word + "'" +
                               (nearest.empty() ? "" : "; did you mean '" + nearest + "'?") +
                               " (see amem --help)");
      return kExitUsage;
    }
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
  ctx.SetCommandLine(selected->get_name(),
                     CommandArgs(std::vector<std::string>(argv + 1, argv + argc),
                                 selected->get_name()));
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
  LogQuery(ctx);
  const std::string& out = ctx.buffered_output();
  std::fwrite(out.data(), 1, out.size(), stdout);
  if (std::fflush(stdout) != 0) {
    PrintErrorLine(name, "IO error: cannot write stdout");
    return kExitIOError;
  }
  return ctx.answer_false() ? kExitFalse : kExitOk;
}

}  // namespace amem::cli
