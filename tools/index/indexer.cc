#include "tools/index/indexer.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <algorithm>
#include <optional>
#include <vector>

#include "tools/index/ctags.h"
#include "tools/index/scip.h"

extern char** environ;

namespace amem::index {
namespace {

std::string Errno(const std::string& what) { return what + ": " + std::strerror(errno); }

// A file's bytes, mapped read-only for as long as this lives (an index file can be
// hundreds of megabytes: reading it into a growing string copied it several times).
class MappedFile {
 public:
  MappedFile() = default;
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;
  ~MappedFile() {
    if (data_ != nullptr) ::munmap(data_, size_);
  }

  Status Open(const std::string& path) {
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
      return errno == ENOENT ? Status::NotFound(path + ": no such file")
                             : Status::IOError(Errno(path));
    }
    struct stat st {};
    Status status;
    if (::fstat(fd, &st) != 0) {
      status = Status::IOError(Errno(path));
    } else if (S_ISDIR(st.st_mode)) {
      status = Status::InvalidArgument(path + ": is a directory, not an index file");
    } else if (!S_ISREG(st.st_mode)) {
      status = Status::InvalidArgument(path + ": not a regular file");
    } else if (st.st_size > 0) {
      size_ = static_cast<size_t>(st.st_size);
      void* p = ::mmap(nullptr, size_, PROT_READ, MAP_PRIVATE, fd, 0);
      if (p == MAP_FAILED) {
        size_ = 0;
        status = Status::IOError(Errno(path));
      } else {
        data_ = p;
        ::madvise(data_, size_, MADV_SEQUENTIAL);
      }
    }
    ::close(fd);
    return status;
  }
  std::string_view bytes() const {
    return data_ ? std::string_view(static_cast<const char*>(data_), size_) : std::string_view();
  }

 private:
  void* data_ = nullptr;
  size_t size_ = 0;
};

// Runs argv[0] (looked up on PATH) in `dir` with `input` on its stdin; its stdout
// into *out. Returns the exit status (-1: killed), or an error when it cannot start
// (ENOENT: not installed); *err gets the first line it wrote on stderr.
Result<int> RunIn(const std::string& dir, std::vector<std::string> args, const std::string& input,
                  std::string* out, std::string* err) {
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  std::FILE* in = std::tmpfile();
  std::FILE* errors = std::tmpfile();
  int pipe_fds[2] = {-1, -1};
  auto close_all = [&] {
    if (in) std::fclose(in);
    if (errors) std::fclose(errors);
    if (pipe_fds[0] >= 0) ::close(pipe_fds[0]);
    if (pipe_fds[1] >= 0) ::close(pipe_fds[1]);
  };
  if (!in || !errors || ::pipe2(pipe_fds, O_CLOEXEC) != 0 ||
      std::fwrite(input.data(), 1, input.size(), in) != input.size() || std::fflush(in) != 0) {
    Status st = Status::IOError(Errno("cannot run " + args[0]));
    close_all();
    return st;
  }
  std::rewind(in);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, ::fileno(in), STDIN_FILENO);
  posix_spawn_file_actions_adddup2(&actions, pipe_fds[1], STDOUT_FILENO);
  posix_spawn_file_actions_adddup2(&actions, ::fileno(errors), STDERR_FILENO);
  posix_spawn_file_actions_addchdir_np(&actions, dir.c_str());
  pid_t pid = 0;
  int rc = ::posix_spawnp(&pid, argv[0], &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  ::close(pipe_fds[1]);
  pipe_fds[1] = -1;
  if (rc != 0) {
    close_all();
    if (rc == ENOENT) return Status::NotFound(args[0] + " is not installed");
    return Status::IOError("cannot run " + args[0] + ": " + std::strerror(rc));
  }
  out->clear();
  char buf[1 << 16];
  for (;;) {
    ssize_t n = ::read(pipe_fds[0], buf, sizeof buf);
    if (n == 0 || (n < 0 && errno != EINTR)) break;
    if (n > 0) out->append(buf, static_cast<size_t>(n));
  }
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  std::rewind(errors);
  char line[512];
  err->clear();
  if (std::fgets(line, sizeof line, errors)) err->assign(line);
  while (!err->empty() && (err->back() == '\n' || err->back() == '\r')) err->pop_back();
  close_all();
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

// The files git sees in `dir` (tracked, and untracked ones it does not ignore), one
// per line, relative to `dir`; nullopt when `dir` is not in a git work tree or git
// is not installed.
std::optional<std::string> GitFiles(const std::string& dir) {
  std::string out, err;
  auto rc = RunIn(dir, {"git", "ls-files", "--cached", "--others", "--exclude-standard"}, "",
                  &out, &err);
  if (!rc.ok() || *rc != 0) return std::nullopt;
  return out;
}

}  // namespace

Result<std::string> RunCtags(const std::string& dir) {
  struct stat st {};
  if (::stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
    return Status::NotFound(dir + ": no such directory");
  }
  std::vector<std::string> args = CtagsCommand();
  std::string input;
  if (std::optional<std::string> files = GitFiles(dir)) {
    // In a git work tree, what git sees: never build trees or ignored files.
    input = std::move(*files);
    args.erase(std::remove(args.begin(), args.end(), "-R"), args.end());
    args.back() = "-L";  // "." (the tree) becomes "-L -": the list on stdin
    args.push_back("-");
  }
  std::string out, err;
  auto rc = RunIn(dir, args, input, &out, &err);
  if (!rc.ok()) {
    if (rc.status().IsNotFound()) {
      return Status::NotFound(
          "universal-ctags is not installed (amem index DIR runs it): apt-get install "
          "universal-ctags, or give an index with --scip FILE or --ctags FILE");
    }
    return rc.status();
  }
  if (*rc != 0) {
    return Status::IOError(
        "ctags failed in " + dir +
        (*rc > 0 ? " (exit " + std::to_string(*rc) + ")" : " (killed)") +
        (err.empty() ? "" : ": " + err) +
        "; amem needs universal-ctags with JSON output (apt-get install universal-ctags)");
  }
  return out;
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
  doc["digests"] = r.digests;
  doc["orphans"] = std::move(orphans);
  return doc;
}

Result<IndexReport> RunIndex(Store& store, const IndexRequest& request) {
  uint64_t registry_revision = 0;
  AMEM_ASSIGN_OR_RETURN(registry, ReadRegistry(store, &registry_revision));
  CodeIndex index;
  MappedFile file;
  switch (request.source) {
    case IndexRequest::Source::kScip: {
      AMEM_RETURN_IF_ERROR(file.Open(request.path));
      ScipOptions options;
      if (!request.options.full) {
        options.skip_document = [&registry](std::string_view path, uint64_t digest) {
          auto it = registry.find(path);
          return it != registry.end() && it->second.indexer == "scip" && it->second.digest == digest;
        };
      }
      auto read = ReadScip(file.bytes(), options);
      if (!read.ok()) return read.status().WithContext(request.path);
      index = std::move(read.value());
      break;
    }
    case IndexRequest::Source::kCtags: {
      AMEM_RETURN_IF_ERROR(file.Open(request.path));
      auto read = ReadCtags(file.bytes(), CtagsOptions{.root = request.root});
      if (!read.ok()) return read.status().WithContext(request.path);
      index = std::move(read.value());
      break;
    }
    case IndexRequest::Source::kDirectory: {
      auto ran = RunCtags(request.path);
      if (!ran.ok()) return ran.status();
      auto read = ReadCtags(*ran, CtagsOptions{.root = request.path});
      if (!read.ok()) return read.status().WithContext("ctags output for " + request.path);
      index = std::move(read.value());
      break;
    }
  }
  return IndexCode(store, index, registry, registry_revision, request.options);
}

}  // namespace amem::index
