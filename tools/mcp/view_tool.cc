#include "tools/mcp/view_tool.h"

#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "common/files.h"
#include "snapshot/live.h"
#include "snapshot/reader.h"
#include "tools/io/query_table.h"
#include "tools/mcp/file_target.h"
#include "tools/mcp/schema.h"
#include "tools/view/view.h"

namespace amem::mcp {

namespace {

namespace fs = std::filesystem;

// The file name ending each format's file must have.
const char* Extension(view::Format format) {
  switch (format) {
    case view::Format::kHtml: return ".html";
    case view::Format::kDot: return ".dot";
    case view::Format::kMermaid: return ".mmd";
    case view::Format::kGraphml: return ".graphml";
  }
  return ".dot";
}

// Whether the file at `path` is a view amem wrote (its header names "amem view"
// near the top): the only kind of file `overwrite` replaces.
bool IsView(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::string head(4096, '\0');
  in.read(head.data(), static_cast<std::streamsize>(head.size()));
  head.resize(static_cast<size_t>(in.gcount()));
  return head.find("amem view") != std::string::npos;
}

// The view of one query: its tool's checked arguments answered on the store's
// view (or ctx->reader), drawn.
Result<view::Subgraph> Draw(const ToolContext* ctx, const io::QueryDef& def, const Json& args) {
  AMEM_RETURN_IF_ERROR(io::CheckGiven(def, args, io::FrontEnd::kMcp));
  view::Subgraph g;
  AMEM_RETURN_IF_ERROR(AskOnSnapshot(ctx, "view", args, [&](const SnapshotRead& read, bool*) {
    const std::string source =
        read.revision ? view::RevisionSource(*ctx->store, *read.revision) : "the server's snapshot";
    io::QueryCall call{.reader = *read.reader,
                       .args = args,
                       .def = def,
                       .front_end = io::FrontEnd::kMcp,
                       .store = ctx->reader == nullptr ? ctx->store : nullptr,
                       .latest = read.latest};
    AMEM_ASSIGN_OR_RETURN(answer, def.run(call));
    AMEM_RETURN_IF_ERROR(read.reader->ContentStatus());
    AMEM_ASSIGN_OR_RETURN(drawn,
                          view::FromAnswer(*read.reader, answer.doc, {def.command, args.dump(), source}));
    if (read.revision) {
      AMEM_RETURN_IF_ERROR(view::AddRevisions(*ctx->store, *read.revision, &drawn));
    }
    g = std::move(drawn);
    return Status::OK();
  }));
  return g;
}

}  // namespace

void AddViewTool(ToolRegistry* registry, ToolContext* ctx) {
  // The queries a view draws (those that only read), by tool name, with their
  // schemas: `arguments` is checked against the query's own.
  auto schemas = std::make_shared<std::map<std::string, std::pair<const io::QueryDef*, Json>>>();
  std::vector<std::string> names;
  for (const io::QueryDef& def : io::Queries()) {
    const Tool* tool = registry->Find(def.tool);
    if (def.writes || tool == nullptr) continue;
    (*schemas)[def.tool] = {&def, tool->input_schema};
    names.push_back(def.tool);
  }
  Tool t;
  t.name = "view";
  t.title = "Draw a query's answer as a graph";
  t.description =
      "Draw a query tool's answer as a graph (its nodes and the edges among them): Mermaid "
      "text by default, or DOT/GraphML. With path (relative to the export directory, "
      "extension .mmd/.dot/.graphml/.html), writes the file; html is one offline page.";
  t.input_schema = ObjectSchema(
      Json{{"query", Json{{"enum", names},
                          {"description", "The query tool whose answer to draw."}}},
           {"arguments", Json{{"type", "object"},
                              {"description", "That tool's arguments."}}},
           {"format", Json{{"enum", Json::array({"mermaid", "html", "dot", "graphml"})},
                           {"description", "Default: mermaid, or html for a .html path."}}},
           {"path", Json{{"type", "string"},
                         {"minLength", 1},
                         {"description", "Write the view here."}}},
           {"overwrite", Json{{"type", "boolean"},
                              {"description", "Replace an earlier view at path."}}}},
      {"query"});
  t.read_only = false;
  t.destructive = true;  // with overwrite: true it replaces a file
  t.idempotent = true;
  t.handler = [ctx, schemas](const Json& args) {
    const auto& [def, schema] = schemas->at(ArgString(args, "query"));
    const Json arguments = args.contains("arguments") ? args["arguments"] : Json::object();
    if (Status s = ValidateAgainstSchema(schema, arguments); !s.ok()) {
      return ToolErrorFromStatus("view", Status::InvalidArgument("arguments: " + s.message()));
    }
    const std::string path = ArgString(args, "path");
    view::Format format = path.empty() ? view::Format::kMermaid : view::DefaultFormat(path);
    if (HasArg(args, "format")) format = *view::ParseFormat(ArgString(args, "format"));
    if (format == view::Format::kHtml && path.empty()) {
      return ToolError("view: an html view is a file: give path (e.g. views/impact.html), or "
                       "choose format mermaid to have the text returned");
    }
    Result<fs::path> target = fs::path();
    if (!path.empty()) {
      target = FileTarget(ctx->export_dir, ctx->store ? ctx->store->path() : std::string(), path,
                          ArgBool(args, "overwrite", false),
                          {Extension(format), "a view amem wrote", IsView});
      if (!target.ok()) return ToolErrorFromStatus("view", target.status());
    }
    Result<view::Subgraph> g = Draw(ctx, *def, arguments);
    if (!g.ok()) return ToolErrorFromStatus("view", g.status());
    Result<std::string> bytes = view::Write(*g, format);
    if (!bytes.ok()) return ToolErrorFromStatus("view", bytes.status());
    ToolResult r;
    r.structured = Json{{"query", def->tool},
                        {"format", view::FormatName(format)},
                        {"nodes", g->nodes.size()},
                        {"edges", g->edges.size()},
                        {"source", g->header.source}};
    if (path.empty()) {
      if (bytes->size() > AnswerBytes()) {
        return ToolError("view: the " + std::string(view::FormatName(format)) + " text is " +
                         std::to_string(bytes->size()) + " bytes, more than this answer's " +
                         std::to_string(AnswerBytes()) + " (max_bytes, at most " +
                         std::to_string(kMaxAnswerBytes) +
                         "); give path to write it to a file, or narrow the query (depth, limit)");
      }
      r.text = std::move(*bytes);
      return r;
    }
    AtomicFile file;
    Status s = file.Open(target->string());
    if (s.ok()) s = file.Append(*bytes);
    if (s.ok()) s = file.Commit(Durability::kCache);
    if (!s.ok()) return ToolErrorFromStatus("view", s);
    r.structured["path"] = target->string();
    r.structured["bytes"] = bytes->size();
    return r;
  };
  registry->Add(std::move(t));
}

}  // namespace amem::mcp
