#include "tools/cli/command.h"
#include "tools/cli/replication.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <system_error>

#include "common/files.h"
#include "tools/io/ingest.h"

namespace amem::cli {

CLI::Option* PathArgument(CLI::Option* option) {
  const std::string name = option->get_name();
  return option->check(CLI::Validator(
      [name](std::string& value) -> std::string {
        Status s = CheckPathArgument(value, name);
        // CLI11 puts the option's name first itself.
        return s.ok() ? std::string() : s.message().substr(name.size() + 2);
      },
      "", "path"));
}

Status ReadInputFile(const std::string& file, std::string* out, size_t max_bytes) {
  bool use_stdin = file == "-";
  std::FILE* f = use_stdin ? stdin : std::fopen(file.c_str(), "rb");
  if (f == nullptr) return Status::IOError(file + ": " + std::strerror(errno));
  char buf[1 << 16];
  size_t n, read = 0;
  while (read < max_bytes &&
         (n = std::fread(buf, 1, std::min(sizeof(buf), max_bytes - read), f)) > 0) {
    out->append(buf, n);
    read += n;
  }
  bool failed = std::ferror(f) != 0;
  int saved = errno;
  if (!use_stdin) std::fclose(f);
  if (failed) return Status::IOError(file + ": " + std::strerror(saved));
  return Status::OK();
}

Status ReadInputLines(const std::string& file, std::string* out) {
  bool use_stdin = file == "-";
  std::FILE* f = use_stdin ? stdin : std::fopen(file.c_str(), "rb");
  if (f == nullptr) return Status::IOError(file + ": " + std::strerror(errno));
  char buf[1 << 16];
  size_t n, line_number = 1, line_bytes = 0;
  Status status;
  while (status.ok() && (n = std::fread(buf, 1, sizeof(buf), f)) > 0) {
    for (const char* p = buf; p < buf + n;) {
      const char* nl = static_cast<const char*>(std::memchr(p, '\n', buf + n - p));
      line_bytes += static_cast<size_t>((nl ? nl : buf + n) - p);
      if (line_bytes > io::kMaxLineBytes) {
        status = io::LineTooLong(line_number);
        break;
      }
      if (nl == nullptr) break;
      ++line_number;
      line_bytes = 0;
      p = nl + 1;
    }
    out->append(buf, n);
  }
  bool failed = status.ok() && std::ferror(f) != 0;
  int saved = errno;
  if (!use_stdin) std::fclose(f);
  if (failed) return Status::IOError(file + ": " + std::strerror(saved));
  return status;
}

int ExitCodeForStatus(const Status& status) {
  switch (status.code()) {
    case Status::Code::kOk: return kExitOk;
    case Status::Code::kNotFound: return kExitNotFound;
    case Status::Code::kInvalidArgument: return kExitInvalid;
    case Status::Code::kCorruption: return kExitCorruption;
    case Status::Code::kIOError: return kExitIOError;
    case Status::Code::kNotSupported: return kExitNotSupported;
    case Status::Code::kAborted: return kExitConflict;
  }
  return kExitIOError;
}

const char* ExitCodeHelp() {
  return "Exit codes: 0 ok, 1 false/different (diff, verify), 2 usage, 3 not found,\n"
         "4 invalid input, 5 corruption, 6 I/O error, 7 not supported, 8 conflict (another\n"
         "writer committed first: nothing was written; read again and retry).\n"
         "Errors are one line on stderr: amem <command>: <error>. With --json, stdout\n"
         "holds one JSON document. Run amem <command> --help for a command's options.";
}

CLI::App* Context::AddCommand(CLI::App& app, const std::string& name,
                              const std::string& description, const std::string& example) {
  CLI::App* cmd = app.add_subcommand(name, description);
  if (app.get_parent() == nullptr && !only_.empty() && name == only_) built_only_ = true;
  std::string indented;  // every example line indented as the first
  for (char c : example) {
    indented += c;
    if (c == '\n') indented += "  ";
  }
  cmd->footer("Example:\n  " + indented +
              "\n\nGlobal options: --store DIR (default $AMEM_STORE, else ./.amem), --json\n"
              "(one JSON document on stdout), --query-log FILE (default $AMEM_QUERY_LOG:\n"
              "record queries, docs/LOG.md), --read-only (reads only; automatic on a\n"
              "read-only file system). Exit codes: see amem --help.\n");
  cmd->fallthrough();  // global --store/--json after the subcommand name
  return cmd;
}

void Context::SetAction(CLI::App* cmd, std::function<Status()> action) {
  actions_[cmd] = std::move(action);
}

const std::function<Status()>* Context::ActionFor(const CLI::App* cmd) const {
  auto it = actions_.find(cmd);
  return it == actions_.end() ? nullptr : &it->second;
}

namespace {
StoreOptions BaseOptions() {
  StoreOptions options;
  if (const char* sink = std::getenv("AMEM_TELEMETRY"); sink != nullptr) {
    options.telemetry_path = sink;
  }
  return options;
}
}  // namespace

Result<Store*> Context::OpenStore(bool bulk) {
  if (store_ != nullptr) return store_.get();
  std::error_code ec;
  if (!std::filesystem::is_directory(store_dir_, ec)) {
    return Status::NotFound("no store at " + store_dir_ + " (create one with amem init)");
  }
  StoreOptions options = BaseOptions();
  options.create_if_missing = false;
  options.write_map = bulk;
  options.read_only = read_only_;
  options.read_only_if_needed = true;  // a read-only file system: reads still work
  Result<std::unique_ptr<Store>> store = Store::Open(store_dir_, options);
  if (store.status().IsNotFound()) {
    return Status::NotFound(store.status().message() + " (create one with amem init)");
  }
  if (!store.ok()) return store.status();
  // A store bound to a stream publishes every write to it first (replication.h).
  AMEM_RETURN_IF_ERROR(InstallReplication(store_dir_, store->get()));
  store_ = std::move(store).value();
  return store_.get();
}

Result<Store*> Context::OpenOrCreateStore(const StoreOptions& options) {
  StoreOptions with_sink = options;
  if (with_sink.telemetry_path.empty()) with_sink.telemetry_path = BaseOptions().telemetry_path;
  std::error_code ec;
  std::filesystem::create_directories(store_dir_, ec);
  if (ec) return Status::IOError(store_dir_ + ": " + ec.message());
  Result<std::unique_ptr<Store>> store = Store::Open(store_dir_, with_sink);
  if (!store.ok()) return store.status();
  store_ = std::move(store).value();
  return store_.get();
}

void Context::SetCommandLine(std::string name, std::vector<std::string> args) {
  command_name_ = std::move(name);
  command_args_ = std::move(args);
}

void Context::SetJsonOutput(const cli::Json& doc) {
  out_ = doc.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  out_ += '\n';
}

Status Context::UsageError(std::string_view message) {
  usage_error_ = true;
  return Status::InvalidArgument(message);
}

void EmitWrite(Context& ctx, Json doc, const std::string& text, uint64_t rev) {
  if (ctx.json()) {
    doc["rev"] = rev;
    ctx.SetJsonOutput(doc);
  } else {
    ctx.Out() += text + " at rev " + std::to_string(rev) + "\n";
  }
}

ReadView ReadViewFlags::view() const {
  if (as_of_opt != nullptr && as_of_opt->count() > 0) return ReadView::AtRevision(as_of);
  if (at_opt != nullptr && at_opt->count() > 0) return ReadView::AtTime(at);
  return ReadView::Latest();
}

void AddReadViewFlags(CLI::App* cmd, ReadViewFlags* flags) {
  flags->as_of_opt = cmd->add_option(
      "--as-of", flags->as_of, "Read the state as of revision REV (after its commit)");
  flags->as_of_opt->type_name("REV");
  flags->at_opt = cmd->add_option(
      "--at", flags->at, "Read the state as of Unix time TS (the last commit at or before it)");
  flags->at_opt->type_name("TS");
  flags->as_of_opt->excludes(flags->at_opt);
}

WriteOptions WriteFlags::options() const {
  WriteOptions options;
  if (ts_opt != nullptr && ts_opt->count() > 0) options.ts = ts;
  options.run = run;
  options.task = task;
  options.scope = scope;
  return options;
}

void AddWriteFlags(CLI::App* cmd, WriteFlags* flags, bool with_scope) {
  flags->ts_opt = cmd->add_option("--ts", flags->ts,
                                  "Timestamp of the write, Unix seconds (default: now)");
  flags->ts_opt->type_name("TS");
  cmd->add_option("--run", flags->run, "Id of the agent run doing the write")->type_name("ID");
  cmd->add_option("--task", flags->task, "Id of the task doing the write")->type_name("ID");
  if (with_scope) {
    cmd->add_option("--scope", flags->scope, "Project or namespace the item belongs to")
        ->type_name("SCOPE");
  }
}

Status SingleWriteError(const Status& status) {
  size_t k = 0;
  std::string rest;
  if (!io::SplitOpError(status, &k, &rest) || k != 0 || rest.rfind(": ", 0) != 0) return status;
  return io::WithMessage(status, rest.substr(2));
}

void WarnIfTombstonesAccumulated(const Store& store) {
  Result<std::string> warning = store.TombstoneWarning();
  if (!warning.ok() || warning->empty()) return;
  std::string line = "warning: " + *warning + "\n";
  std::fwrite(line.data(), 1, line.size(), stderr);
}

}  // namespace amem::cli
