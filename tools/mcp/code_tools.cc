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
      "Index code (files, symbols, calls, tests) from one of dir (universal-ctags), scip or "
      "ctags JSON.";
  Json props = {
      {"dir", PathArg("Directory.")},
      {"scip", PathArg("SCIP index file.")},
      {"ctags", PathArg("ctags JSON output file.")},
      {"root", PathArg("Base of ctags paths.")},
      {"tests", ArrayOf(PathArg("A glob."), "Test file globs.")},
      {"full", {{"type", "boolean"}, {"description", "Re-read unchanged files."}}}};
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
    if (ResultCost(r.structured) > ResultBudget()) {
      size_t total = r.structured["orphans"].size();
      ShrinkToFit(&r.structured, ResultBudget());
      r.structured["orphans_total"] = total;
    }
    return r;
  };
  registry->Add(std::move(t));
}

}  // namespace amem::mcp
