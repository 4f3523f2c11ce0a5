// The MCP query tools against the second audit (issue 41): export_snapshot paths
// with a NUL or another control character, and query text over the cap.
#include <catch2/catch.hpp>

#include <filesystem>
#include <string>

#include "tests/mcp/tool_harness.h"
#include "tools/io/query_table.h"

using namespace amem;
using namespace amem::mcp;
using amem::mcp::testing::Harness;

namespace {

std::vector<std::string> Names(const std::string& dir) {
  std::vector<std::string> out;
  for (const auto& e : std::filesystem::recursive_directory_iterator(dir)) {
    out.push_back(e.path().string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

void PopulatePaths(Harness& h) {
  h.Ok("create_entities",
       {{"entities", Json::array({{{"name", "cache"},
                                   {"entityType", "fact"},
                                   {"observations", Json::array({"the cache uses lmdb"})}}})}});
}

}  // namespace

TEST_CASE("export_snapshot refuses NUL and control characters before any other check",
          "[mcp][query-tools][hardening]") {
  Harness h;
  PopulatePaths(h);
  const std::string root = h.ctx.export_dir;
  std::filesystem::create_directories(root + "/.git/hooks");
  const std::vector<std::string> before = Names(root);
  // The audit's paths: the checks saw ".amem", the system calls stopped at the NUL.
  for (const std::string& path :
       {std::string(".npmrc\0.amem", 13), std::string(".git/hooks/pre-commit\0.amem", 27),
        std::string("out\n.amem"), std::string("a\x1b[2J.amem"), std::string("a\xc2\x9b.amem"),
        // Refused for the character even where another check would also refuse.
        std::string("../x\x01.amem"), std::string("/abs\x7f.amem")}) {
    const std::string err =
        h.Error("export_snapshot", {{"path", path}, {"overwrite", true}});
    INFO(err);
    CHECK(err.find("path: the path holds a control character") != std::string::npos);
  }
  CHECK(Names(root) == before);
  CHECK_FALSE(std::filesystem::exists(root + "/.npmrc"));
  CHECK_FALSE(std::filesystem::exists(root + "/.git/hooks/pre-commit"));
  h.Ok("export_snapshot", {{"path", "fine.amem"}});  // an ordinary path still works
}

TEST_CASE("text arguments over the cap are refused, and 100K words never reach the search",
          "[mcp][query-tools][hardening]") {
  Harness h;
  PopulatePaths(h);
  std::string words;
  for (int i = 0; i < 100000; ++i) words += "w" + std::to_string(i) + " ";
  for (const char* tool : {"text_search", "hybrid_search"}) {
    const std::string err = h.Error(tool, {{"query", words}});
    INFO(err);
    CHECK(err.find("at most " + std::to_string(io::kMaxTextChars) + " characters") !=
          std::string::npos);
  }
  CHECK(h.Error("similar", {{"text", words}}).find("at most") != std::string::npos);
  CHECK(h.Error("context", {{"question", words}}).find("at most") != std::string::npos);
  // Just under the cap is answered.
  std::string under;
  for (int i = 0; under.size() + 12 < io::kMaxTextChars; ++i) under += "w" + std::to_string(i) + " ";
  under += "lmdb";
  Json r = h.Ok("text_search", {{"query", under}});
  CHECK(r["results"].size() == 1);
  // Every text parameter of the 16 tools carries its cap in the schema.
  for (const io::QueryDef& def : io::Queries()) {
    for (const io::Param& p : def.params) {
      if (p.type != io::ParamType::kString || !p.choices.empty() ||
          p.scope == io::ParamScope::kCliOnly) {
        continue;
      }
      const Tool* t = h.registry.Find(def.tool);
      REQUIRE(t != nullptr);
      INFO(def.tool << "." << p.name);
      CHECK(t->input_schema["properties"][p.name]["maxLength"] == io::MaxTextChars(p));
    }
  }
}
