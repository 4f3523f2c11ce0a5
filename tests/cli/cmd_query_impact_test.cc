// `amem impact --diff PATCH` through the real binary, on a code graph ingested by
// hand as docs/CODE.md lays one out: the four lists in JSON and text, stdin,
// --as-of, --limit, --budget-tokens; NODE and --diff both or neither, bad diffs and
// missing files refused with nothing written; and `gaps --category orphaned` after
// a symbol is deleted.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "tests/cli/amem_runner.h"

namespace amem::testing {
namespace {

std::string Sym(const std::string& file, const std::string& name, const std::string& lines) {
  return R"({"op":"node","key":"symbol:)" + file + "#" + name +
         R"(","type":"symbol","content":"function )" + name + R"(","meta":{"file":")" + file +
         R"(","indexer":"ctags","kind":"function","lines":")" + lines + R"(","name":")" + name +
         "\"}}\n" + R"({"op":"edge","src":"file:)" + file + R"(","rel":"defines","dst":"symbol:)" +
         file + "#" + name + "\"}\n";
}

std::string Edge(const std::string& src, const std::string& rel, const std::string& dst) {
  return R"({"op":"edge","src":")" + src + R"(","rel":")" + rel + R"(","dst":")" + dst + "\"}\n";
}

std::string File(const std::string& path) {
  return R"({"op":"node","key":"file:)" + path + R"(","type":"file","content":")" + path +
         R"(","meta":{"indexer":"ctags"}})" + "\n";
}

// src/parse.cc: Parser 1-50 { Parse 10-20 }; main.cc's main calls Parse; app.cc's
// Run calls main; a test tests Parse; a constraint and a decision on Parse.
std::string CodeGraph() {
  return std::string(R"({"op":"rel","name":"contains"})") + "\n" + File("src/parse.cc") +
         File("src/main.cc") + File("src/app.cc") + File("tests/parse_test.cc") +
         Sym("src/parse.cc", "Parser", "1-50") + Sym("src/parse.cc", "Parser::Parse", "10-20") +
         Sym("src/main.cc", "main", "1-15") + Sym("src/app.cc", "Run", "1-10") +
         Sym("tests/parse_test.cc", "TestParse", "1-10") +
         Edge("symbol:src/parse.cc#Parser", "contains", "symbol:src/parse.cc#Parser::Parse") +
         Edge("symbol:src/main.cc#main", "calls", "symbol:src/parse.cc#Parser::Parse") +
         Edge("symbol:src/app.cc#Run", "calls", "symbol:src/main.cc#main") +
         Edge("symbol:tests/parse_test.cc#TestParse", "tests",
              "symbol:src/parse.cc#Parser::Parse") +
         R"({"op":"node","key":"constraint:no-alloc","type":"constraint",)"
         R"("content":"Parse must not allocate"})"
         "\n" +
         Edge("constraint:no-alloc", "constrains", "symbol:src/parse.cc#Parser::Parse") +
         R"({"op":"node","key":"decision:recursive-descent","type":"decision",)"
         R"("content":"The parser is recursive descent"})"
         "\n" +
         Edge("decision:recursive-descent", "decided_for", "symbol:src/parse.cc#Parser");
}

const char* kPatch =
    "diff --git a/src/parse.cc b/src/parse.cc\n"
    "index 1111111..2222222 100644\n"
    "--- a/src/parse.cc\n"
    "+++ b/src/parse.cc\n"
    "@@ -11,3 +11,3 @@ int Parser::Parse() {\n"
    "   int a;\n"
    "-  int b = new int;\n"
    "+  int b = 0;\n"
    "   return a;\n";

using Strings = std::vector<std::string>;

TEST_CASE("impact --diff: changed, affected, tests and memories", "[query][cli][code-impact]") {
  TempStore s;
  RequireOk(s.Run({"ingest", "-"}, CodeGraph()));
  const std::string patch = s.dir().Sub("change.patch");
  WriteFile(patch, kPatch);

  RunResult r = s.Run({"--json", "impact", "--diff", patch});
  RequireOk(r);
  auto j = r.json();
  CHECK(j["query"] == "impact");
  CHECK(j["mode"] == "diff");
  CHECK(j["files"] == 1);
  CHECK(j["depth"] == 3);
  CHECK(KeysOf(j["changed"]) == Strings{"symbol:src/parse.cc#Parser::Parse"});
  CHECK(j["changed"][0]["lines"] == nlohmann::json::array({"12"}));
  CHECK(j["changed"][0]["change"] == "modified");
  CHECK(KeysOf(j["affected"]) == Strings{"symbol:src/main.cc#main", "symbol:src/parse.cc#Parser",
                                       "symbol:tests/parse_test.cc#TestParse",
                                       "symbol:src/app.cc#Run"});
  CHECK(j["affected"][1]["relation"] == "contains");
  CHECK(j["affected"][3]["depth"] == 2);
  CHECK(j["affected"][3]["via"]["dst"] == "symbol:src/main.cc#main");
  CHECK(KeysOf(j["tests"]) == Strings{"symbol:tests/parse_test.cc#TestParse"});
  CHECK(KeysOf(j["memories"]) == Strings{"constraint:no-alloc", "decision:recursive-descent"});
  CHECK(j["memories"][0]["type"] == "constraint");
  CHECK(j["memories"][0]["code"] == "symbol:src/parse.cc#Parser::Parse");
  CHECK(j["memories"][0]["relation"] == "constrains");
  CHECK(j["memories"][0]["direction"] == "out");
  CHECK(j["memories"][1]["code"] == "symbol:src/parse.cc#Parser");
  CHECK(j["memories"][1]["depth"] == 1);
  CHECK(j["counts"]["affected"] == 4);
  CHECK(j["truncated"] == false);

  // The same answer from stdin, and as text.
  r = s.Run({"--json", "impact", "--diff", "-"}, kPatch);
  RequireOk(r);
  CHECK(r.json() == j);
  r = s.Run({"impact", "--diff", patch});
  RequireOk(r);
  CHECK(r.out.find("query: impact\nmode: diff\n") == 0);
  CHECK(r.out.find("changed (1):\n  - symbol:src/parse.cc#Parser::Parse (symbol #") !=
        std::string::npos);
  CHECK(r.out.find("memories (2):\n  - constraint:no-alloc (constraint #") != std::string::npos);

  // --depth and --limit.
  r = s.Run({"--json", "impact", "--diff", patch, "--depth", "1", "--limit", "2"});
  RequireOk(r);
  CHECK(KeysOf(r.json()["affected"]) ==
        Strings{"symbol:src/main.cc#main", "symbol:src/parse.cc#Parser"});
  CHECK(r.json()["counts"]["affected"] == 3);
  CHECK(r.json()["truncated"] == true);

  // An empty diff changes nothing.
  r = s.Run({"--json", "impact", "--diff", "-"}, "");
  RequireOk(r);
  CHECK(r.json()["changed"].empty());
}

TEST_CASE("impact --diff: --budget-tokens is never exceeded", "[query][cli][code-impact]") {
  TempStore s;
  RequireOk(s.Run({"ingest", "-"}, CodeGraph()));
  for (bool json : {false, true}) {
    std::vector<std::string> args = {"impact", "--diff", "-", "--budget-tokens", "120"};
    if (json) args.insert(args.begin(), "--json");
    RunResult r = s.Run(args, kPatch);
    RequireOk(r);
    CHECK((r.out.size() + 3) / 4 <= 120);
    if (json) {
      CHECK(r.json()["truncated"] == true);
      CHECK(r.json()["changed"].size() == 1);
    }
  }
  RequireError(s.Run({"impact", "--diff", "-", "--budget-tokens", "5"}, kPatch), 4, "impact",
               "a budget of 5 tokens cannot hold");
  // The budget works for a NODE too.
  RunResult r = s.Run({"--json", "impact", "constraint:no-alloc", "--budget-tokens", "1000"});
  RequireOk(r);
}

TEST_CASE("impact --diff: --as-of reads the graph of that revision", "[query][cli][code-impact]") {
  TempStore s;
  RequireOk(s.Run({"ingest", "-"}, CodeGraph()));  // revision 1
  RequireOk(s.Run({"ingest", "-"}, File("src/cli.cc") + Sym("src/cli.cc", "Main", "1-5") +
                                       Edge("symbol:src/cli.cc#Main", "calls",
                                            "symbol:src/parse.cc#Parser::Parse")));
  RunResult now = s.Run({"--json", "impact", "--diff", "-", "--depth", "1"}, kPatch);
  RunResult past = s.Run({"--json", "impact", "--diff", "-", "--depth", "1", "--as-of", "1"},
                         kPatch);
  RequireOk(now);
  RequireOk(past);
  CHECK(KeysOf(now.json()["affected"]) ==
        Strings{"symbol:src/cli.cc#Main", "symbol:src/main.cc#main", "symbol:src/parse.cc#Parser",
                "symbol:tests/parse_test.cc#TestParse"});
  CHECK(KeysOf(past.json()["affected"]) ==
        Strings{"symbol:src/main.cc#main", "symbol:src/parse.cc#Parser",
                "symbol:tests/parse_test.cc#TestParse"});
}

TEST_CASE("impact: NODE and --diff both or neither, bad diffs, missing files",
          "[query][cli][code-impact]") {
  TempStore s;
  RequireOk(s.Run({"ingest", "-"}, CodeGraph()));
  const std::string before = s.Stats();
  const std::string patch = s.dir().Sub("change.patch");
  WriteFile(patch, kPatch);
  RequireError(s.Run({"impact"}), 2, "impact", "give either NODE or --diff (exactly one)");
  RequireError(s.Run({"impact", "constraint:no-alloc", "--diff", patch}), 2, "impact",
               "give either NODE or --diff (exactly one)");
  // Usage first: the file is not read.
  RequireError(s.Run({"impact", "constraint:no-alloc", "--diff", s.dir().Sub("none")}), 2,
               "impact");
  RequireError(s.Run({"impact", "--diff", s.dir().Sub("none")}), 6, "impact", "none");
  RequireError(s.Run({"impact", "--diff", "-"}, "--- a/x\n+++ b/x\n@@ -1,2 +1,2 @@\n-a\n"), 4,
               "impact", "--diff: line 3: hunk cut short");
  RequireError(s.Run({"impact", "--diff", "-"}, "hello\n"), 4, "impact",
               "not a unified diff");
  RequireError(s.Run({"impact", "--diff", "-", "--depth", "0"}, kPatch), 2, "impact");
  CHECK(s.Stats() == before);
}

TEST_CASE("impact --diff and gaps --category orphaned after code is deleted",
          "[query][cli][code-impact]") {
  TempStore s;
  RequireOk(s.Run({"ingest", "-"}, CodeGraph()));
  const char* deletion =
      "diff --git a/src/parse.cc b/src/parse.cc\n"
      "deleted file mode 100644\n"
      "--- a/src/parse.cc\n"
      "+++ /dev/null\n"
      "@@ -1,2 +0,0 @@\n"
      "-a\n"
      "-b\n";
  RunResult r = s.Run({"--json", "impact", "--diff", "-", "--depth", "1"}, deletion);
  RequireOk(r);
  CHECK(KeysOf(r.json()["changed"]) == Strings{"file:src/parse.cc", "symbol:src/parse.cc#Parser",
                                             "symbol:src/parse.cc#Parser::Parse"});
  CHECK(r.json()["changed"][0]["change"] == "deleted");

  r = s.Run({"--json", "gaps", "--category", "orphaned"});
  RequireOk(r);
  CHECK(r.json()["gaps"].empty());
  // A re-index deletes the symbols of a deleted file; the memories' edges stay.
  RequireOk(s.Run({"del-node", "symbol:src/parse.cc#Parser::Parse"}));
  RequireOk(s.Run({"del-node", "symbol:src/parse.cc#Parser"}));
  r = s.Run({"--json", "gaps", "--category", "orphaned"});
  RequireOk(r);
  CHECK(KeysOf(r.json()["gaps"]) == Strings{"constraint:no-alloc", "decision:recursive-descent"});
  CHECK(r.json()["gaps"][0]["kind"] == "orphaned");
  CHECK(r.json()["counts"]["orphaned"] == 2);
  CHECK(r.json()["total"] == 2);
  RequireError(s.Run({"gaps", "--category", "orphans"}), 4, "gaps", "unknown category");
}

}  // namespace
}  // namespace amem::testing
