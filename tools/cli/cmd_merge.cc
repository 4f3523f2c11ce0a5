// The background merge of a CLI query (docs/STORE.md §10): SpawnMergeProcess,
// which a query past the delta's bound calls (snapshot::LiveOptions::spawn_merge),
// and the hidden command it runs, `amem --store DIR merge-base`.
//
// Why a new process running this binary again (/proc/self/exe's target), not a forked
// child that merges: the query process holds an LMDB environment, which must not
// be used across fork(), and may hold threads and locks a forked child would copy
// half-taken; exec starts the merge clean, opening the store as any amem process
// does. The process is detached: a session of its own (setsid), reparented to
// init by a double fork (so no zombie waits on the query), stdin, stdout and
// stderr on /dev/null and no other inherited descriptor (a test or a shell that
// reads the query's output sees its end when the query exits).
#include <fcntl.h>
#include <sys/file.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "snapshot/live.h"
#include "tools/cli/command.h"
#include "tools/cli/query_args.h"

namespace amem::cli {

namespace {

constexpr char kSelf[] = "/proc/self/exe";

// True when another process holds the store's merge.lock: a merge runs, and
// starting one more would only find the lock taken.
bool MergeRunning(const std::string& store_dir) {
  const std::string path = store_dir + "/merge.lock";
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  const bool held = ::flock(fd, LOCK_EX | LOCK_NB) != 0 && errno == EWOULDBLOCK;
  ::close(fd);  // releases the lock if it was taken
  return held;
}

// AMEM_MERGE_TRACE=FILE: each merge-base appends one line saying what it did (for
// tests, which cannot read the detached process's output).
void Trace(const std::string& line) {
  const char* path = std::getenv("AMEM_MERGE_TRACE");
  if (path == nullptr || *path == '\0') return;
  const int fd = ::open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) return;
  const std::string text = line + "\n";
  [[maybe_unused]] const ssize_t n = ::write(fd, text.data(), text.size());
  ::close(fd);
}

Status RunMergeBase(Context& ctx) {
  AMEM_ASSIGN_OR_RETURN(store, ctx.OpenStore());
  Result<snapshot::LiveOptions> options = snapshot::LiveOptionsFromEnv();
  if (!options.ok()) return ctx.UsageError(options.status().message());
  options->progress = "amem merge-base";
  Result<bool> merged = snapshot::MergeBase(*store, *options);
  if (!merged.ok()) {
    Trace("failed " + merged.status().ToString());
    return merged.status();
  }
  Trace(*merged ? "merged" : "nothing to merge");
  if (ctx.json()) {
    Json doc;
    doc["merged"] = *merged;
    ctx.SetJsonOutput(doc);
  } else {
    ctx.Out() += *merged ? "merged: the base is at the latest revision\n"
                         : "nothing to merge (another merge runs, or the base is at the "
                           "latest revision)\n";
  }
  return Status::OK();
}

}  // namespace

Status SpawnMergeProcess(const std::string& store_dir) {
  if (MergeRunning(store_dir)) return Status::OK();
  if (::access(kSelf, X_OK) != 0) return Status::IOError(std::string(kSelf) + ": " + std::strerror(errno));
  // The binary's own path, so that the process is named amem (ps, top); the link
  // itself when the file was replaced since this process started.
  char path[4096];
  const ssize_t n = ::readlink(kSelf, path, sizeof(path) - 1);
  std::string exe = kSelf;
  if (n > 0) {
    path[n] = '\0';
    if (::access(path, X_OK) == 0 && std::string_view(path, n).ends_with(" (deleted)") == false) {
      exe = path;
    }
  }
  std::error_code ec;
  const std::string dir = std::filesystem::absolute(store_dir, ec).string();
  if (ec) return Status::IOError(store_dir + ": " + ec.message());
  // Everything the children need is made before fork(): between fork and exec
  // only async-signal-safe calls.
  std::vector<std::string> args = {"amem", "--store", dir, "merge-base"};
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  long open_max = ::sysconf(_SC_OPEN_MAX);
  if (open_max < 0 || open_max > 65536) open_max = 65536;
  const pid_t middle = ::fork();
  if (middle < 0) return Status::IOError(std::string("fork: ") + std::strerror(errno));
  if (middle == 0) {
    if (::setsid() < 0) ::_exit(1);
    const pid_t merger = ::fork();
    if (merger != 0) ::_exit(merger < 0 ? 1 : 0);
    const int null = ::open("/dev/null", O_RDWR);
    if (null < 0) ::_exit(1);
    for (int fd = 0; fd < 3; ++fd) ::dup2(null, fd);
    // One call on Linux 5.9 and later; one close per descriptor before that.
    if (::close_range(3, ~0U, 0) != 0) {
      for (int fd = 3; fd < open_max; ++fd) ::close(fd);
    }
    if (::chdir("/") != 0) ::_exit(1);
    ::execv(exe.c_str(), argv.data());
    ::_exit(127);
  }
  int status = 0;
  while (::waitpid(middle, &status, 0) < 0) {
    if (errno != EINTR) return Status::IOError(std::string("waitpid: ") + std::strerror(errno));
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    return Status::IOError("the merge process was not started");
  }
  return Status::OK();
}

void AddMergeCommands(CLI::App& app, Context& ctx) {
  if (!ctx.Wants("merge-base")) return;
  CLI::App* cmd = ctx.AddCommand(
      app, "merge-base",
      "Internal: rebuild the store's base snapshot (what a query past the delta's bound "
      "starts in the background).",
      "amem --store .amem merge-base");
  cmd->group("");  // hidden: not in amem --help
  ctx.SetAction(cmd, [&ctx] { return RunMergeBase(ctx); });
}

}  // namespace amem::cli
