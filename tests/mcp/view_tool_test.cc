// The MCP tool `view` (tools/mcp/view_tool.cc): Mermaid text of a query's answer,
// the query's own arguments checked by its schema, and files written under
// export_snapshot's rules (inside the export directory, no link followed, no
// overwrite without overwrite, only a view replaced).
#include <catch2/catch.hpp>

#include <filesystem>
#include <string>

#include "tests/cli/amem_runner.h"  // ReadFile, WriteFile
#include "tests/mcp/tool_harness.h"

using namespace amem;
using namespace amem::mcp;
using amem::mcp::testing::Harness;

namespace {

void PopulateViewGraph(Harness& h) {
  h.Ok("put_memory", {{"key", "fact:root"}, {"type", "fact"}, {"content", "the root"}});
  h.Ok("put_memory", {{"key", "decision:\"x\"|<y>"}, {"type", "decision"}, {"content", "d"}});
  h.Ok("link", {{"src", "decision:\"x\"|<y>"}, {"rel", "caused_by"}, {"dst", "fact:root"}});
}

}  // namespace

TEST_CASE("view returns a query's answer as Mermaid text", "[mcp][view]") {
  Harness h;
  PopulateViewGraph(h);
  Json r = h.Call("view", {{"query", "impact"}, {"arguments", {{"node", "fact:root"}}}});
  REQUIRE(r["isError"] == false);
  const std::string text = r["content"][0]["text"];
  CHECK(text.rfind("---\ntitle: \"amem view impact ", 0) == 0);
  CHECK(text.find("flowchart LR\n") != std::string::npos);
  CHECK(text.find("[\"decision:#quot;x#quot;#124;#lt;y#gt;<br/>(decision)\"]") !=
        std::string::npos);
  CHECK(text.find(" ==>|\"caused_by 1\"| ") != std::string::npos);
  CHECK(r["structuredContent"]["nodes"] == 2);
  CHECK(r["structuredContent"]["edges"] == 1);
  CHECK(r["structuredContent"]["source"].get<std::string>().rfind("revision 3, committed ", 0) == 0);
  // as_of inside the arguments, as the query tool takes it: revision 1 has one node.
  r = h.Call("view", {{"query", "traverse"}, {"arguments", {{"node", "fact:root"}, {"as_of", 1}}},
                      {"format", "dot"}});
  REQUIRE(r["isError"] == false);
  CHECK(r["structuredContent"]["nodes"] == 1);
  CHECK(r["content"][0]["text"].get<std::string>().rfind("digraph amem {", 0) == 0);
}

TEST_CASE("view checks the query's arguments with that query's schema", "[mcp][view]") {
  Harness h;
  PopulateViewGraph(h);
  CHECK(h.Error("view", {{"query", "impact"}, {"arguments", {{"node", "fact:root"}, {"depth", "x"}}}})
            .find("arguments: depth: expected an integer") != std::string::npos);
  CHECK(h.Error("view", {{"query", "impact"}, {"arguments", {{"nod", "fact:root"}}}})
            .find("arguments: ") != std::string::npos);
  CHECK(h.Error("view", {{"query", "consolidate"}}).find("query") != std::string::npos);
  CHECK(h.Error("view", {{"query", "impact"}, {"arguments", {{"node", "fact:none"}}}})
            .find("fact:none") != std::string::npos);
  CHECK(h.Error("view", {{"query", "impact"}, {"arguments", {{"node", "fact:root"}}},
                         {"format", "html"}})
            .find("an html view is a file: give path") != std::string::npos);
}

TEST_CASE("view writes files only where export_snapshot may", "[mcp][view]") {
  Harness h;
  PopulateViewGraph(h);
  const std::string root = h.ctx.export_dir;
  const Json impact = {{"node", "fact:root"}};
  Json out = h.Ok("view", {{"query", "impact"}, {"arguments", impact}, {"path", "impact.html"}});
  CHECK(out["format"] == "html");
  const std::string page = amem::testing::ReadFile(root + "/impact.html");
  CHECK(page.rfind("<!DOCTYPE html>", 0) == 0);
  auto error = [&](const std::string& path, bool overwrite = false) {
    return h.Error("view", {{"query", "impact"}, {"arguments", impact}, {"path", path},
                            {"overwrite", overwrite}});
  };
  CHECK(error("impact.html").find("exists; pass overwrite: true") != std::string::npos);
  h.Ok("view", {{"query", "impact"}, {"arguments", impact}, {"path", "impact.html"},
                {"overwrite", true}});
  amem::testing::WriteFile(root + "/notes.html", "<p>mine</p>");
  CHECK(error("notes.html", true).find("is not a view amem wrote") != std::string::npos);
  CHECK(amem::testing::ReadFile(root + "/notes.html") == "<p>mine</p>");
  CHECK(error("../up.html").find("'..' is not allowed") != std::string::npos);
  CHECK(error("/tmp/abs.html").find("give a path relative") != std::string::npos);
  // Without format, the name says it.
  CHECK(h.Ok("view", {{"query", "impact"}, {"arguments", impact}, {"path", "v.mmd"}})["format"] ==
        "mermaid");
  CHECK(amem::testing::ReadFile(root + "/v.mmd").rfind("---\ntitle: \"amem view impact", 0) == 0);
  CHECK(error("store/x.html").find("inside the store directory") != std::string::npos);
  CHECK(error(std::string("a\nb.html")).find("control character") != std::string::npos);
  std::filesystem::create_directory_symlink("/tmp", root + "/out");
  CHECK(error("out/x.html").find("outside the export directory") != std::string::npos);
  std::filesystem::create_symlink("/etc/hostname", root + "/link.html");
  CHECK(error("link.html", true).find("symbolic link") != std::string::npos);
  CHECK(h.Error("view", {{"query", "impact"}, {"arguments", impact}, {"path", "v.dot"},
                         {"format", "mermaid"}})
            .find("must end in .mmd") != std::string::npos);
  CHECK_FALSE(std::filesystem::exists(root + "/v.dot"));
}
