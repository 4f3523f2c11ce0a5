// Fuzzes the writers of `amem view` (tools/view/view.h): any bytes as a key, a
// content and a relation must leave every format's structure intact: the HTML page
// closes exactly its three script blocks and its JSON block reads back; each DOT
// line balances its quotes; each Mermaid node and edge line holds exactly two
// quotes; GraphML opens and closes each data element and holds no character XML
// forbids. Run by tests/run_fuzz.sh (tests/fuzz.cmake).
// fuzz-link: tools/view/text_formats.cc tools/view/html.cc
// fuzz-pkg: libxxhash
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "tools/view/library.h"
#include "tools/view/view.h"

namespace amem::view {
// Stand-ins for the generated library (tools/view/view.cmake), so that the page is
// written whole.
const std::string_view kLibraryName = "lib@0";
const std::string_view kLibraryJs = "var lib = 1;";
const std::string_view kLibraryLicense = "MIT -- licence";
const std::string_view kPageJs = "var page = 1;";
}  // namespace amem::view

namespace {

using amem::view::Subgraph;

void Require(bool ok) {
  if (!ok) std::abort();
}

size_t Count(const std::string& text, std::string_view what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string in(reinterpret_cast<const char*>(data), size);
  Subgraph g;
  g.header = {"traverse", in, "revision 1"};
  amem::view::Node a;
  a.index = 1;
  a.key = in;
  a.type = "fact";
  a.role = in;
  a.content = in;
  a.meta = in;
  a.fields = {{in, in}};
  amem::view::Node b = a;
  b.index = 2;
  b.key = "other";
  g.nodes = {a, b};
  g.edges = {amem::view::Edge{0, 1, in, 0.5f, true}};

  auto html = amem::view::WriteHtml(g);
  Require(html.ok());
  Require(Count(*html, "</script") == 3);
  const std::string open = "<script type=\"application/json\" id=\"amem-data\">";
  const size_t start = html->find(open) + open.size();
  const std::string block = html->substr(start, html->find("</script>", start) - start);
  const auto parsed = amem::query::Json::parse(block, nullptr, false);
  Require(!parsed.is_discarded());
  Require(parsed["nodes"].size() == 2);

  const std::string dot = amem::view::WriteDot(g);
  size_t line_start = 0;
  while (line_start < dot.size()) {
    const size_t end = dot.find('\n', line_start);
    bool quoted = false;
    for (size_t i = line_start; i < end; ++i) {
      if (dot[i] == '\\' && quoted) {
        ++i;
      } else if (dot[i] == '"') {
        quoted = !quoted;
      }
    }
    Require(!quoted);
    line_start = end + 1;
  }

  const std::string mermaid = amem::view::WriteMermaid(g);
  Require(Count(mermaid, "\n  n") == 3);  // two nodes and one edge
  for (size_t at = mermaid.find("\n  n"); at != std::string::npos;
       at = mermaid.find("\n  n", at + 1)) {
    const std::string line = mermaid.substr(at + 1, mermaid.find('\n', at + 1) - at - 1);
    Require(Count(line, "\"") == 2);
  }

  const std::string graphml = amem::view::WriteGraphml(g);
  Require(Count(graphml, "<data ") == Count(graphml, "</data>"));
  for (char c : graphml) {
    const unsigned char u = static_cast<unsigned char>(c);
    Require(!((u < 0x20 && c != '\n' && c != '\r' && c != '\t') || u == 0x7F));
  }
  return 0;
}
