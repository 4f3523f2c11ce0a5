#include "tools/mcp/code_tools.h"

#include <string>
#include <vector>

#include "tools/index/indexer.h"
#include "tools/mcp/schema.h"

namespace amem::mcp {

namespace {

Json PathArg(std::string_view description) {
  return Json{{"type", "string"}, {"minLength", 1}, {"maxLength", 4096},
              {"description", description}};
}

}  // namespace

void AddCodeTools(ToolRegistry* registry, ToolContext* ctx) {
  Tool t;
  t.name = "index_code";
  t.title = "Index a code base";
  t.description =
      "Index code into memory: files, symbols, calls, references, tests. Give exactly one "
      "of dir (runs universal-ctags there), scip (a SCIP index file) or ctags (ctags JSON "
      "output). Re-indexing rewrites only changed files and lists memories whose code is "
      "gone. Then ask impact with a diff before committing.";
  Json props = {
      {"dir", PathArg("Directory to index with universal-ctags.")},
      {"scip", PathArg("Path of a SCIP index (scip-typescript, scip-clang, ...).")},
      {"ctags", PathArg("Path of `ctags --output-format=json` output.")},
      {"root", PathArg("With ctags: the directory its paths are relative to.")},
      {"tests", ArrayOf(PathArg("A glob."), "Globs of test files; replace the defaults.")},
      {"full", {{"type", "boolean"}, {"description", "Re-read files whose digest is unchanged."}}}};
  t.input_schema = ObjectSchema(Merge(props, WriteProperties()));
  t.idempotent = true;
  Store* store = ctx->store;
  t.handler = [store](const Json& args) {
    if (store == nullptr) return ToolError("index_code: this server has no store");
    int sources = HasArg(args, "dir") + HasArg(args, "scip") + HasArg(args, "ctags");
    if (sources != 1) return ToolError("index_code: give exactly one of dir, scip and ctags");
    if (HasArg(args, "root") && !HasArg(args, "ctags")) {
      return ToolError("index_code: root goes with ctags");
    }
    index::IndexRequest request;
    if (HasArg(args, "scip")) {
      request.source = index::IndexRequest::Source::kScip;
      request.path = ArgString(args, "scip");
    } else if (HasArg(args, "ctags")) {
      request.source = index::IndexRequest::Source::kCtags;
      request.path = ArgString(args, "ctags");
      request.root = ArgString(args, "root");
    } else {
      request.source = index::IndexRequest::Source::kDirectory;
      request.path = ArgString(args, "dir");
    }
    if (HasArg(args, "tests")) {
      for (const Json& g : args["tests"]) request.options.test_globs.push_back(g.get<std::string>());
    }
    request.options.full = ArgBool(args, "full", false);
    request.options.write = WriteOptionsFromArgs(args);
    auto report = index::RunIndex(*store, request);
    if (!report.ok()) return ToolErrorFromStatus("index_code", report.status());
    ToolResult r;
    r.structured = index::IndexReportJson(*report);
    // Bounded like every answer: the orphans are the only list that can grow.
    if (ResultCost(r.structured) > kMaxResultBytes) {
      size_t total = r.structured["orphans"].size();
      ShrinkToFit(&r.structured, kMaxResultBytes);
      r.structured["orphans_total"] = total;
    }
    return r;
  };
  registry->Add(std::move(t));
}

}  // namespace amem::mcp
