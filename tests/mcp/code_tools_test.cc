// The MCP tool index_code (tools/mcp/code_tools.h): `amem index` for an agent, on the
// C++ fixture through the real universal-ctags; bad arguments are tool errors that
// write nothing.
#include <catch2/catch.hpp>

#include <filesystem>
#include <string>

#include "tests/mcp/tool_harness.h"
#include "tests/test_paths.h"

namespace amem::mcp::testing {
namespace {

TEST_CASE("index_code indexes a directory, re-indexes nothing, refuses bad input",
          "[mcp][index]") {
  Harness h;
  const std::string root = h.dir / "cpp";
  std::filesystem::copy(std::string(AMEM_SOURCE_DIR) + "/tests/data/code/cpp", root,
                        std::filesystem::copy_options::recursive);
  Json r = h.Ok("index_code", {{"dir", root}});
  CHECK(r["written"] == true);
  CHECK(r["files"]["indexed"] == 9);
  CHECK(r["files"]["added"] == 9);
  CHECK(r["digests"] == 9);
  const uint64_t rev = r["rev"];
  CHECK(h.store->GetEdge("symbol:src/circle.cc#geo::Circle::Area", "calls",
                         "symbol:src/math_util.cc#geo::detail::Squared")
            .ok());
  r = h.Ok("index_code", {{"dir", root}});
  CHECK(r["written"] == false);
  CHECK(r["files"]["unchanged"] == 9);

  CHECK(h.Error("index_code", Json::object()).find("exactly one of dir, scip and ctags") !=
        std::string::npos);
  CHECK(h.Error("index_code", {{"dir", root}, {"scip", root}}).find("exactly one") !=
        std::string::npos);
  CHECK(h.Error("index_code", {{"dir", root}, {"root", root}}).find("root goes with ctags") !=
        std::string::npos);
  CHECK(h.Error("index_code", {{"scip", h.dir / "missing.scip"}}).find("no such file") !=
        std::string::npos);
  CHECK(h.Error("index_code", {{"dir", root}, {"full", "yes"}}).find("full") !=
        std::string::npos);
  CHECK(*h.store->revision() == rev);
}

}  // namespace
}  // namespace amem::mcp::testing
