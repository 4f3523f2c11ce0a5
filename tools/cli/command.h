// The amem command line: how subcommands are declared and run.
//
// Every subcommand is a CLI11 sub-app plus an action (a function returning Status)
// registered on a shared Context. RunCli (tools/cli/commands.cc) parses the command line,
// runs the action of the chosen subcommand, prints its buffered output and maps the
// Status to an exit code. Actions never print errors themselves and never exit.
//
// Adding a family of subcommands (queries, snapshot commands, mcp, ...):
//   1. Create tools/cli/cmd_<family>.cc defining
//        void AddFooCommands(CLI::App& app, Context& ctx);
//      For each subcommand:
//        auto args = std::make_shared<FooArgs>();          // outlives parsing
//        CLI::App* cmd = ctx.AddCommand(app, "foo", "One line: what it does.",
//                                       "amem foo file:src/a.cc --limit 5");
//        cmd->add_option("NODE", args->node, "Key or 16-hex-digit id")->required();
//        AddReadViewFlags(cmd, &args->view);               // --as-of / --at
//        ctx.SetAction(cmd, [&ctx, args] { return RunFoo(ctx, *args); });
//      RunFoo opens the store with ctx.OpenStore(), writes its answer with
//      ctx.Out() (plain text) or ctx.SetJsonOutput() (when ctx.json() is set) and returns
//      a Status.
//   2. Declare AddFooCommands below and add it to the list in tools/cli/commands.cc.
//
// Conventions (docs/DESIGN.md §6):
//   - Global flags --store DIR (default $AMEM_STORE, else ./.amem) and --json may be
//     given before or after the subcommand.
//   - Output is buffered and written to stdout only when the action succeeds (or
//     answers "false/different"), so a failed command prints nothing on stdout and
//     exactly one line on stderr: "amem <cmd>: <Status::ToString()>".
//   - With --json, stdout holds exactly one JSON document (one line).
//   - Exit codes: see ExitCode.
#ifndef AMEM_TOOLS_CLI_COMMAND_H_
#define AMEM_TOOLS_CLI_COMMAND_H_

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "common/status.h"
#include "store/store.h"
#include "tools/cli/run.h"

namespace amem::cli {

using Json = nlohmann::ordered_json;

// One exit code per error class; documented in `amem --help` and README.md.
enum ExitCode : int {
  kExitOk = 0,
  kExitFalse = 1,  // a "false/different" answer (diff, verify)
  kExitUsage = 2,
  kExitNotFound = 3,
  kExitInvalid = 4,
  kExitCorruption = 5,
  kExitIOError = 6,
  kExitNotSupported = 7,
  kExitConflict = 8,  // Aborted: another writer committed first; nothing written
};
int ExitCodeForStatus(const Status& status);
// The `amem --help` epilogue listing the exit codes.
const char* ExitCodeHelp();

class Context {
 public:
  Context() = default;
  Context(const Context&) = delete;
  Context& operator=(const Context&) = delete;

  // Registers a subcommand. `example` (one or more lines) is shown by --help.
  CLI::App* AddCommand(CLI::App& app, const std::string& name,
                       const std::string& description, const std::string& example);
  void SetAction(CLI::App* cmd, std::function<Status()> action);
  // The action of `cmd`; nullptr if none was set.
  const std::function<Status()>* ActionFor(const CLI::App* cmd) const;
  // Only `command` is asked for: the families with many commands (the queries,
  // view) register just that one, and no family is built after the one that
  // registered it, since building every option of every command cost each process
  // milliseconds. Empty (the default): everything, as --help and an unknown word
  // need.
  void BuildOnly(std::string command) { only_ = std::move(command); }
  bool Wants(std::string_view command) const { return only_.empty() || only_ == command; }
  // True once BuildOnly's command was registered (AddCommand on the top app).
  bool built_only() const { return built_only_; }

  // ---- global flags ----
  const std::string& store_dir() const { return store_dir_; }
  bool json() const { return json_; }
  bool read_only() const { return read_only_; }
  std::string* mutable_store_dir() { return &store_dir_; }
  bool* mutable_json() { return &json_; }
  // --read-only: the store is opened with StoreOptions::read_only.
  bool* mutable_read_only() { return &read_only_; }
  // --query-log FILE / $AMEM_QUERY_LOG: where queries are recorded (empty: off).
  const std::string& query_log() const { return query_log_; }
  std::string* mutable_query_log() { return &query_log_; }

  // ---- the query a command answered (tools/io/query_log.h) ----
  // The command's name and its arguments as given, without the global flags
  // --store and --query-log (set by RunCli).
  void SetCommandLine(std::string name, std::vector<std::string> args);
  const std::string& command_name() const { return command_name_; }
  const std::vector<std::string>& command_args() const { return command_args_; }
  // The revision of the store snapshot the query read (unset for --snapshot FILE).
  void SetQueryRevision(std::optional<uint64_t> revision) { query_revision_ = revision; }
  std::optional<uint64_t> query_revision() const { return query_revision_; }
  // Keeps `answer` as the command's query answer: RunCli appends it to the query
  // log when the command succeeds; replay-queries compares it.
  void RecordQuery(const cli::Json& answer) { query_answer_ = answer; }
  const std::optional<cli::Json>& query_answer() const { return query_answer_; }
  // A command that wrote (consolidate --execute) records nothing.
  void ForgetQuery() { query_answer_.reset(); }

  // Opens the store at store_dir(), once. A missing store is NotFound (only
  // `amem init` creates one). The store lives as long as the Context.
  // bulk: the process writes large transactions (StoreOptions::write_map).
  Result<Store*> OpenStore(bool bulk = false);
  // Opens or creates the store (for `amem init`).
  Result<Store*> OpenOrCreateStore(const StoreOptions& options);
  // Closes the store OpenStore opened (before removing a store this created).
  void CloseStore() { store_.reset(); }

  // ---- output, buffered until the action returns ----
  std::string& Out() { return out_; }
  // Sets the one JSON document of this command (--json).
  void SetJsonOutput(const cli::Json& doc);
  const std::string& buffered_output() const { return out_; }

  // An argument error found after parsing: exit code 2 instead of 4.
  Status UsageError(std::string_view message);
  bool usage_error() const { return usage_error_; }
  // For "false/different" answers: the command succeeded but exits with 1.
  void set_answer_false() { answer_false_ = true; }
  bool answer_false() const { return answer_false_; }

 private:
  std::string store_dir_;
  bool json_ = false;
  bool read_only_ = false;
  std::string query_log_;
  std::string only_;
  bool built_only_ = false;
  std::string command_name_;
  std::vector<std::string> command_args_;
  std::optional<uint64_t> query_revision_;
  std::optional<cli::Json> query_answer_;
  std::unique_ptr<Store> store_;
  std::string out_;
  bool usage_error_ = false;
  bool answer_false_ = false;
  std::map<const CLI::App*, std::function<Status()>> actions_;
};

// Writes a list answer: with --json, `doc` plus `field`: [to_json(item), ...];
// otherwise to_text(item, &ctx.Out()) for each item.
template <typename T, typename ToJson, typename ToText>
void EmitList(Context& ctx, Json doc, const char* field, const std::vector<T>& items,
              ToJson to_json, ToText to_text) {
  if (ctx.json()) {
    Json list = Json::array();
    for (const T& item : items) list.push_back(to_json(item));
    doc[field] = std::move(list);
    ctx.SetJsonOutput(doc);
  } else {
    for (const T& item : items) to_text(item, &ctx.Out());
  }
}

// Writes the answer of a write: with --json, `doc` plus "rev"; otherwise the line
// "<text> at rev <rev>".
void EmitWrite(Context& ctx, Json doc, const std::string& text, uint64_t rev);

// --as-of REV / --at TS (mutually exclusive) on a read command.
struct ReadViewFlags {
  uint64_t as_of = 0;
  int64_t at = 0;
  CLI::Option* as_of_opt = nullptr;
  CLI::Option* at_opt = nullptr;
  ReadView view() const;
};
void AddReadViewFlags(CLI::App* cmd, ReadViewFlags* flags);

// --ts TS, --run ID, --task ID and (when the write has one) --scope S.
struct WriteFlags {
  int64_t ts = 0;
  std::string run, task, scope;
  CLI::Option* ts_opt = nullptr;
  WriteOptions options() const;
};
void AddWriteFlags(CLI::App* cmd, WriteFlags* flags, bool with_scope);

// Marks `option` as a path argument: its values pass CheckPathArgument
// (common/files.h: no control character) while the command line is parsed, before
// any other check (a usage error, exit 2). Every option that names a file or a
// directory is marked so. Returns `option`.
CLI::Option* PathArgument(CLI::Option* option);

// Appends the bytes of `file` ("-": stdin) to *out; reads no more than
// `max_bytes` of them (the caller refuses what is that long).
Status ReadInputFile(const std::string& file, std::string* out, size_t max_bytes = SIZE_MAX);

// ReadInputFile for JSON Lines (replay, replay-queries): a line longer than
// io::kMaxLineBytes is refused ("line N: longer than ...") as soon as it is, before
// the rest of it is read.
Status ReadInputLines(const std::string& file, std::string* out);

// An error of a one-operation write without the "op 0: " the store puts first.
Status SingleWriteError(const Status& status);

// After a write that deleted something: prints "warning: ..." (one line, stderr)
// when node and edge tombstones have accumulated past the compaction threshold
// (Store::TombstoneWarning, O(1)). Never fails the command.
void WarnIfTombstonesAccumulated(const Store& store);

// Runs one query command in this process, as RunCli would, and returns the answer
// it recorded (Context::RecordQuery); nothing is printed. `argv` starts with the
// command's name. For replaying recorded queries (amem replay-queries).
Result<Json> RunQueryCommand(const std::vector<std::string>& argv);

// ---- command families (tools/cli/cmd_*.cc); listed in tools/cli/commands.cc ----
void AddStoreCommands(CLI::App& app, Context& ctx);  // init, nodes, edges, stats ...
void AddKvCommands(CLI::App& app, Context& ctx);     // kv-put, kv-get, kv-list, ...
void AddIngestCommands(CLI::App& app, Context& ctx);  // ingest
void AddIndexCommands(CLI::App& app, Context& ctx);   // index (docs/CODE.md)
void AddSnapshotCommands(CLI::App& app, Context& ctx);  // export, import, verify, info, diff
void AddMergeCommands(CLI::App& app, Context& ctx);  // merge-base (hidden, cmd_merge.cc)
void AddLogCommands(CLI::App& app, Context& ctx);  // log, replay (docs/LOG.md)
void AddReplayQueriesCommands(CLI::App& app, Context& ctx);  // replay-queries
void AddRemoteCommands(CLI::App& app, Context& ctx);  // remote, sync, follow, verify-replica (REPLICATION.md)
// The 16 queries, from the query table (tools/io/query_table.h).
void AddQueryCommands(CLI::App& app, Context& ctx);
void AddViewCommands(CLI::App& app, Context& ctx);  // view (docs/VIEW.md)

}  // namespace amem::cli

#endif  // AMEM_TOOLS_CLI_COMMAND_H_
