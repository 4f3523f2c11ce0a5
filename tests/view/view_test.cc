// tools/view/view.h on hand-made subgraphs: the writers' escaping of what no store
// test reaches easily (control characters, U+2028 in the JSON block), the format
// names and the header's time.
#include <catch2/catch.hpp>

#include <string>

#include <nlohmann/json.hpp>

#include "tools/view/view.h"

namespace amem::view {
namespace {

Subgraph TwoNodes(const std::string& key) {
  Subgraph g;
  g.header = {"path", "a b", "revision 1, committed 2023-11-14T22:13:20Z"};
  Node a;
  a.index = 0;
  a.key = key;
  a.type = "fact";
  a.role = "nodes";
  a.content = key;
  Node b = a;
  b.index = 7;
  b.key = "plain";
  g.nodes = {a, b};
  g.edges = {Edge{0, 1, "rel\"x", 0.5f, true}};
  return g;
}

TEST_CASE("ScriptSafeJson leaves nothing that could end a script block", "[view]") {
  const query::Json v = {{"k", "</script><!-- & \xE2\x80\xA8 \xE2\x80\xA9 >"}};
  const std::string s = ScriptSafeJson(v);
  CHECK(s == "{\"k\":\"\\u003c/script\\u003e\\u003c!-- \\u0026 \\u2028 \\u2029 \\u003e\"}");
  CHECK(query::Json::parse(s) == v);  // and reads back as the same value
}

TEST_CASE("control characters never reach DOT, Mermaid or GraphML raw", "[view]") {
  const Subgraph g = TwoNodes(std::string("a\x01") + "b\r\"c\\\n\x7f");
  const std::string dot = WriteDot(g);
  CHECK(dot.find("n0 [label=\"a b \\\"c\\\\\\n \\n(fact)\"") != std::string::npos);
  CHECK(dot.find("n0 -> n7 [label=\"rel\\\"x 0.5\", penwidth=2];") != std::string::npos);
  const std::string mermaid = WriteMermaid(g);
  CHECK(mermaid.find("  n0[\"a b #quot;c#92;  <br/>(fact)\"]\n") != std::string::npos);
  CHECK(mermaid.find("  n0 ==>|\"rel#quot;x 0.5\"| n7\n") != std::string::npos);
  const std::string graphml = WriteGraphml(g);
  CHECK(graphml.find("<data key=\"key\">a\xEF\xBF\xBD" "b\r&quot;c\\\n\xEF\xBF\xBD</data>") !=
        std::string::npos);
  for (const std::string& out : {dot, mermaid, graphml}) {
    for (char c : out) {
      const unsigned char u = static_cast<unsigned char>(c);
      CHECK_FALSE(((u < 0x20 && c != '\n' && c != '\r') || u == 0x7f));
    }
  }
}

TEST_CASE("formats are named and chosen by the output's name", "[view]") {
  CHECK(*ParseFormat("graphml") == Format::kGraphml);
  CHECK(ParseFormat("svg").status().message() ==
        "unknown format 'svg'; choose html, dot, mermaid or graphml");
  CHECK(DefaultFormat("") == Format::kDot);
  CHECK(DefaultFormat("x.html") == Format::kHtml);
  CHECK(DefaultFormat("x.htm") == Format::kHtml);
  CHECK(DefaultFormat("x.mmd") == Format::kMermaid);
  CHECK(DefaultFormat("x.graphml") == Format::kGraphml);
  CHECK(DefaultFormat("x.html.txt") == Format::kDot);
  CHECK(FormatTime(1700000000) == "2023-11-14T22:13:20Z");
  CHECK(FormatTime(0) == "1970-01-01T00:00:00Z");
}

}  // namespace
}  // namespace amem::view
