// impact --diff (query/code_impact.h) on a small hand-built code graph laid out as
// docs/CODE.md says `amem index` writes one: changed lines to the innermost
// symbols, the backwards walk and its depth, tests, linked memories, limits and
// the token budget.
#include <catch2/catch.hpp>

#include <algorithm>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include <nlohmann/json.hpp>

#include "query/code_impact.h"
#include "snapshot/reader.h"
#include "tests/query/fixture.h"

namespace amem::query {
namespace {

using testing::GraphFixture;

void Sym(GraphFixture& g, const std::string& file, const std::string& name,
         const std::string& lines) {
  g.Node("symbol:" + file + "#" + name, NodeType::kSymbol, "function " + name)
      .Meta(R"({"file":")" + file + R"(","indexer":"ctags","kind":"function","lines":")" +
            lines + R"(","name":")" + name + R"("})");
  g.Edge("file:" + file, "defines", "symbol:" + file + "#" + name);
}

// src/parse.cc: Parser 1-50 { Parse 10-20, Reset 22-30 }, helper 60-70.
// src/main.cc: main 1-15 calls Parse; main.cc imports parse.cc.
// src/app.cc: Run calls main, Deep calls Run, Deeper calls Deep.
// tests/parse_test.cc: TestParse tests Parse; Fixture references helper.
// Parser implements iface Reader.
GraphFixture CodeGraph() {
  GraphFixture g;
  for (const char* f : {"src/parse.cc", "src/main.cc", "src/app.cc", "tests/parse_test.cc",
                        "src/iface.h"}) {
    g.Node(std::string("file:") + f, NodeType::kFile, f).Meta(R"({"indexer":"ctags"})");
  }
  Sym(g, "src/parse.cc", "Parser", "1-50");
  Sym(g, "src/parse.cc", "Parser::Parse", "10-20");
  Sym(g, "src/parse.cc", "Parser::Reset", "22-30");
  Sym(g, "src/parse.cc", "helper", "60-70");
  Sym(g, "src/main.cc", "main", "1-15");
  Sym(g, "src/app.cc", "Run", "1-10");
  Sym(g, "src/app.cc", "Deep", "20-30");
  Sym(g, "src/app.cc", "Deeper", "40-50");
  Sym(g, "tests/parse_test.cc", "TestParse", "1-10");
  Sym(g, "tests/parse_test.cc", "Fixture", "12-20");
  Sym(g, "src/iface.h", "Reader", "3-9");
  g.Edge("symbol:src/parse.cc#Parser", "contains", "symbol:src/parse.cc#Parser::Parse");
  g.Edge("symbol:src/parse.cc#Parser", "contains", "symbol:src/parse.cc#Parser::Reset");
  g.Edge("symbol:src/parse.cc#Parser", "implements", "symbol:src/iface.h#Reader");
  g.Edge("symbol:src/main.cc#main", "calls", "symbol:src/parse.cc#Parser::Parse");
  g.Edge("file:src/main.cc", "imports", "file:src/parse.cc");
  g.Edge("symbol:src/app.cc#Run", "calls", "symbol:src/main.cc#main");
  g.Edge("symbol:src/app.cc#Deep", "calls", "symbol:src/app.cc#Run");
  g.Edge("symbol:src/app.cc#Deeper", "calls", "symbol:src/app.cc#Deep");
  g.Edge("symbol:tests/parse_test.cc#TestParse", "tests", "symbol:src/parse.cc#Parser::Parse");
  g.Edge("symbol:tests/parse_test.cc#TestParse", "calls", "symbol:src/parse.cc#Parser::Parse");
  g.Edge("symbol:tests/parse_test.cc#Fixture", "references", "symbol:src/parse.cc#helper");
  // Memories.
  g.Node("constraint:no-alloc", NodeType::kConstraint, "Parse must not allocate");
  g.Edge("constraint:no-alloc", "constrains", "symbol:src/parse.cc#Parser::Parse");
  g.Node("decision:recursive-descent", NodeType::kDecision, "The parser is recursive descent");
  g.Edge("decision:recursive-descent", "decided_for", "symbol:src/parse.cc#Parser");
  g.Edge("decision:recursive-descent", "decided_for", "symbol:src/parse.cc#Parser::Parse");
  g.Node("fact:main-is-thin", NodeType::kFact, "main only parses flags");
  g.Edge("fact:main-is-thin", "derived_from", "symbol:src/main.cc#main");
  // A memory's code relation to code is a link, not a step of the walk.
  g.Node("fact:parse-doc", NodeType::kFact, "Parse is documented in docs/parse.md");
  g.Edge("fact:parse-doc", "references", "symbol:src/parse.cc#Parser::Parse");
  g.Node("fact:config", NodeType::kFact, "Run reads the config");
  g.Edge("symbol:src/app.cc#Run", "references", "fact:config");
  g.Node("decision:far", NodeType::kDecision, "Deeper is deprecated");
  g.Edge("decision:far", "decided_for", "symbol:src/app.cc#Deeper");
  return g;
}

FileChange Modified(const std::string& path, std::vector<LineSpan> lines) {
  return FileChange{path, path, ChangeKind::kModified, std::move(lines), false};
}

struct Answer {
  std::vector<std::string> changed, affected, tests, memories;
};

// Rows as "key" (changed: "key change lines"; affected: "key depth relation";
// tests: "key depth"; memories: "memory code relation direction depth").
Answer Ask(const snapshot::Reader& r, const std::vector<FileChange>& changes,
           CodeImpactOptions o = {}) {
  Json doc = CodeImpactJson(r, CodeImpact(r, changes, o), o);
  Answer a;
  for (const Json& c : doc["changed"]) {
    std::string row = c["key"].get<std::string>() + " " + c["change"].get<std::string>();
    for (const Json& l : c["lines"]) row += " " + l.get<std::string>();
    if (c.contains("in_graph")) row += " missing";
    a.changed.push_back(row);
  }
  for (const Json& c : doc["affected"]) {
    a.affected.push_back(c["key"].get<std::string>() + " " + std::to_string(c["depth"].get<int>()) +
                         " " + c["relation"].get<std::string>());
  }
  for (const Json& c : doc["tests"]) {
    a.tests.push_back(c["key"].get<std::string>() + " " + std::to_string(c["depth"].get<int>()));
  }
  for (const Json& c : doc["memories"]) {
    a.memories.push_back(c["key"].get<std::string>() + " " + c["code"].get<std::string>() + " " +
                         c["relation"].get<std::string>() + " " +
                         c["direction"].get<std::string>() + " " +
                         std::to_string(c["depth"].get<int>()));
  }
  return a;
}

using Rows = std::vector<std::string>;

TEST_CASE("code impact: a change inside a nested symbol reaches callers, tests, memories",
          "[query][code-impact]") {
  auto r = CodeGraph().Open();
  Answer a = Ask(*r, {Modified("src/parse.cc", {{12, 13}})});
  CHECK(a.changed == Rows{"symbol:src/parse.cc#Parser::Parse modified 12-13"});
  CHECK(a.affected == Rows{"symbol:src/main.cc#main 1 calls",
                           "symbol:src/parse.cc#Parser 1 contains",
                           "symbol:tests/parse_test.cc#TestParse 1 calls",
                           "symbol:src/app.cc#Run 2 calls",
                           "symbol:src/app.cc#Deep 3 calls"});
  CHECK(a.tests == Rows{"symbol:tests/parse_test.cc#TestParse 1"});
  CHECK(a.memories ==
        Rows{"constraint:no-alloc symbol:src/parse.cc#Parser::Parse constrains out 0",
             "decision:recursive-descent symbol:src/parse.cc#Parser::Parse decided_for out 0",
             "fact:parse-doc symbol:src/parse.cc#Parser::Parse references out 0",
             "fact:main-is-thin symbol:src/main.cc#main derived_from out 1",
             "fact:config symbol:src/app.cc#Run references in 2"});
}

TEST_CASE("code impact: depth bounds the walk", "[query][code-impact]") {
  auto r = CodeGraph().Open();
  CodeImpactOptions o;
  o.depth = 1;
  Answer a = Ask(*r, {Modified("src/parse.cc", {{12, 12}})}, o);
  CHECK(a.affected == Rows{"symbol:src/main.cc#main 1 calls",
                           "symbol:src/parse.cc#Parser 1 contains",
                           "symbol:tests/parse_test.cc#TestParse 1 calls"});
  CHECK(a.memories.size() == 4);  // fact:config sits at depth 2
  o.depth = 0;
  a = Ask(*r, {Modified("src/parse.cc", {{12, 12}})}, o);
  CHECK(a.affected.empty());
  CHECK(a.memories.size() == 3);
  o.depth = 4;
  a = Ask(*r, {Modified("src/parse.cc", {{12, 12}})}, o);
  CHECK(a.affected.back() == "symbol:src/app.cc#Deeper 4 calls");
  CHECK(a.memories.back() == "decision:far symbol:src/app.cc#Deeper decided_for out 4");
}

TEST_CASE("code impact: lines split among nested symbols and the file", "[query][code-impact]") {
  auto r = CodeGraph().Open();
  CodeImpactOptions o;
  o.depth = 0;
  // 18-24: Parse 18-20, Parser alone 21, Reset 22-24. 49-61: Parser 49-50, the file
  // 51-59, helper 60-61. An insertion after 30 falls in Reset (22-30), after 0 in
  // the file.
  Answer a = Ask(*r, {Modified("src/parse.cc", {{0, 0}, {18, 24}, {30, 30}, {49, 61}})}, o);
  CHECK(a.changed == Rows{"file:src/parse.cc modified 0 51-59",
                          "symbol:src/parse.cc#Parser modified 21 49-50",
                          "symbol:src/parse.cc#Parser::Parse modified 18-20",
                          "symbol:src/parse.cc#Parser::Reset modified 22-24 30",
                          "symbol:src/parse.cc#helper modified 60-61"});
  // A file the graph does not know is changed all the same.
  a = Ask(*r, {Modified("README.md", {{3, 4}})}, o);
  CHECK(a.changed == Rows{"file:README.md modified 3-4 missing"});
}

TEST_CASE("code impact: the file node of lines outside every symbol reaches its importers",
          "[query][code-impact]") {
  auto r = CodeGraph().Open();
  Answer a = Ask(*r, {Modified("src/parse.cc", {{55, 55}})});
  CHECK(a.changed == Rows{"file:src/parse.cc modified 55"});
  CHECK(a.affected == Rows{"file:src/main.cc 1 imports"});
  CHECK(a.tests.empty());
  CHECK(a.memories.empty());
}

TEST_CASE("code impact: added, deleted and renamed files", "[query][code-impact]") {
  GraphFixture g = CodeGraph();
  // A memory about a file not written yet (a stub) is found when the file comes.
  g.Node("constraint:new-is-small", NodeType::kConstraint, "new.cc stays under 200 lines");
  g.Edge("constraint:new-is-small", "constrains", "file:src/new.cc");
  auto r = g.Open();
  CodeImpactOptions o;
  o.depth = 1;
  Answer a = Ask(*r, {FileChange{"", "src/new.cc", ChangeKind::kAdded, {}, false}}, o);
  CHECK(a.changed == Rows{"file:src/new.cc added missing"});
  CHECK(a.affected.empty());
  CHECK(a.memories == Rows{"constraint:new-is-small file:src/new.cc constrains out 0"});

  a = Ask(*r, {FileChange{"src/parse.cc", "", ChangeKind::kDeleted, {{1, 70}}, false}}, o);
  CHECK(a.changed == Rows{"file:src/parse.cc deleted", "symbol:src/parse.cc#Parser deleted",
                          "symbol:src/parse.cc#Parser::Parse deleted",
                          "symbol:src/parse.cc#Parser::Reset deleted",
                          "symbol:src/parse.cc#helper deleted"});
  CHECK(a.affected == Rows{"file:src/main.cc 1 imports", "symbol:src/main.cc#main 1 calls",
                           "symbol:tests/parse_test.cc#Fixture 1 references",
                           "symbol:tests/parse_test.cc#TestParse 1 calls"});
  // Fixture has no tests edge of its own, but its file defines one.
  CHECK(a.tests == Rows{"symbol:tests/parse_test.cc#Fixture 1",
                        "symbol:tests/parse_test.cc#TestParse 1"});
  CHECK(a.memories ==
        Rows{"constraint:no-alloc symbol:src/parse.cc#Parser::Parse constrains out 0",
             "decision:recursive-descent symbol:src/parse.cc#Parser decided_for out 0",
             "fact:parse-doc symbol:src/parse.cc#Parser::Parse references out 0",
             "fact:main-is-thin symbol:src/main.cc#main derived_from out 1"});

  a = Ask(*r, {FileChange{"src/main.cc", "src/cli.cc", ChangeKind::kRenamed, {{5, 5}}, false}},
          o);
  CHECK(a.changed == Rows{"file:src/cli.cc renamed missing", "file:src/main.cc renamed",
                          "symbol:src/main.cc#main modified 5"});
  CHECK(a.affected == Rows{"symbol:src/app.cc#Run 1 calls"});
  // A pure rename, and a binary or mode-only change, touch the files alone.
  a = Ask(*r, {FileChange{"src/main.cc", "src/cli.cc", ChangeKind::kRenamed, {}, false},
               FileChange{"src/app.cc", "src/app.cc", ChangeKind::kModified, {}, true}},
          o);
  CHECK(a.changed == Rows{"file:src/app.cc modified", "file:src/cli.cc renamed missing",
                          "file:src/main.cc renamed"});
}

TEST_CASE("code impact: innermost ties, foreign lines and unusable meta", "[query][code-impact]") {
  GraphFixture g = CodeGraph();
  // Two symbols on one line: both are innermost. A symbol defined by a.cc whose
  // meta names another file, and one with no lines, never take a.cc's lines.
  g.Node("file:a.cc", NodeType::kFile, "a.cc");
  Sym(g, "a.cc", "x", "5-5");
  Sym(g, "a.cc", "y", "5");
  Sym(g, "a.cc", "outer", "1-9");
  g.Node("symbol:elsewhere", NodeType::kSymbol, "f").Meta(R"({"file":"b.cc","lines":"1-9"})");
  g.Edge("file:a.cc", "defines", "symbol:elsewhere");
  g.Node("symbol:nolines", NodeType::kSymbol, "g").Meta(R"({"file":"a.cc","lines":"9-1"})");
  g.Edge("file:a.cc", "defines", "symbol:nolines");
  auto r = g.Open();
  CodeImpactOptions o;
  o.depth = 0;
  CHECK(Ask(*r, {Modified("a.cc", {{4, 6}})}, o).changed ==
        Rows{"symbol:a.cc#outer modified 4 6", "symbol:a.cc#x modified 5",
             "symbol:a.cc#y modified 5"});
}

TEST_CASE("code impact: limit cuts each list, counts cover all", "[query][code-impact]") {
  auto r = CodeGraph().Open();
  CodeImpactOptions o;
  o.limit = 1;
  const std::vector<FileChange> change = {Modified("src/parse.cc", {{12, 13}, {62, 62}})};
  CodeImpactResult res = CodeImpact(*r, change, o);
  CHECK(res.truncated);
  CHECK(res.changed.size() == 1);
  CHECK(res.affected.size() == 1);
  CHECK(res.memories.size() == 1);
  CHECK(res.changed_count == 2);
  CHECK(res.affected_count == 6);
  CHECK(res.tests_count == 2);
  CHECK(res.memories_count == 5);
  Json doc = CodeImpactJson(*r, res, o);
  CHECK(doc["affected"][0]["key"] == "symbol:src/main.cc#main");
  CHECK(doc["counts"]["affected"] == 6);
  o.limit = 100;
  CHECK_FALSE(CodeImpact(*r, change, o).truncated);
}

TEST_CASE("code impact: the token budget keeps changed rows first and never overflows",
          "[query][code-impact]") {
  auto r = CodeGraph().Open();
  CodeImpactOptions o;
  const std::vector<FileChange> change = {Modified("src/parse.cc", {{12, 13}})};
  const Json full = CodeImpactJson(*r, CodeImpact(*r, change, o), o);
  const std::vector<std::string> order = {"changed", "memories", "tests", "affected"};
  for (Format f : {Format::kText, Format::kJson}) {
    Json doc = full;
    REQUIRE(CutToTokenBudget(&doc, order, f, 0).ok());
    CHECK(doc == full);
    doc = full;
    REQUIRE(CutToTokenBudget(&doc, order, f, 100000).ok());
    CHECK(doc == full);
    const size_t whole = (Render(full, f).size() + 3) / 4;
    doc = full;
    REQUIRE(CutToTokenBudget(&doc, order, f, whole - 1).ok());
    CHECK((Render(doc, f).size() + 3) / 4 <= whole - 1);
    CHECK(doc["truncated"] == true);
    CHECK(doc["changed"].size() == 1);
    CHECK(doc["memories"].size() == 5);
    CHECK(doc["affected"].size() < full["affected"].size());
    CHECK(doc["counts"] == full["counts"]);
    doc = full;
    Status s = CutToTokenBudget(&doc, order, f, 10);
    CHECK(s.code() == Status::Code::kInvalidArgument);
    CHECK_THAT(s.message(), Catch::Contains("a budget of 10 tokens cannot hold"));
  }
}

TEST_CASE("code impact: no change is an empty answer", "[query][code-impact]") {
  auto r = CodeGraph().Open();
  Json doc = CodeImpactJson(*r, CodeImpact(*r, {}, {}), {});
  CHECK(doc["files"] == 0);
  CHECK(doc["changed"].empty());
  CHECK(doc["affected"].empty());
  CHECK(doc["memories"].empty());
}

// Random code graphs with memories linked both ways, by several relations to one
// code node, and to each other: the memories found from the code side and from the
// memories' side are the same rows, with the same code node, edge and direction.
TEST_CASE("code impact: memories found from either end are the same rows",
          "[query][code-impact]") {
  size_t linked = 0, both_ways = 0;
  for (uint32_t seed = 1; seed <= 40; ++seed) {
    std::mt19937 rng(seed);
    auto pick = [&](size_t n) { return static_cast<size_t>(rng() % n); };
    GraphFixture g;
    std::vector<std::string> code;
    for (int f = 0; f < 4; ++f) {
      const std::string path = "src/f" + std::to_string(f) + ".cc";
      g.Node("file:" + path, NodeType::kFile, path).Meta(R"({"indexer":"ctags"})");
      code.push_back("file:" + path);
      for (int k = 0; k < 8; ++k) {
        const int first = 1 + 10 * k;
        Sym(g, path, "s" + std::to_string(k), std::to_string(first) + "-" + std::to_string(first + 8));
        code.push_back("symbol:" + path + "#s" + std::to_string(k));
      }
    }
    std::vector<std::string> memories;
    for (int m = 0; m < 12; ++m) {
      memories.push_back("decision:m" + std::to_string(m));
      g.Node(memories.back(), NodeType::kDecision, "memory " + std::to_string(m));
    }
    std::set<std::tuple<std::string, std::string, std::string>> edges;
    auto edge = [&](const std::string& a, const std::string& rel, const std::string& b) {
      if (edges.insert({a, rel, b}).second) g.Edge(a, rel, b);
    };
    const char* code_rels[] = {"calls", "references", "imports", "contains"};
    for (int e = 0; e < 70; ++e) edge(code[pick(code.size())], code_rels[pick(4)], code[pick(code.size())]);
    const char* memory_rels[] = {"decided_for", "constrains", "references", "supports"};
    for (int e = 0; e < 30; ++e) {
      const std::string& m = memories[pick(memories.size())];
      const std::string& c = code[pick(code.size())];
      const char* rel = memory_rels[pick(4)];
      switch (pick(4)) {
        case 0: edge(m, rel, c); break;
        case 1: edge(c, rel, m); break;
        case 2: edge(m, rel, c), edge(c, rel, m), ++both_ways; break;
        default: edge(m, rel, memories[pick(memories.size())]); break;
      }
    }
    auto r = g.Open();
    const std::vector<FileChange> changes = {
        Modified("src/f" + std::to_string(pick(4)) + ".cc", {{static_cast<uint32_t>(1 + pick(60)), 80}})};
    CodeImpactOptions o;
    o.limit = 1000;
    o.depth = static_cast<uint32_t>(pick(4));
    o.memory_scan = MemoryScan::kFromCode;
    const Answer from_code = Ask(*r, changes, o);
    o.memory_scan = MemoryScan::kFromMemories;
    const Answer from_memories = Ask(*r, changes, o);
    o.memory_scan = MemoryScan::kAuto;
    const Answer chosen = Ask(*r, changes, o);
    INFO("seed " << seed);
    CHECK(from_memories.memories == from_code.memories);
    CHECK(chosen.memories == from_code.memories);
    CHECK(from_memories.affected == from_code.affected);
    linked += from_code.memories.size();
  }
  CHECK(linked > 40);  // the comparison had rows to compare
  CHECK(both_ways > 10);
}

// Random code graphs whose nodes come from several runs, so that node numbers are
// not in key order, with symbols that two files define and `tests` edges from
// symbols and files: each level of the walk is in key order, and the tests are the
// rule's (a source of a `tests` edge, or a symbol whose file, the first by number
// that defines it, defines one), both checked against a plain reading of the edges.
TEST_CASE("code impact: levels in key order and the test rule, on random graphs",
          "[query][code-impact]") {
  size_t tests_found = 0, affected_found = 0;
  for (uint32_t seed = 1; seed <= 60; ++seed) {
    std::mt19937 rng(seed);
    auto pick = [&](size_t n) { return static_cast<size_t>(rng() % n); };
    const char* runs[] = {"", "index-b", "index-a"};
    GraphFixture g;
    std::vector<std::string> files, symbols, code;
    std::set<std::tuple<std::string, std::string, std::string>> edges;
    auto edge = [&](const std::string& a, const std::string& rel, const std::string& b) {
      if (edges.insert({a, rel, b}).second) g.Edge(a, rel, b);
    };
    for (int f = 0; f < 5; ++f) {
      const std::string path = (f == 4 ? "tests/t" : "src/f") + std::to_string(f) + ".cc";
      files.push_back("file:" + path);
      g.Node(files.back(), NodeType::kFile, path).Meta(R"({"indexer":"ctags"})").Run(runs[pick(3)]);
      for (int k = 0; k < 6; ++k) {
        const std::string name = "s" + std::to_string(k);
        const std::string lines = std::to_string(1 + 10 * k) + "-" + std::to_string(9 + 10 * k);
        symbols.push_back("symbol:" + path + "#" + name);
        g.Node(symbols.back(), NodeType::kSymbol, "function " + name)
            .Meta(R"({"file":")" + path + R"(","kind":"function","lines":")" + lines + R"("})")
            .Run(runs[pick(3)]);
        edge(files.back(), "defines", symbols.back());
      }
    }
    code = files;
    code.insert(code.end(), symbols.begin(), symbols.end());
    for (int k = 0; k < 4; ++k) edge(files[pick(files.size())], "defines", symbols[pick(symbols.size())]);
    for (int k = 0, n = static_cast<int>(pick(4)); k < n; ++k) {
      edge(code[pick(code.size())], "tests", code[pick(code.size())]);
    }
    const char* code_rels[] = {"calls", "references", "imports", "contains", "overrides"};
    for (int e = 0; e < 80; ++e) edge(code[pick(code.size())], code_rels[pick(5)], code[pick(code.size())]);
    auto r = g.Open();
    CodeImpactOptions o;
    o.limit = 1000;
    o.depth = 1 + static_cast<uint32_t>(pick(3));
    const std::string path = "src/f" + std::to_string(pick(4)) + ".cc";
    const Answer a = Ask(*r, {Modified(path, {{static_cast<uint32_t>(1 + pick(50)), 60}})}, o);

    // The walk, read plainly: in-edges by (relation id, source number), levels by key.
    auto rel_id = [&](const std::string& rel) { return *r->FindRelation(rel); };
    const std::set<std::string> walked = {"calls", "references", "implements", "imports",
                                          "tests", "contains", "overrides"};
    std::set<std::string> seen;
    std::vector<std::pair<std::string, uint32_t>> reached;  // (key, depth)
    Rows affected;
    std::vector<std::string> frontier;
    for (const std::string& row : a.changed) {
      frontier.push_back(row.substr(0, row.find(' ')));
      seen.insert(frontier.back());
      reached.emplace_back(frontier.back(), 0);
    }
    for (uint32_t d = 0; d < o.depth; ++d) {
      std::vector<std::pair<std::string, std::string>> level;  // (key, relation)
      for (const std::string& u : frontier) {
        std::vector<std::tuple<RelationId, uint32_t, std::string, std::string>> in;
        for (const auto& [src, rel, dst] : edges) {
          if (dst == u && walked.count(rel)) in.emplace_back(rel_id(rel), GraphFixture::Index(*r, src), src, rel);
        }
        std::sort(in.begin(), in.end());
        for (const auto& [id, number, src, rel] : in) {
          if (seen.insert(src).second) level.emplace_back(src, rel);
        }
      }
      std::sort(level.begin(), level.end());
      frontier.clear();
      for (const auto& [key, rel] : level) {
        affected.push_back(key + " " + std::to_string(d + 1) + " " + rel);
        reached.emplace_back(key, d + 1);
        frontier.push_back(key);
      }
    }
    // The test rule.
    auto tests_out = [&](const std::string& u) {
      return std::any_of(edges.begin(), edges.end(),
                         [&](const auto& e) { return std::get<0>(e) == u && std::get<1>(e) == "tests"; });
    };
    Rows tests;
    for (const auto& [u, depth] : reached) {
      bool test = tests_out(u);
      std::optional<std::pair<uint32_t, std::string>> file;  // the first definer by number
      for (const auto& [src, rel, dst] : edges) {
        if (rel == "defines" && dst == u) file = std::min(file.value_or(std::pair(UINT32_MAX, src)),
                                                          std::pair(GraphFixture::Index(*r, src), src));
      }
      if (!test && u.rfind("symbol:", 0) == 0 && file) {
        for (const auto& [src, rel, dst] : edges) test |= rel == "defines" && src == file->second && tests_out(dst);
      }
      if (test) tests.push_back(u + " " + std::to_string(depth));
    }
    INFO("seed " << seed);
    CHECK(a.affected == affected);
    CHECK(a.tests == tests);
    affected_found += affected.size();
    tests_found += tests.size();
  }
  CHECK(affected_found > 100);  // the comparisons had rows to compare
  CHECK(tests_found > 20);
}

}  // namespace
}  // namespace amem::query
