// `amem index [DIR] | --scip FILE | --ctags FILE`: a code index in, the code graph
// out, in one transaction (tools/index/indexer.h, docs/CODE.md).
#include <sys/stat.h>

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "common/huge_pages.h"
#include "tools/cli/command.h"
#include "tools/index/indexer.h"

namespace amem::cli {

namespace {

struct IndexArgs {
  std::string dir;
  std::string scip, ctags, root;
  std::vector<std::string> tests;
  bool full = false;
  WriteFlags write;
};

Status RunIndexCommand(Context& ctx, const IndexArgs& a) {
  int sources = !a.dir.empty() + !a.scip.empty() + !a.ctags.empty();
  if (sources > 1) {
    return Status::InvalidArgument("give one of DIR, --scip FILE and --ctags FILE");
  }
  if (!a.root.empty() && a.ctags.empty()) {
    return Status::InvalidArgument("--root is for --ctags FILE (DIR is its own root)");
  }
  for (const std::string& glob : a.tests) {
    if (glob.empty()) return Status::InvalidArgument("--tests: empty pattern");
  }
  index::IndexRequest request;
  if (!a.scip.empty()) {
    request.source = index::IndexRequest::Source::kScip;
    request.path = a.scip;
  } else if (!a.ctags.empty()) {
    request.source = index::IndexRequest::Source::kCtags;
    request.path = a.ctags;
    request.root = a.root;
  } else {
    request.source = index::IndexRequest::Source::kDirectory;
    request.path = a.dir.empty() ? "." : a.dir;
  }
  request.options.test_globs = a.tests;
  request.options.full = a.full;
  request.options.write = a.write.options();
  Result<Store*> store = ctx.OpenStore(/*bulk=*/true);
  if (!store.ok()) return store.status();
  // A large index makes millions of small allocations (about 15 bytes of heap per
  // byte of SCIP): this process is short-lived, so it may keep a heap of huge pages.
  struct stat st {};
  if (request.source != index::IndexRequest::Source::kDirectory &&
      ::stat(request.path.c_str(), &st) == 0 && st.st_size > (16 << 20)) {
    AdviseHugeHeap(std::min<size_t>(size_t{16} * static_cast<size_t>(st.st_size), size_t{3} << 29));
  }
  Result<index::IndexReport> report = index::RunIndex(**store, request);
  if (!report.ok()) return report.status();
  const index::IndexReport& r = *report;
  if (r.nodes_deleted > 0) WarnIfTombstonesAccumulated(**store);
  if (ctx.json()) {
    ctx.SetJsonOutput(index::IndexReportJson(r));
    return Status::OK();
  }
  std::string& out = ctx.Out();
  out += "indexed " + std::to_string(r.documents) + " files: " + std::to_string(r.added) +
         " added, " + std::to_string(r.changed) + " changed, " + std::to_string(r.removed) +
         " removed, " + std::to_string(r.unchanged) + " unchanged\n";
  if (r.written) {
    out += "wrote rev " + std::to_string(r.revision) + ": " + std::to_string(r.nodes_put) +
           " nodes and " + std::to_string(r.edges_put) + " edges put, " +
           std::to_string(r.nodes_deleted) + " nodes and " + std::to_string(r.edges_deleted) +
           " edges deleted, " + std::to_string(r.digests) + " file digests recorded\n";
  } else {
    out += "nothing to write: the store is at rev " + std::to_string(r.revision) + "\n";
  }
  if (!r.orphans.empty()) {
    out += std::to_string(r.orphans.size()) +
           " memories are linked to code this index deleted (re-read them):\n";
    for (const index::Orphan& o : r.orphans) {
      out += "  " + (o.from_memory ? o.memory + " --" + o.rel + "--> " + o.code
                                   : o.code + " --" + o.rel + "--> " + o.memory) +
             "\n";
    }
  }
  return Status::OK();
}

}  // namespace

void AddIndexCommands(CLI::App& app, Context& ctx) {
  auto a = std::make_shared<IndexArgs>();
  CLI::App* cmd = ctx.AddCommand(
      app, "index",
      "Index code into the store: files, symbols and their calls, references, tests "
      "(docs/CODE.md). Re-indexing rewrites only the files that changed.",
      "amem index                      # runs universal-ctags on the current directory\n"
      "  amem index src/ --tests 'src/**/*_test.cc'\n"
      "  amem index --scip index.scip     # from scip-typescript, scip-clang, rust-analyzer...\n"
      "  ctags --output-format=json --fields=+neKSZl -R . > tags.json && amem index --ctags "
      "tags.json --root .\n"
      "Then: git diff -U0 | amem impact --diff -");
  PathArgument(cmd->add_option("DIR", a->dir,
                               "Directory to run universal-ctags in (default: the current "
                               "directory)"));
  PathArgument(cmd->add_option("--scip", a->scip, "A SCIP index file to read instead"))
      ->type_name("FILE");
  PathArgument(cmd->add_option("--ctags", a->ctags,
                               "JSON Lines from ctags --output-format=json to read instead"))
      ->type_name("FILE");
  PathArgument(cmd->add_option("--root", a->root,
                               "With --ctags: the directory its paths are relative to (files "
                               "are read for their digests and references)"))
      ->type_name("DIR");
  cmd->add_option("--tests", a->tests,
                  "Glob of test files (repeatable; replaces the defaults: tests/**, **/*_test.*, "
                  "**/*.test.*, ... in docs/CODE.md)")
      ->type_name("GLOB");
  cmd->add_flag("--full", a->full,
                "Read every file of the index again, even those whose digest is unchanged");
  AddWriteFlags(cmd, &a->write, /*with_scope=*/false);
  ctx.SetAction(cmd, [&ctx, a] { return RunIndexCommand(ctx, *a); });
}

}  // namespace amem::cli
