#include "tools/io/query_docs.h"

#include <catch2/catch.hpp>

#include <cstdlib>
#include <fstream>
#include <iterator>
#include <string>

#include "tests/test_paths.h"
#include "tools/io/query_table.h"

namespace amem::io {
namespace {

std::string ReadText(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

TEST_CASE("docs/MCP.md holds the query tools' reference the query table makes",
          "[io][query-docs]") {
  const std::string path = std::string(AMEM_SOURCE_DIR) + "/docs/MCP.md";
  std::string doc = ReadText(path);
  const size_t begin = doc.find(kQueryDocsBegin);
  const size_t end = doc.find(kQueryDocsEnd);
  REQUIRE(begin != std::string::npos);
  REQUIRE(end != std::string::npos);
  REQUIRE(begin < end);
  const size_t from = begin + kQueryDocsBegin.size();
  const std::string expected = QueryToolReference() + "\n";
  if (const char* update = std::getenv("AMEM_UPDATE_DOCS"); update && std::string(update) == "1") {
    doc.replace(from, end - from, "\n" + expected);
    std::ofstream(path, std::ios::binary | std::ios::trunc) << doc;
  }
  INFO("stale: run AMEM_UPDATE_DOCS=1 build/amem_tests \"[query-docs]\" to write it again");
  CHECK(doc.substr(from, end - from) == "\n" + expected);
}

TEST_CASE("the query tools' reference names every tool and every argument MCP takes",
          "[io][query-docs]") {
  const std::string ref = QueryToolReference();
  for (const QueryDef& def : Queries()) {
    INFO(def.tool);
    CHECK(ref.find("### `" + def.tool + "` (`amem " + def.command + "`)") != std::string::npos);
    const size_t at = ref.find("### `" + def.tool + "`");
    const size_t next = ref.find("\n### ", at + 1);
    const std::string section = ref.substr(at, next == std::string::npos ? next : next - at);
    CHECK(section.find(def.description) != std::string::npos);
    for (const Param& p : def.params) {
      INFO(p.name);
      const bool listed = section.find("| `" + p.name + "` |") != std::string::npos;
      CHECK(listed == (p.scope != ParamScope::kCliOnly));
    }
  }
  // A pipe in a cell would split the table's row.
  for (size_t line = 0; line < ref.size();) {
    const size_t eol = ref.find('\n', line);
    const std::string row = ref.substr(line, eol - line);
    if (row.rfind("| `", 0) == 0) {
      size_t pipes = 0;
      for (size_t i = 0; i < row.size(); ++i) pipes += row[i] == '|' && (i == 0 || row[i - 1] != '\\');
      CHECK(pipes == 4);
    }
    line = eol == std::string::npos ? ref.size() : eol + 1;
  }
}

}  // namespace
}  // namespace amem::io
