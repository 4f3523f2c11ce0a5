#include "tools/index/indexer.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <vector>

#include "tools/index/ctags.h"
#include "tools/index/scip.h"

extern char** environ;

namespace amem::index {
namespace {

std::string Errno(const std::string& what) { return what + ": " + std::strerror(errno); }

Status ReadWholeFile(const std::string& path, std::string* out) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    return errno == ENOENT ? Status::NotFound(path + ": no such file") : Status::IOError(Errno(path));
  }
  struct stat st {};
  if (::fstat(fd, &st) == 0 && S_ISDIR(st.st_mode)) {
    ::close(fd);
    return Status::InvalidArgument(path + ": is a directory, not an index file");
  }
  out->clear();
  char buf[1 << 16];
  for (;;) {
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n == 0) break;
    if (n < 0) {
      if (errno == EINTR) continue;
      Status st = Status::IOError(Errno(path));
      ::close(fd);
      return st;
    }
    out->append(buf, static_cast<size_t>(n));
  }
  ::close(fd);
  return Status::OK();
}

}  // namespace

Result<std::string> RunCtags(const std::string& dir) {
  struct stat st {};
  if (::stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
    return Status::NotFound(dir + ": no such directory");
  }
  std::vector<std::string> args = CtagsCommand();
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  int out[2];
  if (::pipe2(out, O_CLOEXEC) != 0) return Status::IOError(Errno("pipe"));
  std::FILE* err = std::tmpfile();
  if (err == nullptr) {
    ::close(out[0]);
    ::close(out[1]);
    return Status::IOError(Errno("tmpfile"));
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, out[1], STDOUT_FILENO);
  posix_spawn_file_actions_adddup2(&actions, ::fileno(err), STDERR_FILENO);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addchdir_np(&actions, dir.c_str());
  pid_t pid = 0;
  int rc = ::posix_spawnp(&pid, argv[0], &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  ::close(out[1]);
  if (rc != 0) {
    ::close(out[0]);
    std::fclose(err);
    if (rc == ENOENT) {
      return Status::NotFound(
          "universal-ctags is not installed (amem index DIR runs it): apt-get install "
          "universal-ctags, or give an index with --scip FILE or --ctags FILE");
    }
    return Status::IOError(std::string("cannot run ") + argv[0] + ": " + std::strerror(rc));
  }
  std::string text;
  char buf[1 << 16];
  for (;;) {
    ssize_t n = ::read(out[0], buf, sizeof buf);
    if (n == 0) break;
    if (n < 0) {
      if (errno == EINTR) continue;
      break;
    }
    text.append(buf, static_cast<size_t>(n));
  }
  ::close(out[0]);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    std::string message;
    std::rewind(err);
    char line[512];
    if (std::fgets(line, sizeof line, err)) message = line;
    while (!message.empty() && (message.back() == '\n' || message.back() == '\r')) message.pop_back();
    std::fclose(err);
    return Status::IOError(
        "ctags failed in " + dir +
        (WIFEXITED(status) ? " (exit " + std::to_string(WEXITSTATUS(status)) + ")" : " (killed)") +
        (message.empty() ? "" : ": " + message) +
        "; amem needs universal-ctags with JSON output (apt-get install universal-ctags)");
  }
  std::fclose(err);
  return text;
}

nlohmann::ordered_json IndexReportJson(const IndexReport& r) {
  using Json = nlohmann::ordered_json;
  Json orphans = Json::array();
  for (const Orphan& o : r.orphans) {
    orphans.push_back({{"memory", o.memory},
                       {"rel", o.rel},
                       {"code", o.code},
                       {"direction", o.from_memory ? "memory->code" : "code->memory"}});
  }
  Json doc;
  doc["rev"] = r.revision;
  doc["written"] = r.written;
  doc["files"] = {{"indexed", r.documents}, {"added", r.added},     {"changed", r.changed},
                  {"removed", r.removed},   {"unchanged", r.unchanged}};
  doc["nodes"] = {{"put", r.nodes_put}, {"deleted", r.nodes_deleted}};
  doc["edges"] = {{"put", r.edges_put}, {"deleted", r.edges_deleted}};
  doc["orphans"] = std::move(orphans);
  return doc;
}

Result<IndexReport> RunIndex(Store& store, const IndexRequest& request) {
  AMEM_ASSIGN_OR_RETURN(registry, ReadRegistry(store));
  CodeIndex index;
  std::string bytes;
  switch (request.source) {
    case IndexRequest::Source::kScip: {
      AMEM_RETURN_IF_ERROR(ReadWholeFile(request.path, &bytes));
      ScipOptions options;
      if (!request.options.full) {
        options.skip_document = [&registry](std::string_view path, uint64_t digest) {
          auto it = registry.find(path);
          return it != registry.end() && it->second.indexer == "scip" && it->second.digest == digest;
        };
      }
      auto read = ReadScip(bytes, options);
      if (!read.ok()) return read.status().WithContext(request.path);
      index = std::move(read.value());
      break;
    }
    case IndexRequest::Source::kCtags: {
      AMEM_RETURN_IF_ERROR(ReadWholeFile(request.path, &bytes));
      auto read = ReadCtags(bytes, CtagsOptions{.root = request.root});
      if (!read.ok()) return read.status().WithContext(request.path);
      index = std::move(read.value());
      break;
    }
    case IndexRequest::Source::kDirectory: {
      auto ran = RunCtags(request.path);
      if (!ran.ok()) return ran.status();
      bytes = std::move(ran.value());
      auto read = ReadCtags(bytes, CtagsOptions{.root = request.path});
      if (!read.ok()) return read.status().WithContext("ctags output for " + request.path);
      index = std::move(read.value());
      break;
    }
  }
  return IndexCode(store, index, registry, request.options);
}

}  // namespace amem::index
