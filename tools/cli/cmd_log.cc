// `amem log` and `amem replay`: the store's history as a replayable JSON Lines log,
// and applying such a log to a store it continues (tools/io/history_log.h,
// docs/LOG.md).
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <memory>
#include <string>
#include <system_error>

#include "common/files.h"
#include "tools/cli/command.h"
#include "tools/io/history_log.h"
#include "tools/cli/query_args.h"
#include "tools/cli/replication.h"

namespace amem::cli {

namespace {

// ---- log ----
struct LogArgs {
  uint64_t since_rev = 0;
  uint64_t until_rev = 0;
  std::string out;
};

// Writes lines to stdout, or to a file that is only put in place when complete
// (AtomicFile: a temp file of its own, removed on failure).
class LogSink {
 public:
  Status Open(const std::string& path) {
    to_stdout_ = path.empty() || path == "-";
    if (to_stdout_) return Status::OK();
    return file_.Open(path, /*write_behind=*/true);
  }

  Status Write(const std::string& bytes) {
    bytes_ += bytes.size();
    if (!to_stdout_) return file_.Append(bytes);
    if (std::fwrite(bytes.data(), 1, bytes.size(), stdout) != bytes.size()) {
      return Status::IOError(std::string("stdout: ") + std::strerror(errno));
    }
    return Status::OK();
  }

  Status Finish() {
    if (!to_stdout_) return file_.Commit(Durability::kSynced);
    if (std::fflush(stdout) != 0) return Status::IOError("cannot write stdout");
    return Status::OK();
  }

  bool to_stdout() const { return to_stdout_; }
  uint64_t bytes() const { return bytes_; }

 private:
  bool to_stdout_ = true;
  AtomicFile file_;
  uint64_t bytes_ = 0;
};

Status RunLog(Context& ctx, const LogArgs& a) {
  if (a.until_rev != 0 && a.until_rev <= a.since_rev) {
    return ctx.UsageError("--until-rev must be greater than --since-rev");
  }
  if (ctx.json() && (a.out.empty() || a.out == "-")) {
    return ctx.UsageError("--json describes a log written with --out FILE; without it the "
                          "log itself is on stdout");
  }
  Result<Store*> store = ctx.OpenStore();
  if (!store.ok()) return store.status();
  LogSink sink;
  AMEM_RETURN_IF_ERROR(sink.Open(a.out));
  uint64_t revisions = 0, ops = 0, first = 0, last = 0;
  std::string chunk;
  AMEM_RETURN_IF_ERROR((*store)->ReadHistory(
      a.since_rev, a.until_rev, [&](const LoggedRevision& revision) -> Status {
        if (first == 0) first = revision.rev;
        last = revision.rev;
        ++revisions;
        ops += revision.batch.size();
        io::AppendLogLines(revision, &chunk);
        if (chunk.size() < (1 << 20)) return Status::OK();
        Status s = sink.Write(chunk);
        chunk.clear();
        return s;
      }));
  AMEM_RETURN_IF_ERROR(sink.Write(chunk));
  AMEM_RETURN_IF_ERROR(sink.Finish());
  if (sink.to_stdout()) return Status::OK();
  if (ctx.json()) {
    Json doc;
    doc["out"] = a.out;
    doc["revisions"] = revisions;
    doc["first_rev"] = first;
    doc["last_rev"] = last;
    doc["ops"] = ops;
    doc["bytes"] = sink.bytes();
    ctx.SetJsonOutput(doc);
  } else {
    ctx.Out() += "logged " + std::to_string(ops) + " operations of " +
                 std::to_string(revisions) + " revisions" +
                 (revisions > 0 ? " (" + std::to_string(first) + ".." + std::to_string(last) +
                                      ")"
                                : std::string()) +
                 " to " + a.out + "\n";
  }
  return Status::OK();
}

// ---- replay ----
struct ReplayArgs {
  std::string file;
  uint32_t dimension = 0;
  bool no_compile = false;
};

Status RunReplay(Context& ctx, const ReplayArgs& a) {
  std::string text;
  AMEM_RETURN_IF_ERROR(ReadInputLines(a.file, &text));
  Result<io::ParsedLog> log = io::ParseLog(text);
  if (!log.ok()) return log.status();
  text.clear();
  text.shrink_to_fit();

  bool created = false;
  Result<Store*> store = ctx.OpenStore();
  if (store.status().IsNotFound()) {
    StoreOptions options;
    options.dimension = a.dimension != 0           ? a.dimension
                        : log->vector_size != 0 ? log->vector_size
                                                : options.dimension;
    store = ctx.OpenOrCreateStore(options);
    created = store.ok();
  }
  if (!store.ok()) return store.status();
  // On a bound store each revision goes through the stream (replication.h).
  Result<ReplayReport> rev = ReplayRevisions(**store, ctx.store_dir(), log->revisions);
  if (!rev.ok()) {
    Status s = io::ReplayErrorToLine(rev.status(), *log);
    if (created) {
      ctx.CloseStore();
      std::error_code ec;
      std::filesystem::remove_all(ctx.store_dir(), ec);
    }
    return s;
  }
  const uint64_t applied = log->revisions.size() - rev->skipped;
  if (applied > 0 && !a.no_compile) CompileQueryView(**store, "amem replay");
  if (ctx.json()) {
    Json doc;
    doc["rev"] = rev->rev;
    doc["revisions"] = log->revisions.size();
    doc["ops"] = log->ops;
    doc["lines"] = log->lines;
    doc["created"] = created;
    if (!rev->stream.empty()) {
      doc["stream"] = rev->stream;
      doc["published"] = rev->published;
      doc["skipped"] = rev->skipped;
    }
    ctx.SetJsonOutput(doc);
  } else if (rev->stream.empty()) {
    ctx.Out() += "replayed " + std::to_string(log->ops) + " operations of " +
                 std::to_string(log->revisions.size()) + " revisions; the store is at rev " +
                 std::to_string(rev->rev) + "\n";
  } else {
    ctx.Out() += "replayed " + std::to_string(log->revisions.size()) + " revisions through " +
                 "stream " + rev->stream + ": " + std::to_string(rev->published) +
                 " published, " + std::to_string(rev->skipped) +
                 " the store had already; the store is at rev " + std::to_string(rev->rev) +
                 "\n";
  }
  return Status::OK();
}

}  // namespace

void AddLogCommands(CLI::App& app, Context& ctx) {
  {
    auto a = std::make_shared<LogArgs>();
    CLI::App* cmd = ctx.AddCommand(
        app, "log",
        "Write the store's history as JSON Lines with full values, one operation a line "
        "(docs/LOG.md).",
        "amem log --out run-1.log\n"
        "  amem log --since-rev 120 --until-rev 140 | jq -c 'select(.op == \"node\")'");
    cmd->add_option("--since-rev", a->since_rev, "Start after this revision (default 0: all)")
        ->type_name("REV");
    cmd->add_option("--until-rev", a->until_rev, "Stop at this revision (default: the latest)")
        ->type_name("REV");
    PathArgument(cmd->add_option(
                     "--out", a->out,
                     "Write the log to FILE (put in place when complete) instead of stdout"))
        ->type_name("FILE");
    ctx.SetAction(cmd, [&ctx, a] { return RunLog(ctx, *a); });
  }
  {
    auto a = std::make_shared<ReplayArgs>();
    CLI::App* cmd = ctx.AddCommand(
        app, "replay",
        "Apply a log written by amem log, keeping its revisions and commit times; all or "
        "nothing. On a store bound to a stream (amem remote) each revision is published to "
        "it first, and revisions the store has already are skipped, so a replay stopped "
        "midway resumes.",
        "amem --store /tmp/copy replay run-1.log && amem --store /tmp/copy export --as-of 7 "
        "x.amem");
    PathArgument(cmd->add_option("FILE", a->file, "Log file (amem log), or - for stdin"))
        ->required();
    cmd->add_option("--dimension", a->dimension,
                    "Vector dimension of a store this creates (default: the log's vectors', "
                    "else 128)")
        ->type_name("N");
    cmd->add_flag("--no-compile", a->no_compile, kNoCompileHelp);
    ctx.SetAction(cmd, [&ctx, a] { return RunReplay(ctx, *a); });
  }
}

}  // namespace amem::cli
