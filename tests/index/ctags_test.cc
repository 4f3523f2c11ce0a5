// The universal-ctags reader: keys, scopes, paths, every malformed input, the
// reference rule, and the real ctags on the C++ fixture (tests/data/code/cpp).
#include "tools/index/ctags.h"

#include <stdio.h>
#include <sys/wait.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/hash.h"
#include "tests/store/store_test_util.h"
#include "tests/test_paths.h"

namespace amem::index {
namespace {

using amem::testing::TempDir;

// One hand-written tag line's fields.
struct T {
  T(std::string name_, std::string path_, uint32_t line_, uint32_t end_ = 0,
    std::string kind_ = "function", std::string scope_ = "", std::string scope_kind_ = "",
    std::string signature_ = "", std::string language_ = "C++")
      : name(std::move(name_)), path(std::move(path_)), line(line_), end(end_),
        kind(std::move(kind_)), scope(std::move(scope_)), scope_kind(std::move(scope_kind_)),
        signature(std::move(signature_)), language(std::move(language_)) {}
  std::string name;
  std::string path;
  uint32_t line;
  uint32_t end;  // 0: absent
  std::string kind;
  std::string scope;
  std::string scope_kind;
  std::string signature;
  std::string language;
};

std::string Line(const T& t) {
  nlohmann::ordered_json j;
  j["_type"] = "tag";
  j["name"] = t.name;
  j["path"] = t.path;
  j["language"] = t.language;
  j["line"] = t.line;
  j["kind"] = t.kind;
  if (!t.signature.empty()) j["signature"] = t.signature;
  if (!t.scope.empty()) j["scope"] = t.scope;
  if (!t.scope_kind.empty()) j["scopeKind"] = t.scope_kind;
  if (t.end != 0) j["end"] = t.end;
  return j.dump() + "\n";
}

std::string Lines(const std::vector<T>& tags) {
  std::string out;
  for (const T& t : tags) out += Line(t);
  return out;
}

CodeIndex Read(std::string_view jsonl, const CtagsOptions& options = {}) {
  auto r = ReadCtags(jsonl, options);
  INFO(r.status().ToString());
  REQUIRE(r.ok());
  return std::move(r).value();
}

const Document& Doc(const CodeIndex& index, std::string_view path) {
  for (const Document& d : index.documents) {
    if (d.path == path) return d;
  }
  FAIL("no document " << path);
  throw;
}

const SymbolInfo& Sym(const CodeIndex& index, std::string_view key) {
  for (const Document& d : index.documents) {
    for (const SymbolInfo& s : d.symbols) {
      if (s.symbol == key) return s;
    }
  }
  FAIL("no symbol " << key);
  throw;
}

std::vector<std::string> Paths(const CodeIndex& index) {
  std::vector<std::string> paths;
  for (const Document& d : index.documents) paths.push_back(d.path);
  return paths;
}

std::vector<std::string> Keys(const Document& doc) {
  std::vector<std::string> keys;
  for (const SymbolInfo& s : doc.symbols) keys.push_back(s.symbol);
  return keys;
}

// The definition occurrence of `key`: its 0-based first and last line.
std::pair<uint32_t, uint32_t> DefLines(const Document& doc, std::string_view key) {
  for (const Occurrence& o : doc.occurrences) {
    if (o.symbol == key && o.roles == kRoleDefinition) {
      REQUIRE(o.enclosing_range.has_value());
      CHECK(*o.enclosing_range == o.range);
      CHECK(o.range.start_col == 0);
      CHECK(o.range.end_col == 0);
      return {o.range.start_line, o.range.end_line};
    }
  }
  FAIL("no definition of " << key << " in " << doc.path);
  throw;
}

// Every reference occurrence in the index naming `key`: "PATH:LINE:COL-ENDCOL",
// 0-based, in index order.
std::vector<std::string> RefsTo(const CodeIndex& index, std::string_view key) {
  std::vector<std::string> out;
  for (const Document& d : index.documents) {
    for (const Occurrence& o : d.occurrences) {
      if (o.symbol != key || o.roles != 0) continue;
      CHECK(o.range.start_line == o.range.end_line);
      CHECK_FALSE(o.enclosing_range.has_value());
      out.push_back(d.path + ":" + std::to_string(o.range.start_line) + ":" +
                    std::to_string(o.range.start_col) + "-" + std::to_string(o.range.end_col));
    }
  }
  return out;
}

// The symbols the references of `path` at 0-based `line`, `col` name, sorted.
std::vector<std::string> RefsAt(const CodeIndex& index, std::string_view path, uint32_t line,
                                uint32_t col) {
  std::vector<std::string> out;
  for (const Occurrence& o : Doc(index, path).occurrences) {
    if (o.roles == 0 && o.range.start_line == line && o.range.start_col == col) {
      out.push_back(o.symbol);
    }
  }
  return out;
}

void WriteFile(const std::string& path, std::string_view text) {
  std::filesystem::create_directories(std::filesystem::path(path).parent_path());
  std::ofstream f(path, std::ios::binary);
  f << text;
  REQUIRE(f.good());
}

TEST_CASE("ReadCtags keys tags by path, scope chain and name", "[ctags]") {
  const std::string jsonl = Lines({
      {"ns", "src/a.cc", 1, 20, "namespace"},
      {"Reader", "src/a.cc", 2, 10, "class", "ns", "namespace"},
      {"Parse", "src/a.cc", 3, 5, "function", "ns::Reader", "class", "(int a)"},
      {"Box", "py/m.py", 1, 9, "class", "", "", "", "Python"},
      {"Inner", "py/m.py", 2, 6, "class", "Box", "class", "", "Python"},
      {"get", "py/m.py", 3, 4, "member", "Box.Inner", "class", "(self)", "Python"},
      {"put", "py/m.py", 7, 0, "member", "Box", "class", "(self, x)", "Python"},
  });
  const CodeIndex index = Read(jsonl);
  CHECK(index.indexer == "ctags");
  CHECK(index.tool == "universal-ctags");
  REQUIRE(index.documents.size() == 2);
  CHECK(index.documents[0].path == "py/m.py");
  CHECK(index.documents[1].path == "src/a.cc");
  CHECK(index.documents[0].language == "Python");
  CHECK(index.documents[1].language == "C++");
  CHECK(Keys(index.documents[1]) ==
        std::vector<std::string>{"src/a.cc#ns", "src/a.cc#ns::Reader", "src/a.cc#ns::Reader::Parse"});
  CHECK(Keys(index.documents[0]) ==
        std::vector<std::string>{"py/m.py#Box", "py/m.py#Box::Inner", "py/m.py#Box::Inner::get",
                                 "py/m.py#Box::put"});

  const SymbolInfo& parse = Sym(index, "src/a.cc#ns::Reader::Parse");
  CHECK(parse.display_name == "Parse");
  CHECK(parse.kind == "function");
  CHECK(parse.signature == "(int a)");
  CHECK(parse.enclosing_symbol == "src/a.cc#ns::Reader");
  CHECK(Sym(index, "src/a.cc#ns::Reader").enclosing_symbol == "src/a.cc#ns");
  CHECK(Sym(index, "src/a.cc#ns").enclosing_symbol.empty());
  CHECK(Sym(index, "py/m.py#Box::Inner::get").enclosing_symbol == "py/m.py#Box::Inner");
  CHECK(Sym(index, "py/m.py#Box::put").enclosing_symbol == "py/m.py#Box");

  // Ranges are line..end, 0-based; a tag without end covers its line.
  CHECK(DefLines(index.documents[1], "src/a.cc#ns::Reader::Parse") == std::pair<uint32_t, uint32_t>{2, 4});
  CHECK(DefLines(index.documents[0], "py/m.py#Box::put") == std::pair<uint32_t, uint32_t>{6, 6});
  // Without a root: one definition per tag, no references, and the digest is the
  // XXH3-64 of the file's ctags lines.
  CHECK(index.documents[1].occurrences.size() == 3);
  for (const Occurrence& o : index.documents[1].occurrences) CHECK(o.roles == kRoleDefinition);
  const std::string a_lines = Lines({
      {"ns", "src/a.cc", 1, 20, "namespace"},
      {"Reader", "src/a.cc", 2, 10, "class", "ns", "namespace"},
      {"Parse", "src/a.cc", 3, 5, "function", "ns::Reader", "class", "(int a)"},
  });
  CHECK(index.documents[1].digest == Hash64(a_lines));
}

TEST_CASE("ReadCtags tells overloads apart by signature, then by ordinal", "[ctags]") {
  // Given out of file order: keys follow the lines, not the input order.
  const std::string jsonl = Lines({
      {"Add", "a.cc", 9, 10, "function", "", "", "(double  a,\n double b)"},
      {"Add", "a.cc", 5, 6, "function", "", "", "(int a, int b)"},
      {"Add", "a.cc", 12, 0, "function", "", "", "(double a, double b)"},
      {"Add", "a.cc", 14, 0, "variable"},
      {"Add", "a.cc", 15, 0, "function", "", "", "int"},
      {"Add", "b.cc", 3, 0, "function", "", "", "(double a, double b)"},
      {"ns", "a.cc", 20, 22, "namespace"},
      {"ns", "a.cc", 24, 30, "namespace"},
      {"x", "a.cc", 25, 0, "variable", "ns", "namespace"},
      {"ns", "a.cc", 31, 33, "namespace"},
  });
  const CodeIndex index = Read(jsonl);
  CHECK(Keys(Doc(index, "a.cc")) == std::vector<std::string>{
                                        "a.cc#Add",
                                        "a.cc#Add(double a, double b)",
                                        "a.cc#Add(double a, double b)#2",
                                        "a.cc#Add#2",
                                        "a.cc#Add(int)",
                                        "a.cc#ns",
                                        "a.cc#ns#2",
                                        "a.cc#ns::x",
                                        "a.cc#ns#3",
                                    });
  CHECK(Sym(index, "a.cc#Add(double a, double b)").signature == "(double a, double b)");
  CHECK(DefLines(Doc(index, "a.cc"), "a.cc#Add(double a, double b)") ==
        std::pair<uint32_t, uint32_t>{8, 9});
  // Overloads are counted per file.
  CHECK(Keys(Doc(index, "b.cc")) == std::vector<std::string>{"b.cc#Add"});
  // The key is the scope chain, never an ordinal; the enclosing symbol is the
  // namespace block whose lines hold the tag.
  CHECK(Sym(index, "a.cc#ns::x").enclosing_symbol == "a.cc#ns#2");
}

TEST_CASE("ReadCtags picks the enclosing tag by scope kind, in the same file only", "[ctags]") {
  const CodeIndex index = Read(Lines({
      {"Shape", "a.h", 1, 1, "function", "", "", "(int)"},
      {"Shape", "a.h", 3, 9, "class"},
      {"Inner", "a.h", 4, 6, "struct", "Shape", "class"},
      {"v", "a.h", 5, 5, "member", "Shape::Inner", "struct"},
      {"Area", "a.h", 11, 11, "function", "Shape", "class"},
      {"Area", "a.cc", 3, 5, "function", "Shape", "class"},
  }));
  CHECK(Keys(Doc(index, "a.h")) == std::vector<std::string>{"a.h#Shape", "a.h#Shape#2",
                                                            "a.h#Shape::Inner",
                                                            "a.h#Shape::Inner::v",
                                                            "a.h#Shape::Area"});
  // Area is outside both tags named Shape: the class is its scope, not the
  // function that comes first.
  CHECK(Sym(index, "a.h#Shape::Area").enclosing_symbol == "a.h#Shape#2");
  CHECK(Sym(index, "a.h#Shape::Inner").enclosing_symbol == "a.h#Shape#2");
  CHECK(Sym(index, "a.h#Shape::Inner::v").enclosing_symbol == "a.h#Shape::Inner");
  // The scope tag is in another file: no enclosing symbol.
  CHECK(Sym(index, "a.cc#Shape::Area").enclosing_symbol.empty());
}

TEST_CASE("ReadCtags normalises paths and sorts documents", "[ctags]") {
  const std::string ptag =
      R"({"_type": "ptag", "name": "TAG_PROGRAM_NAME", "path": "Universal Ctags", "pattern": ""})"
      "\n"
      R"({"_type": "ptag", "name": "TAG_PROGRAM_VERSION", "path": "5.9.0", "pattern": ""})"
      "\n";
  const CodeIndex index = Read(ptag + Lines({
                                          {"b", "./src//b.cc", 1},
                                          {"a", "./src/./a.cc", 1},
                                          {"a2", "src/a.cc", 2},
                                          {"z", "z.cc", 1},
                                          {"m", "./m.cc", 1},
                                      }) +
                               "\r\n   \n");
  CHECK(index.tool == "Universal Ctags 5.9.0");
  CHECK(Paths(index) == std::vector<std::string>{"m.cc", "src/a.cc", "src/b.cc", "z.cc"});
  CHECK(Keys(Doc(index, "src/a.cc")) == std::vector<std::string>{"src/a.cc#a", "src/a.cc#a2"});
}

TEST_CASE("ReadCtags rejects malformed input naming the line", "[ctags]") {
  const std::string good = Line({"ok", "a.cc", 1});
  struct Case {
    std::string line;
    std::string error;
  };
  const std::vector<Case> cases = {
      {"not json", "ctags JSON line 2: "},
      {R"({"_type": "tag", "name": "x")", "ctags JSON line 2: "},
      {R"([1, 2])", "not a JSON object"},
      {R"("tag")", "not a JSON object"},
      {R"({"name": "x", "path": "a.cc", "line": 1})", "missing \"_type\""},
      {R"({"_type": 1, "name": "x", "path": "a.cc", "line": 1})", "\"_type\" is not a string"},
      {R"({"_type": "tagx", "name": "x", "path": "a.cc", "line": 1})", "unknown _type \"tagx\""},
      {R"({"_type": "tag", "path": "a.cc", "line": 1})", "missing \"name\""},
      {R"({"_type": "tag", "name": "x", "line": 1})", "missing \"path\""},
      {R"({"_type": "tag", "name": "x", "path": "a.cc"})", "missing \"line\""},
      {R"({"_type": "tag", "name": "x", "path": "a.cc", "line": 0})", "\"line\" is not a line number"},
      {R"({"_type": "tag", "name": "x", "path": "a.cc", "line": -3})", "\"line\" is not a line number"},
      {R"({"_type": "tag", "name": "x", "path": "a.cc", "line": 1.5})", "\"line\" is not a line number"},
      {R"({"_type": "tag", "name": "x", "path": "a.cc", "line": "4"})", "\"line\" is not a line number"},
      {R"({"_type": "tag", "name": "x", "path": "a.cc", "line": 2147483648})", "\"line\" is not a line number"},
      {R"({"_type": "tag", "name": "x", "path": "a.cc", "line": 99999999999999999999999})", "\"line\" is not a line number"},
      {R"({"_type": "tag", "name": "x", "path": "a.cc", "line": 1e400})", "ctags JSON line 2: "},
      {R"({"_type": "tag", "name": "x", "path": "a.cc", "line": 5, "end": 4})", "\"line\" 5 is past \"end\" 4"},
      {R"({"_type": "tag", "name": "x", "path": "a.cc", "line": 5, "end": "9"})", "\"end\" is not a line number"},
      {R"({"_type": "tag", "name": "x", "path": "a.cc", "line": 5, "end": 0})", "\"end\" is not a line number"},
      {R"({"_type": "tag", "name": 5, "path": "a.cc", "line": 1})", "\"name\" is not a string"},
      {R"({"_type": "tag", "name": "x", "path": null, "line": 1})", "\"path\" is not a string"},
      {R"({"_type": "tag", "name": "x", "path": "a.cc", "line": 1, "kind": 3})", "\"kind\" is not a string"},
      {R"({"_type": "tag", "name": "x", "path": "a.cc", "line": 1, "scope": []})", "\"scope\" is not a string"},
      {R"({"_type": "tag", "name": "x", "path": "a.cc", "line": 1, "scopeKind": {}})", "\"scopeKind\" is not a string"},
      {R"({"_type": "tag", "name": "x", "path": "a.cc", "line": 1, "signature": 1})", "\"signature\" is not a string"},
      {R"({"_type": "tag", "name": "x", "path": "a.cc", "line": 1, "language": true})", "\"language\" is not a string"},
      {"{\"_type\": \"tag\", \"name\": \"x\xff\", \"path\": \"a.cc\", \"line\": 1}", "ctags JSON line 2: "},
      {"{\"_type\": \"tag\", \"name\": \"x\", \"path\": \"a\xc3\", \"line\": 1}", "ctags JSON line 2: "},
      {R"({"_type": "tag", "name": "a\u0001", "path": "a.cc", "line": 1})", "\"name\" holds a control character"},
      {R"({"_type": "tag", "name": "a", "path": "a\nb.cc", "line": 1})", "\"path\" holds a control character"},
      {R"({"_type": "tag", "name": "", "path": "a.cc", "line": 1})", "empty \"name\""},
      {R"({"_type": "tag", "name": "x", "path": "", "line": 1})", "empty \"path\""},
      {R"({"_type": "tag", "name": "x", "path": "./", "line": 1})", "path \"./\" names no file"},
      {R"({"_type": "tag", "name": "x", "path": "/etc/passwd", "line": 1})", "path \"/etc/passwd\" is absolute or has \"..\" and no root is given"},
      {R"({"_type": "tag", "name": "x", "path": "src/../a.cc", "line": 1})", "path \"src/../a.cc\" is absolute or has \"..\""},
      {R"({"_type": "tag", "name": "ok", "path": "./a.cc", "line": 1, "language": "C++", "kind": "function"})", "duplicate of the tag on line 1"},
      {R"({"_type": "tag", "name": "x", "path": "a.cc", "line": 1, "pattern": )" + std::string(100, '[') + std::string(100, ']') + "}", "nested deeper than"},
  };
  for (const Case& c : cases) {
    INFO(c.line);
    auto r = ReadCtags(good + c.line + "\n" + Line({"later", "b.cc", 1}));
    REQUIRE_FALSE(r.ok());
    CHECK(r.status().IsInvalidArgument());
    CHECK_THAT(r.status().message(), Catch::Contains(c.error));
    CHECK_THAT(r.status().message(), Catch::StartsWith("ctags JSON line 2: "));
  }
}

TEST_CASE("ReadCtags checks tags against the files under the root", "[ctags]") {
  TempDir dir;
  WriteFile(dir / "src/a.cc", "int f() {\n  return 1;\n}");
  const auto with_root = [&](const std::string& jsonl) {
    CtagsOptions options;
    options.root = dir.path();
    return ReadCtags(jsonl, options);
  };
  {
    const std::string content = "int f() {\n  return 1;\n}";
    CtagsOptions options;
    options.root = dir.path();
    const CodeIndex index = Read(Line({"f", "src/a.cc", 1, 3}), options);
    CHECK(index.documents[0].digest == Hash64(content));
  }
  // ".." and absolute paths that stay under the root are made relative to it.
  for (const std::string& path :
       {std::string("src/../src/a.cc"), dir.path() + "/src/a.cc", dir.path() + "/./src//a.cc"}) {
    INFO(path);
    auto r = with_root(Line({"f", path, 1, 3}));
    INFO(r.status().ToString());
    REQUIRE(r.ok());
    CHECK(r->documents[0].path == "src/a.cc");
    CHECK(r->documents[0].symbols[0].symbol == "src/a.cc#f");
  }
  for (const std::string& path : {std::string("../a.cc"), std::string("src/../../a.cc"),
                                  std::string("/etc/passwd"), std::string("..")}) {
    INFO(path);
    auto r = with_root(Line({"f", path, 1}));
    REQUIRE_FALSE(r.ok());
    CHECK(r.status().IsInvalidArgument());
    CHECK_THAT(r.status().message(),
               Catch::Contains("ctags JSON line 1: path \"" + path + "\" is not under the root"));
  }
  {
    auto r = with_root(Line({"f", "src/a.cc", 1, 3}) + Line({"g", "src/a.cc", 2, 4}));
    REQUIRE_FALSE(r.ok());
    CHECK(r.status().IsInvalidArgument());
    CHECK(r.status().message() ==
          "ctags JSON line 2: tag \"g\" ends at line 4, past the end of src/a.cc (3 lines)");
  }
  {
    auto r = with_root(Line({"f", "src/missing.cc", 1}));
    REQUIRE_FALSE(r.ok());
    CHECK(r.status().IsIOError());
    CHECK_THAT(r.status().message(), Catch::EndsWith("src/missing.cc: no such file"));
  }
  {
    auto r = with_root(Line({"f", "src", 1}));
    REQUIRE_FALSE(r.ok());
    CHECK(r.status().IsIOError());
    CHECK_THAT(r.status().message(), Catch::EndsWith("src: not a regular file"));
  }
}

TEST_CASE("ReadCtags finds references by name: nearest tier, no definitions, no comments", "[ctags]") {
  TempDir dir;
  // Column ruler for the lines below: each reference's column is asserted.
  WriteFile(dir / "lib/a.cc",
            "int Helper(int x) { return x; }\n"                       // 0
            "int Run() { return Helper(1) + Helper2(2); }\n"          // 1
            "// Helper in a comment; /* Helper */ 'x'\n"              // 2
            "const char* s = \"Helper \\\" Helper\"; /* Helper\n"     // 3
            "   Helper */ int y = x_Helper + Helper_x + 1'000'0;\n"  // 4
            "int z = Helper(Run());  // Run\n");                      // 5
  WriteFile(dir / "lib/b.cc", "int Helper(int x) { return x; }\n");
  WriteFile(dir / "src/c.cc", "int Helper(int x) { return x; }\nnamespace geo {}\n");
  WriteFile(dir / "lib/user.cc", "int User() {\n  return Helper(2);\n}\n");
  WriteFile(dir / "app/run.cc", "int Go() { return Helper(4); }\n");
  WriteFile(dir / "app/main.py",
            "def main():\n"
            "    # Helper in a comment\n"
            "    \"\"\"Helper in a\n"
            "    Helper docstring\"\"\"\n"
            "    return Helper(3) + geo\n");
  std::string many;
  std::string eight;
  for (int i = 1; i <= 9; ++i) {
    many += "int Many" + std::to_string(i) + "();\n";
    eight += "int Eight" + std::to_string(i) + "();\n";
  }
  WriteFile(dir / "lib/many.h", many + "int k = Many + Eight;\n");
  std::vector<T> tags = {
      {"Helper", "lib/a.cc", 1, 1},
      {"Run", "lib/a.cc", 2, 2},
      {"Helper2", "lib/zz.cc", 1, 1},
      {"x_Helper", "lib/zz.cc", 1, 1, "variable"},
      {"Helper", "lib/b.cc", 1, 1},
      {"Helper", "src/c.cc", 1, 1},
      {"geo", "src/c.cc", 2, 2, "namespace"},
      {"User", "lib/user.cc", 1, 3},
      {"Go", "app/run.cc", 1, 1},
      {"main", "app/main.py", 1, 5, "function", "", "", "()", "Python"},
      {"x", "lib/zz.cc", 1, 1, "local", "Helper2", "function"},
      {"name", "lib/conf.json", 1, 1, "string", "", "", "", "JSON"},
  };
  WriteFile(dir / "lib/conf.json", "{\"name\": \"Helper\"}\n");
  WriteFile(dir / "lib/zz.cc", "int Helper2, x_Helper;\n");
  for (int i = 1; i <= 9; ++i) {
    tags.push_back({"Many", "lib/many.h", static_cast<uint32_t>(i), 0, "prototype",
                    "S" + std::to_string(i), "struct"});
    if (i <= 8) {
      tags.push_back({"Eight", "lib/many.h", static_cast<uint32_t>(i), 0, "prototype",
                      "E" + std::to_string(i), "struct"});
    }
  }
  CtagsOptions options;
  options.root = dir.path();
  const CodeIndex index = Read(Lines(tags), options);

  // The same file first: a.cc's own Helper, on the calls in lines 1 and 5 only
  // (line 0 is its definition; comments and strings are skipped, and x_Helper,
  // Helper_x and Helper2 are other words).
  CHECK(RefsTo(index, "lib/a.cc#Helper") ==
        std::vector<std::string>{"app/run.cc:0:18-24", "lib/a.cc:1:19-25", "lib/a.cc:5:8-14",
                                 "lib/user.cc:1:9-15"});
  CHECK(RefsTo(index, "lib/a.cc#Run") == std::vector<std::string>{"lib/a.cc:5:15-18"});
  CHECK(RefsTo(index, "lib/zz.cc#Helper2") == std::vector<std::string>{"lib/a.cc:1:31-38"});
  CHECK(RefsTo(index, "lib/zz.cc#x_Helper") == std::vector<std::string>{"lib/a.cc:4:21-29"});
  // Then the same directory: lib/user.cc names both lib/ Helpers, not src/c.cc's.
  CHECK(RefsAt(index, "lib/user.cc", 1, 9) ==
        std::vector<std::string>{"lib/a.cc#Helper", "lib/b.cc#Helper"});
  // Then everywhere: app/run.cc names all three.
  CHECK(RefsAt(index, "app/run.cc", 0, 18) ==
        std::vector<std::string>{"lib/a.cc#Helper", "lib/b.cc#Helper", "src/c.cc#Helper"});
  CHECK(RefsTo(index, "lib/b.cc#Helper") ==
        std::vector<std::string>{"app/run.cc:0:18-24", "lib/user.cc:1:9-15"});
  // Never across languages: Python's Helper(3) names no C++ tag.
  CHECK(RefsAt(index, "app/main.py", 4, 11).empty());
  // JSON strings are no uses.
  for (const Occurrence& o : Doc(index, "lib/conf.json").occurrences) CHECK(o.roles != 0);
  // A function's local is not seen from other files (a.cc's line 0 has two x).
  CHECK(RefsTo(index, "lib/zz.cc#Helper2::x").empty());
  // Namespaces are never referenced; nine definitions of a name are ambiguous,
  // eight are not.
  CHECK(RefsTo(index, "src/c.cc#geo").empty());
  for (int i = 1; i <= 9; ++i) {
    CHECK(RefsTo(index, "lib/many.h#S" + std::to_string(i) + "::Many").empty());
  }
  for (int i = 1; i <= 8; ++i) {
    CHECK(RefsTo(index, "lib/many.h#E" + std::to_string(i) + "::Eight") ==
          std::vector<std::string>{"lib/many.h:9:15-20"});
  }
  // Occurrences are sorted by position; definitions and references together.
  const Document& a = Doc(index, "lib/a.cc");
  for (size_t i = 1; i < a.occurrences.size(); ++i) {
    const SourceRange& p = a.occurrences[i - 1].range;
    const SourceRange& q = a.occurrences[i].range;
    CHECK(std::tie(p.start_line, p.start_col) <= std::tie(q.start_line, q.start_col));
  }
}

// Runs CtagsCommand() in `dir` and returns its JSON Lines. A missing ctags is a
// failure: tools/bootstrap.sh test installs it.
std::string RunCtags(const std::string& dir) {
  REQUIRE(std::system("command -v ctags >/dev/null 2>&1") == 0);
  std::string command = "cd '" + dir + "' &&";
  for (const std::string& arg : CtagsCommand()) command += " '" + arg + "'";
  FILE* pipe = ::popen(command.c_str(), "r");
  REQUIRE(pipe != nullptr);
  std::string out;
  char buf[4096];
  size_t got;
  while ((got = ::fread(buf, 1, sizeof buf, pipe)) > 0) out.append(buf, got);
  const int status = ::pclose(pipe);
  INFO(command);
  REQUIRE(WIFEXITED(status));
  REQUIRE(WEXITSTATUS(status) == 0);
  return out;
}

CodeIndex IndexTree(const std::string& dir) {
  CtagsOptions options;
  options.root = dir;
  return Read(RunCtags(dir), options);
}

const std::string kCppFixture = "/tests/data/code/cpp";

TEST_CASE("CtagsCommand on the C++ fixture: keys, kinds, ranges and references", "[ctags]") {
  const CodeIndex index = IndexTree(std::string(AMEM_SOURCE_DIR) + kCppFixture);
  CHECK(Paths(index) == std::vector<std::string>{"include/geo/circle.h", "include/geo/math_util.h",
                                          "include/geo/registry.h", "include/geo/shape.h",
                                          "src/circle.cc", "src/math_util.cc",
                                          "src/registry.cc", "src/shape.cc",
                                          "tests/geo_tests.cc"});
  for (const Document& d : index.documents) CHECK(d.language == "C++");

  // The overloaded function in a nested namespace.
  const Document& math = Doc(index, "src/math_util.cc");
  CHECK(Keys(math) ==
        std::vector<std::string>{"src/math_util.cc#geo", "src/math_util.cc#geo::detail",
                                 "src/math_util.cc#geo::detail::Clamp",
                                 "src/math_util.cc#geo::detail::Clamp(double value,double low,double high)",
                                 "src/math_util.cc#geo::detail::Squared"});
  const SymbolInfo& clamp = Sym(index, "src/math_util.cc#geo::detail::Clamp");
  CHECK(clamp.kind == "function");
  CHECK(clamp.signature == "(int value,int low,int high)");
  CHECK(clamp.enclosing_symbol == "src/math_util.cc#geo::detail");
  CHECK(DefLines(math, "src/math_util.cc#geo::detail::Clamp") == std::pair<uint32_t, uint32_t>{5, 8});
  CHECK(DefLines(math, "src/math_util.cc#geo::detail::Clamp(double value,double low,double high)") ==
        std::pair<uint32_t, uint32_t>{10, 13});
  CHECK(Sym(index, "src/math_util.cc#geo::detail").kind == "namespace");
  CHECK(Sym(index, "src/math_util.cc#geo::detail").enclosing_symbol == "src/math_util.cc#geo");

  // The class, its constructor, its members, and the override defined in a .cc
  // (its class is in another file: no enclosing symbol).
  const Document& circle_h = Doc(index, "include/geo/circle.h");
  CHECK(Sym(index, "include/geo/circle.h#geo::Circle").kind == "class");
  CHECK(Sym(index, "include/geo/circle.h#geo::Circle").enclosing_symbol == "include/geo/circle.h#geo");
  CHECK(DefLines(circle_h, "include/geo/circle.h#geo::Circle") == std::pair<uint32_t, uint32_t>{8, 16});
  CHECK(Sym(index, "include/geo/circle.h#geo::Circle::Circle").signature == "(double radius)");
  CHECK(Sym(index, "include/geo/circle.h#geo::Circle::radius_").kind == "member");
  CHECK(Sym(index, "include/geo/registry.h#geo::Registry::Count").enclosing_symbol ==
        "include/geo/registry.h#geo::Registry");
  const SymbolInfo& label = Sym(index, "src/circle.cc#geo::Circle::Label");
  CHECK(label.kind == "function");
  CHECK(label.signature == "() const");
  CHECK(label.enclosing_symbol.empty());
  CHECK(DefLines(Doc(index, "src/circle.cc"), "src/circle.cc#geo::Circle::Label") ==
        std::pair<uint32_t, uint32_t>{14, 17});
  CHECK(DefLines(Doc(index, "src/shape.cc"), "src/shape.cc#geo::Shape::Label") ==
        std::pair<uint32_t, uint32_t>{4, 6});

  // References. The test calls the registry's methods and both overloads of Clamp
  // (a name matches every overload).
  CHECK(RefsTo(index, "src/registry.cc#geo::Registry::Register") ==
        std::vector<std::string>{"include/geo/registry.h:12:7-15", "tests/geo_tests.cc:17:11-19",
                                 "tests/geo_tests.cc:18:11-19"});
  CHECK(RefsTo(index, "src/registry.cc#geo::Registry::SumAreas") ==
        std::vector<std::string>{"include/geo/registry.h:13:9-17", "tests/geo_tests.cc:19:43-51"});
  CHECK(RefsTo(index, "src/math_util.cc#geo::detail::Clamp") ==
        std::vector<std::string>{"include/geo/math_util.h:7:4-9", "include/geo/math_util.h:8:7-12",
                                 "tests/geo_tests.cc:10:22-27", "tests/geo_tests.cc:10:58-63"});
  CHECK(RefsTo(index, "src/math_util.cc#geo::detail::Squared") ==
        std::vector<std::string>{"include/geo/math_util.h:9:7-14", "src/circle.cc:11:23-30",
                                 "src/circle.cc:20:17-24"});
  // The virtual call reaches both overriders (Shape::Area, pure, has no tag); the
  // word "Area" in circle.cc's comment (line 15) is no reference.
  CHECK(RefsAt(index, "src/registry.cc", 10, 51) ==
        std::vector<std::string>{"src/circle.cc#geo::Circle::Area", "src/circle.cc#geo::Square::Area"});
  CHECK(RefsTo(index, "src/circle.cc#geo::Circle::Area") ==
        std::vector<std::string>{"include/geo/circle.h:11:9-13", "include/geo/circle.h:21:9-13",
                                 "include/geo/shape.h:11:17-21", "src/registry.cc:10:51-55"});
  // Constructing a Circle names the class and its constructor.
  CHECK(RefsAt(index, "tests/geo_tests.cc", 14, 7) ==
        std::vector<std::string>{"include/geo/circle.h#geo::Circle",
                                 "include/geo/circle.h#geo::Circle::Circle"});
  // Same-file calls in the test resolve inside it.
  // (ctags names the anonymous namespace after a hash of the path it was given.)
  const std::string test_fn = Keys(Doc(index, "tests/geo_tests.cc"))[1];
  CHECK_THAT(test_fn, Catch::StartsWith("tests/geo_tests.cc#__anon") &&
                          Catch::EndsWith("::TestClampLimits"));
  CHECK(RefsTo(index, test_fn) == std::vector<std::string>{"tests/geo_tests.cc:25:18-33"});
}

TEST_CASE("CtagsCommand on the TypeScript fixture", "[ctags]") {
  const CodeIndex index = IndexTree(std::string(AMEM_SOURCE_DIR) + "/tests/data/code/ts");
  CHECK(Paths(index) == std::vector<std::string>{"package.json", "src/circle.ts", "src/shape.ts",
                                          "src/square.ts", "src/total.test.ts", "src/total.ts",
                                          "tsconfig.json"});
  CHECK(Doc(index, "src/shape.ts").language == "TypeScript");
  CHECK(Keys(Doc(index, "src/circle.ts")) ==
        std::vector<std::string>{"src/circle.ts#Circle", "src/circle.ts#Circle::constructor",
                                 "src/circle.ts#Circle::radius", "src/circle.ts#Circle::area",
                                 "src/circle.ts#Circle::describe"});
  CHECK(Sym(index, "src/shape.ts#Shape").kind == "interface");
  CHECK(Sym(index, "src/shape.ts#Shape::area").kind == "method");
  CHECK(Sym(index, "src/shape.ts#Shape::area").enclosing_symbol == "src/shape.ts#Shape");
  // TypeScript tags have no end: the range is the tag's line.
  CHECK(DefLines(Doc(index, "src/total.ts"), "src/total.ts#totalArea") ==
        std::pair<uint32_t, uint32_t>{3, 3});
  // Across files: the import and the call of totalArea in the test.
  CHECK(RefsTo(index, "src/total.ts#totalArea") ==
        std::vector<std::string>{"src/total.test.ts:2:9-18", "src/total.test.ts:6:9-18"});
  CHECK(RefsTo(index, "src/shape.ts#formatArea") ==
        std::vector<std::string>{"src/circle.ts:0:16-26", "src/circle.ts:10:31-41",
                                 "src/square.ts:0:16-26", "src/square.ts:10:31-41"});
  // A local of the test is named in its own file only; JSON strings are no uses.
  CHECK(RefsTo(index, "src/total.test.ts#testTotalArea::shapes") ==
        std::vector<std::string>{"src/total.test.ts:6:19-25"});
}

TEST_CASE("docs/CODE.md states the ctags command amem runs", "[ctags]") {
  std::ifstream in(std::string(AMEM_SOURCE_DIR) + "/docs/CODE.md");
  const std::string doc((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const size_t section = doc.find("\n## 7. What of universal-ctags is read\n");
  REQUIRE(section != std::string::npos);
  // Every argument, in order, in the section's command line.
  size_t at = section;
  for (const std::string& arg : CtagsCommand()) {
    INFO(arg);
    at = doc.find(arg, at);
    REQUIRE(at != std::string::npos);
    at += arg.size();
  }
}

TEST_CASE("ctags keys survive an edit above the tags", "[ctags]") {
  TempDir dir;
  const std::string tree = dir / "cpp";
  std::filesystem::copy(std::string(AMEM_SOURCE_DIR) + kCppFixture, tree,
                        std::filesystem::copy_options::recursive);
  const CodeIndex before = IndexTree(tree);
  // Lines added above functions, in a .cc and in a header's class.
  for (const std::string& file : {std::string("src/math_util.cc"), std::string("include/geo/circle.h")}) {
    std::ifstream in(tree + "/" + file);
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const size_t at = text.find("namespace geo {");
    REQUIRE(at != std::string::npos);
    text.insert(at, "// Added lines.\n#include <cmath>\n\n");
    WriteFile(tree + "/" + file, text);
  }
  const CodeIndex after = IndexTree(tree);
  REQUIRE(before.documents.size() == after.documents.size());
  for (size_t i = 0; i < before.documents.size(); ++i) {
    const Document& b = before.documents[i];
    const Document& a = after.documents[i];
    INFO(b.path);
    CHECK(a.path == b.path);
    CHECK(Keys(a) == Keys(b));
    std::vector<std::string> b_enclosing, a_enclosing;
    for (const SymbolInfo& s : b.symbols) b_enclosing.push_back(s.enclosing_symbol);
    for (const SymbolInfo& s : a.symbols) a_enclosing.push_back(s.enclosing_symbol);
    CHECK(a_enclosing == b_enclosing);
    const bool edited = b.path == "src/math_util.cc" || b.path == "include/geo/circle.h";
    CHECK((a.digest != b.digest) == edited);
  }
  // The edit did move the tags.
  CHECK(DefLines(Doc(after, "src/math_util.cc"), "src/math_util.cc#geo::detail::Clamp") ==
        std::pair<uint32_t, uint32_t>{8, 11});
}

}  // namespace
}  // namespace amem::index
