// Drives the real amem binary: `amem index` on the C++ fixture through the real
// universal-ctags, re-indexing after edits, and what it refuses (docs/CODE.md).
#include <catch2/catch.hpp>

#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include "tests/cli/amem_runner.h"

namespace amem::testing {
namespace {

namespace fs = std::filesystem;

// A copy of tests/data/code/cpp to edit, and a store beside it.
struct Tree {
  TempStore s;
  std::string root = s.dir().Sub("cpp");
  Tree() {
    fs::copy(std::string(AMEM_SOURCE_DIR) + "/tests/data/code/cpp", root,
             fs::copy_options::recursive);
  }
  RunResult Index(std::vector<std::string> extra = {}) const {
    std::vector<std::string> args{"index", root};
    args.insert(args.end(), extra.begin(), extra.end());
    return s.Run(args);
  }
  std::string File(const std::string& rel) const { return root + "/" + rel; }
  // A memory of `type` linked to the code node `code` by `rel`.
  void Memory(const std::string& key, const std::string& type, const std::string& content,
              const std::string& rel, const std::string& code) const {
    RequireOk(s.Run({"put-node", key, "--type", type, "--content", content}));
    RequireOk(s.Run({"put-edge", key, rel, code}));
  }
};

uint64_t NodeRev(const TempStore& s, const std::string& key) {
  RunResult r = s.Run({"get-node", key, "--json"});
  return r.exit_code == 0 ? r.json()["rev"].get<uint64_t>() : 0;
}

const std::string kSquared = "symbol:src/math_util.cc#geo::detail::Squared";
const std::string kClampInt = "symbol:src/math_util.cc#geo::detail::Clamp";
const std::string kCircleArea = "symbol:src/circle.cc#geo::Circle::Area";
const std::string kSquareArea = "symbol:src/circle.cc#geo::Square::Area";
const std::string kSumAreas = "symbol:src/registry.cc#geo::Registry::SumAreas";

TEST_CASE("index: a C++ tree through universal-ctags", "[tools][cli][index]") {
  Tree t;
  RunResult r = t.Index({"--json"});
  RequireOk(r);
  auto j = r.json();
  CHECK(j["written"] == true);
  CHECK(j["files"]["indexed"] == 9);
  CHECK(j["files"]["added"] == 9);
  CHECK(j["orphans"].empty());
  const uint64_t rev = j["rev"];

  // Callers: the two Area() bodies call Squared; nothing else does.
  CHECK(Sources(t.s, kSquared, "calls") == std::set<std::string>{kCircleArea, kSquareArea});
  CHECK(Sources(t.s, kSquared, "defines") == std::set<std::string>{"file:src/math_util.cc"});
  // The test function that calls Clamp tests it.
  auto testers = Sources(t.s, kClampInt, "tests");
  REQUIRE(testers.size() == 1);
  CHECK(testers.begin()->starts_with("symbol:tests/geo_tests.cc#"));
  CHECK(testers.begin()->ends_with("::TestClampLimits"));
  // A symbol's node: kind, name, signature; its file and lines in meta.
  auto node = t.s.Run({"get-node", kSquared, "--json"}).json();
  CHECK(node["type"] == "symbol");
  CHECK(node["content"] == "function Squared\n(double x)");
  CHECK(node["meta"] == nlohmann::json::parse(
                            R"({"file":"src/math_util.cc","indexer":"ctags","kind":"function",)"
                            R"("lines":"16-18","name":"Squared"})"));

  // The same tree again: nothing is written, the revision stays.
  std::string stats = t.s.Stats();
  r = t.Index();
  RequireOk(r);
  CHECK(r.out ==
        "indexed 9 files: 0 added, 0 changed, 0 removed, 9 unchanged\n"
        "nothing to write: the store is at rev " + std::to_string(rev) + "\n");
  CHECK(t.s.Stats() == stats);
  RequireOk(t.Index({"--full"}));
  CHECK(t.s.Stats() == stats);
}

TEST_CASE("index: an edit, a rename and a deleted file rewrite only what changed",
          "[tools][cli][index]") {
  Tree t;
  RequireOk(t.Index());
  t.Memory("decision:squared-is-pure", "decision", "Squared stays a pure function",
           "decided_for", kSquared);
  t.Memory("constraint:sum-order", "constraint", "SumAreas adds in registration order",
           "constrains", kSumAreas);
  const uint64_t circle_area = NodeRev(t.s, kCircleArea);
  const uint64_t clamp = NodeRev(t.s, kClampInt);
  REQUIRE(circle_area > 0);

  SECTION("an edit inside one body removes exactly that call") {
    std::string text = ReadFile(t.File("src/circle.cc"));
    auto at = text.find("return detail::Squared(side_);");
    REQUIRE(at != std::string::npos);
    text.replace(at, 30, "return side_ * side_;         ");
    WriteFile(t.File("src/circle.cc"), text);
    RunResult r = t.Index({"--json"});
    RequireOk(r);
    auto j = r.json();
    CHECK(j["files"]["changed"] == 1);
    CHECK(j["files"]["unchanged"] == 8);
    CHECK(j["nodes"]["put"] == 0);
    CHECK(j["edges"]["put"] == 0);
    CHECK(j["edges"]["deleted"] == 1);
    CHECK(Sources(t.s, kSquared, "calls") == std::set<std::string>{kCircleArea});
    CHECK(NodeRev(t.s, kCircleArea) == circle_area);
    CHECK(NodeRev(t.s, kClampInt) == clamp);
  }

  SECTION("lines added above a function keep its key and move its lines") {
    std::string text = ReadFile(t.File("src/math_util.cc"));
    WriteFile(t.File("src/math_util.cc"), "// one\n// two\n" + text);
    RequireOk(t.Index());
    auto node = t.s.Run({"get-node", kSquared, "--json"});
    RequireOk(node);
    CHECK(node.json()["meta"]["lines"] == "18-20");
    CHECK(Sources(t.s, kSquared, "calls") == std::set<std::string>{kCircleArea, kSquareArea});
    CHECK(NodeRev(t.s, kCircleArea) == circle_area);  // another file: untouched
  }

  SECTION("a renamed file moves its symbols; memories of the old ones are orphans") {
    fs::rename(t.File("src/registry.cc"), t.File("src/shape_registry.cc"));
    RunResult r = t.Index();
    RequireOk(r);
    CHECK(r.out.find("indexed 9 files: 1 added, 0 changed, 1 removed, 8 unchanged\n") == 0);
    CHECK(r.out.find("1 memories are linked to code this index deleted (re-read them):\n"
                     "  constraint:sum-order --constrains--> " + kSumAreas + "\n") !=
          std::string::npos);
    CHECK(NodeRev(t.s, kSumAreas) == 0);
    CHECK(NodeRev(t.s, "symbol:src/shape_registry.cc#geo::Registry::SumAreas") > 0);
    CHECK(NodeRev(t.s, "file:src/registry.cc") == 0);
    // The memory and its edge stay: only the code went.
    CHECK(NodeRev(t.s, "constraint:sum-order") > 0);
  }

  SECTION("a deleted file's symbols are deleted; its memories are listed as orphans") {
    fs::remove(t.File("src/math_util.cc"));
    RunResult r = t.Index({"--json"});
    RequireOk(r);
    auto j = r.json();
    CHECK(j["files"]["removed"] == 1);
    REQUIRE(j["orphans"].size() == 1);
    CHECK(j["orphans"][0] == nlohmann::json::parse(R"({"memory":"decision:squared-is-pure",)"
                                                   R"("rel":"decided_for","code":")" +
                                                   kSquared + R"(","direction":"memory->code"})"));
    CHECK(NodeRev(t.s, kSquared) == 0);
    CHECK(NodeRev(t.s, kClampInt) == 0);
    CHECK(NodeRev(t.s, kCircleArea) == circle_area);
  }
}

TEST_CASE("index then impact --diff: callers, tests and decisions of a change",
          "[tools][cli][index]") {
  Tree t;
  RequireOk(t.Index());
  t.Memory("decision:squared-is-pure", "decision", "Squared stays a pure function",
           "decided_for", kSquared);
  // Line 17 of src/math_util.cc is Squared's body.
  const std::string patch =
      "diff --git a/src/math_util.cc b/src/math_util.cc\n"
      "--- a/src/math_util.cc\n+++ b/src/math_util.cc\n"
      "@@ -17 +17 @@ double Squared(double x) {\n-  return x * x;\n+  return x * x * 1.0;\n";
  RunResult r = t.s.Run({"impact", "--diff", "-", "--json"}, patch);
  RequireOk(r);
  const nlohmann::json j = r.json();
  REQUIRE(j["changed"].size() == 1);
  CHECK(j["changed"][0]["key"] == kSquared);
  std::set<std::string> callers;
  for (const auto& a : j["affected"]) {
    if (a["depth"] == 1 && a["relation"] == "calls") callers.insert(a["key"].get<std::string>());
  }
  CHECK(callers == std::set<std::string>{kCircleArea, kSquareArea});
  // The test that sums the registry's areas reaches Squared through Area().
  bool test_reached = false;
  for (const auto& x : j["tests"]) {
    test_reached = test_reached || x["key"].get<std::string>().ends_with("::TestRegistrySum");
  }
  CHECK(test_reached);
  REQUIRE(j["memories"].size() == 1);
  CHECK(j["memories"][0]["key"] == "decision:squared-is-pure");
  CHECK(j["memories"][0]["code"] == kSquared);
}

TEST_CASE("index: bad input is refused and changes nothing", "[tools][cli][index]") {
  Tree t;
  RequireOk(t.Index());
  const std::string stats = t.s.Stats();
  const std::string bad = t.s.dir().Sub("bad");
  auto refused = [&](const std::vector<std::string>& args, int code, const std::string& needle) {
    INFO(args.back());
    RequireError(t.s.Run(args), code, "index", needle);
    CHECK(t.s.Stats() == stats);
  };
  refused({"index", "--scip", t.s.dir().Sub("missing.scip")}, 3, "no such file");
  WriteFile(bad, std::string("\x0a\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01", 12));
  refused({"index", "--scip", bad}, 4, bad + ": ");
  WriteFile(bad, "{\"_type\":\"tag\",\"name\":\"x\"}\nnot json\n");
  refused({"index", "--ctags", bad}, 4, "line 1");
  refused({"index", "--scip", t.root}, 4, "is a directory");
  refused({"index", t.root, "--scip", bad}, 4, "give one of DIR, --scip FILE and --ctags FILE");
  refused({"index", t.root, "--root", t.root}, 4, "--root is for --ctags");
  refused({"index", t.s.dir().Sub("no-such-dir")}, 3, "no such directory");
  refused({"index", t.root, "--tests", ""}, 4, "empty pattern");

  // Without universal-ctags on PATH the error says what to install.
  RunResult r = RunProgram("/usr/bin/env",
                           {"PATH=/nonexistent", AMEM_BINARY, "--store", t.s.store(), "index",
                            t.root},
                           "", {}, "");
  CHECK(r.exit_code == 3);
  CHECK(r.err.find("apt-get install universal-ctags") != std::string::npos);
  CHECK(t.s.Stats() == stats);
}

}  // namespace
}  // namespace amem::testing
