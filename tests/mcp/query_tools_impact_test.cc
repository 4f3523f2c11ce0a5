// The MCP `impact` tool with `diff` (tools/mcp/query_tools.h, made from the query
// table): the patch text as the alternative to `node`, exactly one of them; the
// answer's four lists; as_of; a bad diff as a tool error naming its line; and the
// `gaps` tool's orphaned category.
#include <catch2/catch.hpp>

#include <memory>
#include <string>
#include <vector>

#include "store/store.h"
#include "tests/store/store_test_util.h"  // TempDir
#include "tools/mcp/memory_tools.h"
#include "tools/mcp/query_tools.h"
#include "tools/mcp/server.h"

using namespace amem;
using namespace amem::mcp;

namespace {

struct Harness {
  Harness() {
    auto s = Store::Open(dir / "store");
    REQUIRE(s.ok());
    store = std::move(*s);
    ctx.store = store.get();
    registry = BuildRegistry(&ctx);
    server = std::make_unique<Server>(&registry);
  }
  Json Call(const std::string& tool, const Json& args) {
    Json req{{"jsonrpc", "2.0"}, {"id", ++id}, {"method", "tools/call"},
             {"params", {{"name", tool}, {"arguments", args}}}};
    auto line = server->HandleLine(DumpLine(req));
    REQUIRE(line);
    Json r = Json::parse(*line);
    REQUIRE(r.contains("result"));
    return r["result"];
  }
  Json Ok(const std::string& tool, const Json& args) {
    Json r = Call(tool, args);
    INFO(tool << " " << DumpLine(args) << " -> " << DumpLine(r));
    REQUIRE(r["isError"] == false);
    return r["structuredContent"];
  }
  std::string Error(const std::string& tool, const Json& args) {
    Json r = Call(tool, args);
    INFO(tool << " " << DumpLine(args) << " -> " << DumpLine(r));
    REQUIRE(r["isError"] == true);
    return r["content"][0]["text"].get<std::string>();
  }
  amem::testing::TempDir dir;
  std::unique_ptr<Store> store;
  ToolContext ctx;
  ToolRegistry registry;
  std::unique_ptr<Server> server;
  int id = 0;
};

Json Symbol(const std::string& file, const std::string& name, const std::string& lines) {
  return Json{{"op", "node"},
              {"key", "symbol:" + file + "#" + name},
              {"type", "symbol"},
              {"content", "function " + name},
              {"meta", {{"file", file}, {"lines", lines}, {"indexer", "ctags"}}}};
}

Json Edge(const std::string& src, const std::string& rel, const std::string& dst) {
  return Json{{"op", "edge"}, {"src", src}, {"rel", rel}, {"dst", dst}};
}

std::vector<std::string> Keys(const Json& rows) {
  std::vector<std::string> out;
  for (const Json& row : rows) out.push_back(row["key"].get<std::string>());
  return out;
}

const char* kPatch =
    "diff --git a/src/parse.cc b/src/parse.cc\n"
    "--- a/src/parse.cc\n"
    "+++ b/src/parse.cc\n"
    "@@ -12 +12 @@\n"
    "-  int b = new int;\n"
    "+  int b = 0;\n";

TEST_CASE("mcp impact: diff instead of node", "[mcp][query-tools][code-impact]") {
  Harness h;
  const Json ops = Json::array(
      {Json{{"op", "node"}, {"key", "file:src/parse.cc"}, {"type", "file"}, {"content", "x"}},
       Symbol("src/parse.cc", "Parse", "10-20"),
       Edge("file:src/parse.cc", "defines", "symbol:src/parse.cc#Parse"),
       Symbol("src/main.cc", "main", "1-5"),
       Edge("symbol:src/main.cc#main", "calls", "symbol:src/parse.cc#Parse"),
       Json{{"op", "node"}, {"key", "constraint:no-alloc"}, {"type", "constraint"},
            {"content", "Parse must not allocate"}},
       Edge("constraint:no-alloc", "constrains", "symbol:src/parse.cc#Parse")});
  const uint64_t rev1 = h.Ok("write_batch", {{"operations", ops}})["revision"].get<uint64_t>();
  h.Ok("write_batch",
       {{"operations", Json::array({Symbol("src/cli.cc", "Main", "1-3"),
                                    Edge("symbol:src/cli.cc#Main", "calls",
                                         "symbol:src/parse.cc#Parse")})}});

  Json a = h.Ok("impact", {{"diff", kPatch}});
  CHECK(a["mode"] == "diff");
  CHECK(Keys(a["changed"]) == std::vector<std::string>{"symbol:src/parse.cc#Parse"});
  CHECK(Keys(a["affected"]) ==
        std::vector<std::string>{"symbol:src/cli.cc#Main", "symbol:src/main.cc#main"});
  CHECK(a["tests"].empty());
  CHECK(Keys(a["memories"]) == std::vector<std::string>{"constraint:no-alloc"});
  CHECK(a["memories"][0]["direction"] == "out");
  a = h.Ok("impact", {{"diff", kPatch}, {"as_of", rev1}});
  CHECK(Keys(a["affected"]) == std::vector<std::string>{"symbol:src/main.cc#main"});
  a = h.Ok("impact", {{"diff", kPatch}, {"limit", 1}});
  CHECK(a["affected"].size() == 1);
  CHECK(a["truncated"] == true);
  CHECK(h.Ok("impact", {{"diff", ""}})["changed"].empty());
  // The node form is unchanged.
  CHECK(h.Ok("impact", {{"node", "constraint:no-alloc"}})["query"] == "impact");

  CHECK_THAT(h.Error("impact", {{"node", "constraint:no-alloc"}, {"diff", kPatch}}),
             Catch::Contains("give either \"node\" or \"diff\" (exactly one)"));
  CHECK_THAT(h.Error("impact", Json::object()),
             Catch::Contains("give either \"node\" or \"diff\" (exactly one)"));
  CHECK_THAT(h.Error("impact", {{"diff", "--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n+c\n"}}),
             Catch::Contains("\"diff\": line 6: more lines than the hunk at line 3"));
  CHECK_THAT(h.Error("impact", {{"diff", kPatch}, {"budget_tokens", 3}}),
             Catch::Contains("a budget of 3 tokens"));

  // The schema offers both, neither required.
  const Tool* tool = h.registry.Find("impact");
  REQUIRE(tool != nullptr);
  CHECK(tool->input_schema["properties"]["diff"]["type"] == "string");
  CHECK(tool->input_schema["properties"].contains("budget_tokens"));
  CHECK_FALSE(tool->input_schema.contains("required"));

  // A deleted symbol leaves the constraint orphaned.
  h.Ok("write_batch", {{"operations", Json::array({Json{
                                          {"op", "del_node"},
                                          {"key", "symbol:src/parse.cc#Parse"}}})}});
  Json g = h.Ok("gaps", {{"categories", {"orphaned"}}});
  CHECK(Keys(g["gaps"]) == std::vector<std::string>{"constraint:no-alloc"});
}

}  // namespace
