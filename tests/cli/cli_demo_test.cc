// The demo (tools/demo_run.sh, run by tools/demo.sh and shown in README.md) prints
// exactly tests/data/demo/expected.txt: its output is deterministic.
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
  // To update after an intended change: bash tools/demo_run.sh build/amem in an
  // empty directory, redirected to tests/data/demo/expected.txt.
  CHECK(r.out == ReadFile(root + "/tests/data/demo/expected.txt"));
}

}  // namespace
}  // namespace amem::testing
