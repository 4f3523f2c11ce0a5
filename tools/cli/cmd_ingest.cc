// `amem ingest FILE|-`: JSON Lines applied in one transaction (tools/io/ingest.h).
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "tools/cli/command.h"
#include "tools/cli/query_args.h"
#include "tools/io/ingest.h"

namespace amem::cli {

namespace {

struct IngestArgs {
  std::string file;
  WriteFlags write;
  bool no_compile = false;
};

Status RunIngest(Context& ctx, const IngestArgs& a) {
  // The store first: a missing store fails before a large file is read.
  Result<Store*> store = ctx.OpenStore(/*bulk=*/true);
  if (!store.ok()) return store.status();
  // The ingest streams its input and reads it again if the transaction must be
  // rerun (the map grew), so a pipe is first copied to an unnamed temporary file.
  int fd = a.file == "-" ? STDIN_FILENO : ::open(a.file.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return Status::IOError(a.file + ": " + std::strerror(errno));
  std::FILE* spool = nullptr;
  if (::lseek(fd, 0, SEEK_CUR) < 0) {
    spool = std::tmpfile();
    if (spool == nullptr) return Status::IOError(std::string("tmpfile: ") + std::strerror(errno));
    std::vector<char> buf(1 << 20);
    ssize_t n;
    while ((n = ::read(fd, buf.data(), buf.size())) != 0) {
      if (n < 0 && errno == EINTR) continue;
      if (n < 0 || std::fwrite(buf.data(), 1, static_cast<size_t>(n), spool) != size_t(n)) {
        std::fclose(spool);
        return Status::IOError(a.file + ": " + std::strerror(errno));
      }
    }
    std::fflush(spool);
    fd = ::fileno(spool);
  }
  struct stat st {};
  uint64_t size = ::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) ? st.st_size : 0;
  Result<io::IngestSummary> summary = io::IngestFile(*store, fd, size, a.write.options());
  if (spool != nullptr) {
    std::fclose(spool);
  } else if (fd != STDIN_FILENO) {
    ::close(fd);
  }
  if (!summary.ok()) return summary.status();
  // The bulk path for deletes too; the check is O(1).
  if (summary->ops > 0) WarnIfTombstonesAccumulated(**store);
  // The first query after a large ingest would export the store in the
  // foreground: the ingest does it now, as part of its work.
  if (summary->ops > 0 && !a.no_compile) CompileQueryView(**store, "amem ingest");
  if (ctx.json()) {
    Json doc;
    doc["rev"] = summary->rev;
    doc["ops"] = summary->ops;
    doc["lines"] = summary->lines;
    ctx.SetJsonOutput(doc);
  } else {
    ctx.Out() += "ingested " + std::to_string(summary->ops) + " operations from " +
                 std::to_string(summary->lines) + " lines at rev " +
                 std::to_string(summary->rev) + "\n";
  }
  return Status::OK();
}

}  // namespace

void AddIngestCommands(CLI::App& app, Context& ctx) {
  auto a = std::make_shared<IngestArgs>();
  CLI::App* cmd = ctx.AddCommand(
      app, "ingest",
      "Apply a JSON Lines file of operations in one transaction; a bad line rejects all.",
      "amem ingest run-1.jsonl --ts 1700000000 --run run-1\n"
      "  echo '{\"op\":\"node\",\"key\":\"file:a.cc\",\"type\":\"file\"}' | amem ingest -\n"
      "Lines (one JSON object each, at most 16 MiB; blank lines allowed):\n"
      "  {\"op\":\"node\",\"key\":K,\"type\":T,\"content\":S,\"meta\":{..},\"confidence\":F,"
      "\"vector\":[..]}\n"
      "  {\"op\":\"edge\",\"src\":K,\"rel\":R,\"dst\":K,\"weight\":F,\"payload\":JSON}\n"
      "  {\"op\":\"kv\",\"scope\":S,\"ns\":N,\"key\":K,\"value\":S}\n"
      "  {\"op\":\"del_node\",\"key\":K}   {\"op\":\"del_edge\",\"src\":K,\"rel\":R,\"dst\":K}\n"
      "  {\"op\":\"del_kv\",\"scope\":S,\"ns\":N,\"key\":K}   {\"op\":\"rel\",\"name\":NAME}\n"
      "Any line may carry \"ts\", \"run\", \"task\", \"scope\". Unknown ops or fields are errors.");
  PathArgument(cmd->add_option("FILE", a->file, "JSON Lines file, or - for stdin"))
      ->required();
  AddWriteFlags(cmd, &a->write, /*with_scope=*/true);
  cmd->add_flag("--no-compile", a->no_compile, kNoCompileHelp);
  ctx.SetAction(cmd, [&ctx, a] { return RunIngest(ctx, *a); });
}

}  // namespace amem::cli
