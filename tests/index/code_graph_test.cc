// The code graph builder on hand-made indexes: the records of docs/CODE.md §1-§3,
// re-indexing by digest (§4), orphans, and what is refused.
#include "tools/index/code_graph.h"

#include <algorithm>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include <catch2/catch.hpp>

#include "tests/store/store_test_util.h"

namespace amem::index {
namespace {

using testing::OpenStore;
using testing::TempDir;

const std::string kPkg = "scip-typescript npm demo 1.0 ";
std::string Sym(const std::string& descriptors) { return kPkg + descriptors; }

SourceRange R(uint32_t l0, uint32_t c0, uint32_t l1, uint32_t c1) { return {l0, c0, l1, c1}; }

Occurrence Def(const std::string& symbol, SourceRange name, std::optional<SourceRange> body = {}) {
  return Occurrence{name, symbol, kRoleDefinition, body};
}
Occurrence Ref(const std::string& symbol, SourceRange at, uint32_t roles = 0) {
  return Occurrence{at, symbol, roles, std::nullopt};
}
SymbolInfo Info(const std::string& symbol, const std::string& kind, const std::string& name) {
  SymbolInfo info;
  info.symbol = symbol;
  info.kind = kind;
  info.display_name = name;
  return info;
}

// src/lib.ts: interface Shape { area() }, class Square implements Shape { area() {...} },
//             function parse() { helper(); new Square().area(); }
// src/util.ts: function helper() {}, function unused() {}
// tests/lib.test.ts: top-level call of parse(), and function check() { helper(); }
const std::string kShape = Sym("src/`lib.ts`/Shape#");
const std::string kShapeArea = Sym("src/`lib.ts`/Shape#area().");
const std::string kSquare = Sym("src/`lib.ts`/Square#");
const std::string kSquareArea = Sym("src/`lib.ts`/Square#area().");
const std::string kParse = Sym("src/`lib.ts`/parse().");
const std::string kHelper = Sym("src/`util.ts`/helper().");
const std::string kUnused = Sym("src/`util.ts`/unused().");
const std::string kCheck = Sym("tests/`lib.test.ts`/check().");
const std::string kParam = Sym("src/`lib.ts`/parse().(text)");

Document Lib(uint64_t digest = 11, bool calls_helper = true) {
  Document d;
  d.path = "src/lib.ts";
  d.language = "typescript";
  d.digest = digest;
  d.symbols = {Info(kShape, "interface", "Shape"), Info(kShapeArea, "method", "area"),
               Info(kSquare, "class", "Square"), Info(kSquareArea, "method", "area"),
               Info(kParse, "function", "parse"), Info(kParam, "parameter", "text")};
  d.symbols[2].relationships.push_back(Relationship{kShape, false, true, false, false});
  d.symbols[3].relationships.push_back(Relationship{kShapeArea, true, true, false, false});
  d.symbols[4].signature = "function parse(text: string): void";
  d.symbols[4].documentation = "Parses the text.";
  d.occurrences = {
      Def(kShape, R(0, 10, 0, 15), R(0, 0, 2, 1)),
      Def(kShapeArea, R(1, 2, 1, 6), R(1, 2, 1, 16)),
      Def(kSquare, R(3, 6, 3, 12), R(3, 0, 5, 1)),
      Ref(kShape, R(3, 24, 3, 29)),
      Def(kSquareArea, R(4, 2, 4, 6), R(4, 2, 4, 30)),
      Def(kParse, R(6, 9, 6, 14), R(6, 0, 10, 1)),
      Def(kParam, R(6, 15, 6, 19)),
      Ref(kParam, R(7, 10, 7, 14)),
      Ref(kHelper, R(8, 2, 8, 8), kRoleReadAccess),
      Ref(kSquare, R(9, 6, 9, 12)),
      Ref(kSquareArea, R(9, 15, 9, 19)),
      Ref(Sym("lib/`es5.d.ts`/String#"), R(6, 21, 6, 27)),  // defined nowhere: no edge
  };
  if (!calls_helper) d.occurrences.erase(d.occurrences.begin() + 8);
  return d;
}

Document Util(uint64_t digest = 22) {
  Document d;
  d.path = "src/util.ts";
  d.digest = digest;
  d.symbols = {Info(kHelper, "function", "helper"), Info(kUnused, "function", "unused")};
  d.occurrences = {Def(kHelper, R(0, 16, 0, 22), R(0, 0, 0, 30)),
                   Def(kUnused, R(1, 16, 1, 22), R(1, 0, 1, 30))};
  return d;
}

Document Test(uint64_t digest = 33) {
  Document d;
  d.path = "tests/lib.test.ts";
  d.digest = digest;
  d.symbols = {Info(kCheck, "function", "check")};
  d.occurrences = {Ref(kParse, R(0, 0, 0, 5)),
                   Ref(kParse, R(1, 9, 1, 14), kRoleImport),
                   Def(kCheck, R(2, 9, 2, 14), R(2, 0, 4, 1)),
                   Ref(kHelper, R(3, 2, 3, 8)),
                   Def("local 0", R(3, 10, 3, 11), R(3, 10, 3, 20)),
                   Ref("local 0", R(3, 22, 3, 23)),
                   Def("local 1", R(3, 30, 3, 31))};  // no body: no node
  return d;
}

CodeIndex Index(std::vector<Document> docs) {
  CodeIndex index;
  index.indexer = "scip";
  std::sort(docs.begin(), docs.end(),
            [](const Document& a, const Document& b) { return a.path < b.path; });
  index.documents = std::move(docs);
  return index;
}

Result<IndexReport> Run(Store& store, const CodeIndex& index, IndexOptions options = {}) {
  uint64_t rev = 0;
  auto registry = ReadRegistry(store, &rev);
  REQUIRE(registry.ok());
  return IndexCode(store, index, *registry, rev, options);
}

using Triple = std::tuple<std::string, std::string, std::string>;
std::set<Triple> OutEdges(const Store& store, const std::string& key) {
  std::set<Triple> out;
  auto edges = store.Out(key);
  REQUIRE(edges.ok());
  for (const EdgeRecord& e : *edges) out.emplace(e.src_key, e.rel_name, e.dst_key);
  return out;
}

std::string K(const std::string& symbol) { return "symbol:" + symbol; }

TEST_CASE("code graph: the records of a SCIP-like index", "[code_graph]") {
  TempDir dir;
  auto store = OpenStore(dir.path());
  auto report = Run(*store, Index({Lib(), Util(), Test()}));
  INFO(report.status().ToString());
  REQUIRE(report.ok());
  CHECK(report->written);
  CHECK(report->added == 3);
  CHECK(report->documents == 3);
  CHECK(report->digests == 3);

  auto file = store->GetNode("file:src/lib.ts");
  REQUIRE(file.ok());
  CHECK(file->type == NodeType::kFile);
  CHECK(file->content == "src/lib.ts");
  CHECK(file->meta == R"({"indexer":"scip","lang":"typescript"})");

  auto parse = store->GetNode(K(kParse));
  REQUIRE(parse.ok());
  CHECK(parse->type == NodeType::kSymbol);
  CHECK(parse->content ==
        "function parse\nfunction parse(text: string): void\nParses the text.");
  CHECK(parse->meta ==
        R"({"file":"src/lib.ts","indexer":"scip","kind":"function","lines":"7-11","name":"parse"})");
  // Parameters get no node, nor do locals without a body.
  CHECK(store->GetNode(K(kParam)).status().IsNotFound());
  CHECK(store->GetNode("symbol:tests/lib.test.ts#local 1").status().IsNotFound());
  CHECK(store->GetNode("symbol:tests/lib.test.ts#local 0").ok());

  CHECK(OutEdges(*store, "file:src/lib.ts") ==
        std::set<Triple>{{"file:src/lib.ts", "defines", K(kShape)},
                         {"file:src/lib.ts", "defines", K(kShapeArea)},
                         {"file:src/lib.ts", "defines", K(kSquare)},
                         {"file:src/lib.ts", "defines", K(kSquareArea)},
                         {"file:src/lib.ts", "defines", K(kParse)}});
  // The call inside parse's body; the class and its method referenced there; the
  // reference to an undefined library type makes no edge.
  CHECK(OutEdges(*store, K(kParse)) ==
        std::set<Triple>{{K(kParse), "calls", K(kHelper)},
                         {K(kParse), "calls", K(kSquareArea)},
                         {K(kParse), "references", K(kSquare)}});
  CHECK(OutEdges(*store, K(kSquare)) ==
        std::set<Triple>{{K(kSquare), "contains", K(kSquareArea)},
                         {K(kSquare), "implements", K(kShape)},
                         {K(kSquare), "references", K(kShape)}});
  CHECK(OutEdges(*store, K(kSquareArea)) ==
        std::set<Triple>{{K(kSquareArea), "overrides", K(kShapeArea)}});
  CHECK(OutEdges(*store, K(kShape)) ==
        std::set<Triple>{{K(kShape), "contains", K(kShapeArea)}});
  // The test file: a top-level call tests from the file; check() tests helper.
  CHECK(OutEdges(*store, "file:tests/lib.test.ts") ==
        std::set<Triple>{{"file:tests/lib.test.ts", "defines", K(kCheck)},
                         {"file:tests/lib.test.ts", "defines", "symbol:tests/lib.test.ts#local 0"},
                         {"file:tests/lib.test.ts", "references", K(kParse)},
                         {"file:tests/lib.test.ts", "tests", K(kParse)},
                         {"file:tests/lib.test.ts", "imports", "file:src/lib.ts"}});
  CHECK(OutEdges(*store, K(kCheck)) ==
        std::set<Triple>{{K(kCheck), "calls", K(kHelper)},
                         {K(kCheck), "tests", K(kHelper)},
                         {K(kCheck), "references", "symbol:tests/lib.test.ts#local 0"}});
  CHECK(OutEdges(*store, "symbol:tests/lib.test.ts#local 0").empty());

  auto registry = ReadRegistry(*store);
  REQUIRE(registry.ok());
  REQUIRE(registry->size() == 3);
  CHECK(registry->at("src/util.ts").digest == 22);
  CHECK(registry->at("src/util.ts").indexer == "scip");
}

TEST_CASE("code graph: a re-index writes only what changed", "[code_graph]") {
  TempDir dir;
  auto store = OpenStore(dir.path());
  REQUIRE(Run(*store, Index({Lib(), Util(), Test()})).ok());
  uint64_t rev = *store->revision();

  SECTION("the same index writes nothing") {
    auto again = Run(*store, Index({Lib(), Util(), Test()}));
    REQUIRE(again.ok());
    CHECK_FALSE(again->written);
    CHECK(again->unchanged == 3);
    CHECK(*store->revision() == rev);
    // --full reads every document again and still finds nothing to write.
    IndexOptions full_options;
    full_options.full = true;
    auto full = Run(*store, Index({Lib(), Util(), Test()}), full_options);
    REQUIRE(full.ok());
    CHECK_FALSE(full->written);
    CHECK(*store->revision() == rev);
  }

  SECTION("undecoded documents with their registered digest are skipped") {
    CodeIndex index = Index({Lib(), Util(), Test()});
    for (Document& d : index.documents) {
      d.decoded = false;
      d.occurrences.clear();
      d.symbols.clear();
    }
    auto again = Run(*store, index);
    REQUIRE(again.ok());
    CHECK_FALSE(again->written);
    index.documents[0].digest = 99;
    auto bad = Run(*store, index);
    CHECK(bad.status().IsInvalidArgument());
    CHECK(*store->revision() == rev);
  }

  SECTION("an edit in one file rewrites only that file's changed records") {
    auto helper_before = store->GetNode(K(kHelper));
    auto square_before = store->GetNode(K(kSquare));
    // Only lib.ts changed: parse() no longer calls helper().
    auto report = Run(*store, Index({Lib(/*digest=*/12, /*calls_helper=*/false), Util(), Test()}));
    REQUIRE(report.ok());
    CHECK(report->written);
    CHECK(report->changed == 1);
    CHECK(report->unchanged == 2);
    CHECK(report->nodes_put == 0);
    CHECK(report->edges_put == 0);
    CHECK(report->edges_deleted == 1);
    CHECK(report->nodes_deleted == 0);
    CHECK(report->digests == 1);
    CHECK(*store->revision() == rev + 1);
    CHECK(store->GetEdge(K(kParse), "calls", K(kHelper)).status().IsNotFound());
    CHECK(store->GetNode(K(kHelper))->rev == helper_before->rev);
    CHECK(store->GetNode(K(kSquare))->rev == square_before->rev);
    CHECK(ReadRegistry(*store)->at("src/lib.ts").digest == 12);
  }

  SECTION("a removed file's records get tombstones and its memories are orphans") {
    Batch memories;
    memories.PutNode(testing::Node("decision:keep-helper", "helper stays pure", NodeType::kDecision));
    memories.PutEdge(testing::Edge("decision:keep-helper", "decided_for", K(kHelper)));
    memories.PutNode(testing::Node("constraint:no-io", "no I/O in util", NodeType::kConstraint));
    memories.PutEdge(testing::Edge("constraint:no-io", "constrains", "file:src/util.ts"));
    memories.PutNode(testing::Node("fact:parse-ok", "parse is tested", NodeType::kFact));
    memories.PutEdge(testing::Edge("fact:parse-ok", "related_to", K(kParse)));
    REQUIRE(store->Apply(memories).ok());
    Document util_gone = Util();
    util_gone.path = "src/util2.ts";  // renamed: the old path is gone
    auto report = Run(*store, Index({Lib(), util_gone, Test()}));
    REQUIRE(report.ok());
    CHECK(report->removed == 1);
    CHECK(report->added == 1);
    CHECK(store->GetNode("file:src/util.ts").status().IsNotFound());
    // Same SCIP symbols: their nodes now belong to the new path.
    auto helper = store->GetNode(K(kHelper));
    REQUIRE(helper.ok());
    CHECK(helper->meta.find(R"("file":"src/util2.ts")") != std::string::npos);
    // The memories of the deleted file node are orphans; the rest are not.
    REQUIRE(report->orphans.size() == 1);
    CHECK(report->orphans[0].memory == "constraint:no-io");
    CHECK(report->orphans[0].code == "file:src/util.ts");
    CHECK(report->orphans[0].rel == "constrains");
    CHECK(report->orphans[0].from_memory);
    CHECK(store->GetEdge("decision:keep-helper", "decided_for", K(kHelper)).ok());
    CHECK(ReadRegistry(*store)->count("src/util.ts") == 0);
  }

  SECTION("a symbol that disappears is deleted; its memories are orphans") {
    Batch memories;
    memories.PutNode(testing::Node("decision:unused-stays", "keep it", NodeType::kDecision));
    memories.PutEdge(testing::Edge("decision:unused-stays", "decided_for", K(kUnused)));
    REQUIRE(store->Apply(memories).ok());
    Document util = Util(23);
    util.occurrences.pop_back();
    util.symbols.pop_back();
    auto report = Run(*store, Index({Lib(), util, Test()}));
    REQUIRE(report.ok());
    CHECK(report->nodes_deleted == 1);
    CHECK(report->edges_deleted == 1);  // defines
    CHECK(store->GetNode(K(kUnused)).status().IsNotFound());
    REQUIRE(report->orphans.size() == 1);
    CHECK(report->orphans[0].memory == "decision:unused-stays");
    CHECK(report->orphans[0].code == K(kUnused));
  }

  SECTION("a ctags index does not remove the files of a SCIP index") {
    CodeIndex other;
    other.indexer = "ctags";
    auto report = Run(*store, other);
    REQUIRE(report.ok());
    CHECK(report->removed == 0);
    CHECK_FALSE(report->written);
  }
}

TEST_CASE("code graph: another writer between the registry read and the write",
          "[code_graph]") {
  TempDir dir;
  auto store = OpenStore(dir.path());
  uint64_t rev = 0;
  auto registry = ReadRegistry(*store, &rev);
  REQUIRE(registry.ok());
  CHECK(rev == 0);
  // An unrelated write: the index is planned again and written after it.
  REQUIRE(store->PutNode(testing::Node("fact:other", "x")).ok());
  auto report = IndexCode(*store, Index({Lib(), Util(), Test()}), *registry, rev, {});
  REQUIRE(report.ok());
  CHECK(report->written);
  CHECK(report->revision == 2);
  // A write that changes the registry: Aborted, nothing written.
  auto stale = ReadRegistry(*store, &rev);
  REQUIRE(stale.ok());
  Document lib = Lib(13);
  REQUIRE(Run(*store, Index({lib, Util(), Test()})).ok());
  const uint64_t now = *store->revision();
  auto refused = IndexCode(*store, Index({Lib(14), Util(), Test()}), *stale, rev, {});
  CHECK(refused.status().IsAborted());
  CHECK(*store->revision() == now);
}

TEST_CASE("code graph: the registry refuses entries it did not write", "[code_graph]") {
  TempDir dir;
  auto store = OpenStore(dir.path());
  KvInput kv;
  kv.scope = "amem";
  kv.ns = "code_files";
  kv.key = "src/a.ts";
  kv.value = R"({"digest":"xyz","indexer":"scip","path":"src/a.ts"})";
  REQUIRE(store->PutKv(kv).ok());
  CHECK(ReadRegistry(*store).status().IsCorruption());
  kv.value = R"({"digest":"00000000000000ff","indexer":"scip","path":"src/b.ts"})";
  REQUIRE(store->PutKv(kv).ok());
  CHECK(ReadRegistry(*store).status().IsCorruption());  // the path is not its key
  kv.value = R"({"digest":"00000000000000ff","indexer":"scip","path":"src/a.ts"})";
  REQUIRE(store->PutKv(kv).ok());
  REQUIRE(ReadRegistry(*store).ok());
  CHECK(ReadRegistry(*store)->at("src/a.ts").digest == 0xff);
}

TEST_CASE("code graph: keys and test-file globs", "[code_graph]") {
  CHECK(FileKey("src/a.cc") == "file:src/a.cc");
  CHECK(SymbolKey("src/a.ts", "local 7") == "symbol:src/a.ts#local 7");
  CHECK(SymbolKey("src/a.ts", kParse) == "symbol:" + kParse);
  std::string long_symbol = kPkg + std::string(2000, 'x') + ".";
  std::string key = SymbolKey("", long_symbol);
  CHECK(key.size() == kMaxKeyBytes);
  CHECK(key[kMaxKeyBytes - 17] == '~');
  CHECK(SymbolKey("", long_symbol + "y") != key);

  struct Case {
    const char* path;
    bool test;
  };
  for (Case c : {Case{"tests/a.cc", true}, Case{"test/x/y.py", true},
                 Case{"src/tests/a.cc", true}, Case{"src/__tests__/a.ts", true},
                 Case{"src/a_test.cc", true}, Case{"src/a.test.ts", true},
                 Case{"pkg/test_util.py", true}, Case{"a.spec.js", true},
                 Case{"src/a.cc", false}, Case{"src/testing.cc", false},
                 Case{"src/contest/a.cc", false}, Case{"latest.cc", false}}) {
    bool any = std::any_of(DefaultTestGlobs().begin(), DefaultTestGlobs().end(),
                           [&](const std::string& g) { return GlobMatch(g, c.path); });
    INFO(c.path);
    CHECK(any == c.test);
  }
  CHECK(GlobMatch("**", "a/b/c"));
  CHECK(GlobMatch("a/**/c", "a/c"));
  CHECK(GlobMatch("a/**/c", "a/x/y/c"));
  CHECK_FALSE(GlobMatch("a/*/c", "a/x/y/c"));
  CHECK(GlobMatch("spec/*.rb", "spec/a.rb"));
  CHECK_FALSE(GlobMatch("spec/*.rb", "spec/a.py"));
  CHECK(GlobMatch("?.c", "a.c"));
  CHECK_FALSE(GlobMatch("?.c", "ab.c"));
}

TEST_CASE("code graph: --tests replaces the default patterns", "[code_graph]") {
  TempDir dir;
  auto store = OpenStore(dir.path());
  IndexOptions options;
  options.test_globs = {"src/util.ts"};
  Document util = Util();
  util.occurrences.push_back(Ref(kParse, R(0, 24, 0, 29)));  // inside helper's body
  REQUIRE(Run(*store, Index({Lib(), util, Test()}), options).ok());
  CHECK(store->GetEdge(K(kHelper), "tests", K(kParse)).ok());
  CHECK(store->GetEdge("file:tests/lib.test.ts", "tests", K(kParse)).status().IsNotFound());
}

// Many files: sym(f, k) is function k of file f; each calls two functions of the
// next file. A full index of them is more operations than one piece of the write.
std::string Fn(int f, int k) {
  return Sym("src/`f" + std::to_string(f) + ".ts`/fn" + std::to_string(k) + "().");
}
CodeIndex ManyFiles(int files, int fns) {
  std::vector<Document> docs;
  for (int f = 0; f < files; ++f) {
    Document d;
    d.path = "src/f" + std::to_string(f) + ".ts";
    d.digest = 1000 + f;
    for (int k = 0; k < fns; ++k) {
      uint32_t line = 3 * k;
      d.symbols.push_back(Info(Fn(f, k), "function", "fn" + std::to_string(k)));
      d.occurrences.push_back(Def(Fn(f, k), R(line, 9, line, 12), R(line, 0, line + 2, 1)));
      d.occurrences.push_back(Ref(Fn((f + 1) % files, k), R(line + 1, 2, line + 1, 5)));
      d.occurrences.push_back(Ref(Fn((f + 1) % files, (k + 1) % fns), R(line + 1, 8, line + 1, 11)));
    }
    docs.push_back(std::move(d));
  }
  return Index(std::move(docs));
}

TEST_CASE("code graph: a write larger than one piece, and one whose map must grow",
          "[code_graph]") {
  // 300 files x 40 functions: 12,300 nodes and about 36,000 edges, three pieces.
  const CodeIndex index = ManyFiles(300, 40);
  TempDir a, b;
  auto roomy = OpenStore(a.path());
  StoreOptions tight;
  tight.TEST_map_size = 1 << 20;  // full long before the end: the write runs again
  auto small = OpenStore(b.path(), tight);
  IndexOptions low;
  low.TEST_size_hint = 0;
  auto r1 = Run(*roomy, index);
  auto r2 = Run(*small, index, low);
  REQUIRE(r1.ok());
  REQUIRE(r2.ok());
  CHECK(r1->revision == 1);
  CHECK(r2->revision == 1);
  CHECK(r1->nodes_put == 300 + 300 * 40);
  CHECK(r2->nodes_put == r1->nodes_put);
  CHECK(r2->edges_put == r1->edges_put);
  CHECK(r1->edges_put > 3 * 16384 / 2);
  auto s1 = roomy->Stats();
  auto s2 = small->Stats();
  REQUIRE(s1.ok());
  REQUIRE(s2.ok());
  CHECK(s1->live_nodes == r1->nodes_put);
  CHECK(s1->live_edges == r1->edges_put);
  CHECK(s2->live_nodes == s1->live_nodes);
  CHECK(s2->live_edges == s1->live_edges);
  CHECK(s1->kv_entries == 300);
  CHECK(s2->kv_entries == 300);
  CHECK(s2->map_size > (uint64_t{1} << 20));
  for (int f : {0, 150, 299}) {
    CHECK(OutEdges(*small, K(Fn(f, 7))) == OutEdges(*roomy, K(Fn(f, 7))));
    CHECK(OutEdges(*small, K(Fn(f, 7))).count({K(Fn(f, 7)), "calls", K(Fn((f + 1) % 300, 8))}));
  }
  // Again, unchanged: nothing is written.
  auto again = Run(*small, index);
  REQUIRE(again.ok());
  CHECK_FALSE(again->written);
  CHECK(again->revision == 1);
}

TEST_CASE("code graph: a plan that fails after the write started writes nothing",
          "[code_graph]") {
  // A document the registry does not explain fails the plan at its turn, after
  // earlier files' pieces went to the writer.
  CodeIndex index = ManyFiles(300, 40);
  TempDir dir;
  auto store = OpenStore(dir.path());
  Document odd;
  odd.path = "zz/last.ts";  // sorted last
  odd.digest = 7;
  odd.decoded = false;      // "not read", yet never registered
  index.documents.push_back(odd);
  auto r = Run(*store, index);
  REQUIRE_FALSE(r.ok());
  CHECK(r.status().IsInvalidArgument());
  CHECK(r.status().ToString().find("zz/last.ts") != std::string::npos);
  auto rev = store->revision();
  REQUIRE(rev.ok());
  CHECK(*rev == 0);
  CHECK(store->GetNode("file:src/f0.ts").status().IsNotFound());
}

}  // namespace
}  // namespace amem::index
