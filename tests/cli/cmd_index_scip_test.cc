// Drives the real amem binary on the SCIP index that the real scip-typescript made
// of tests/data/code/ts (ctest index_scip_typescript writes it; this test runs as
// index_scip_typescript_graph after it, with AMEM_SCIP_TS_INDEX naming the file).
#include <catch2/catch.hpp>

#include <cstdlib>
#include <set>
#include <string>

#include "tests/cli/amem_runner.h"

namespace amem::testing {
namespace {

const std::string kPkg = "symbol:scip-typescript npm shapes-fixture 1.0.0 src/";

TEST_CASE("index: the code graph of scip-typescript's index", "[.][scip_ts]") {
  const char* path = std::getenv("AMEM_SCIP_TS_INDEX");
  REQUIRE(path != nullptr);
  const std::string index = path;
  TempStore s;
  RunResult r = s.Run({"index", "--scip", index, "--json"});
  RequireOk(r);
  CHECK(r.json()["files"]["indexed"] == 5);

  const std::string total_area = kPkg + "`total.ts`/totalArea().";
  const std::string test_total = kPkg + "`total.test.ts`/testTotalArea().";
  CHECK(Sources(s, total_area, "calls") == std::set<std::string>{test_total});
  CHECK(Sources(s, total_area, "tests") ==
        std::set<std::string>{test_total, "file:src/total.test.ts"});
  CHECK(Sources(s, kPkg + "`shape.ts`/Shape#", "implements") ==
        std::set<std::string>{kPkg + "`circle.ts`/Circle#", kPkg + "`square.ts`/Square#"});
  CHECK(Sources(s, kPkg + "`shape.ts`/Shape#area().", "overrides") ==
        std::set<std::string>{kPkg + "`circle.ts`/Circle#area().",
                              kPkg + "`square.ts`/Square#area()."});
  // A module symbol is its file: imports are file to file, and no node of its own.
  CHECK(Sources(s, "file:src/shape.ts", "imports") ==
        std::set<std::string>{"file:src/circle.ts", "file:src/square.ts", "file:src/total.ts"});
  CHECK(s.Run({"get-node", kPkg + "`shape.ts`/"}).exit_code == 3);
  auto node = s.Run({"get-node", total_area, "--json"}).json();
  CHECK(node["meta"]["kind"] == "function");
  CHECK(node["meta"]["file"] == "src/total.ts");
  CHECK(node["meta"]["lines"] == "4-10");
  CHECK(node["content"].get<std::string>().starts_with("function totalArea\n"));

  // Again: nothing to write. A truncated copy: refused, nothing written.
  const std::string stats = s.Stats();
  r = s.Run({"index", "--scip", index, "--json"});
  RequireOk(r);
  CHECK(r.json()["written"] == false);
  std::string bytes = ReadFile(index);
  REQUIRE(bytes.size() > 100);
  WriteFile(s.dir().Sub("cut.scip"), bytes.substr(0, bytes.size() - 7));
  RequireError(s.Run({"index", "--scip", s.dir().Sub("cut.scip")}), 4, "index");
  CHECK(s.Stats() == stats);
}

}  // namespace
}  // namespace amem::testing
