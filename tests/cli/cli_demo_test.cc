// The demo (tools/demo_run.sh, run by tools/demo.sh and shown in README.md) prints
// exactly tests/data/demo/expected.txt up to its code graph part, which depends on
// amem's source and is checked for what it must show.
#include <catch2/catch.hpp>

#include "tests/cli/amem_runner.h"
#include "tests/test_paths.h"

namespace amem::testing {
namespace {

TEST_CASE("the demo prints its golden output", "[tools][demo]") {
  TempDir dir;
  const std::string root = AMEM_SOURCE_DIR;
  RunResult r = RunProgram("/bin/bash", {root + "/tools/demo_run.sh", AMEM_BINARY}, "", {},
                           dir.path());
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(r.err.empty());
  // Up to the code graph, the output is the same on every machine. To update after
  // an intended change: bash tools/demo_run.sh build/amem in an empty directory,
  // the lines before "== The code graph" redirected to tests/data/demo/expected.txt.
  const size_t code = r.out.find("\n== The code graph");
  REQUIRE(code != std::string::npos);
  CHECK(r.out.substr(0, code) == ReadFile(root + "/tests/data/demo/expected.txt"));

  // The code graph of amem's own source depends on the source; what it must show:
  // the index, then impact --diff naming the changed function, a caller, and the
  // decision recorded against it.
  const std::string tail = r.out.substr(code);
  CHECK(tail.find("$ amem index <amem source>\nindexed ") != std::string::npos);
  CHECK(tail.find("  - symbol:common/hash.cc#amem::ParseHexId (symbol #") != std::string::npos);
  CHECK(tail.find("change=modified") != std::string::npos);
  CHECK(tail.find("relation=calls") != std::string::npos);
  CHECK(tail.find("memories (1):\n  - decision:hex-ids-are-16-digits (decision #0)") !=
        std::string::npos);
  // The demo ends by writing a view of that impact: one HTML page.
  CHECK(tail.find("$ amem view impact --diff change.diff --depth 1 --limit 5 --out impact.html\n"
                  "wrote impact.html (html, ") != std::string::npos);
  const std::string page = ReadFile(dir.path() + "/impact.html");
  CHECK(page.rfind("<!DOCTYPE html>", 0) == 0);
  CHECK(page.find("symbol:common/hash.cc#amem::ParseHexId") != std::string::npos);
}

}  // namespace
}  // namespace amem::testing
