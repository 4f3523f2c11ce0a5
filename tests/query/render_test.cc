// render.h: the shared text renderer.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "common/hash.h"
#include "query/query.h"
#include "query/render.h"
#include "tests/query/fixture.h"

using namespace amem;
using namespace amem::query;
using amem::testing::GraphFixture;

TEST_CASE("Text rendering lays out scalars, nodes, edges and lists", "[query][render]") {
  NodeRow row{3, 0xabc, "file:a", NodeType::kFile, "hello"};
  Json doc;
  doc["query"] = "demo";
  doc["found"] = true;
  doc["score"] = 0.5;
  doc["start"] = NodeRowJson(row);
  Json item = NodeRowJson(row);
  item["depth"] = 2;
  item["via"] = EdgeJson("file:a", "defines", "symbol:x", 1.0f);
  doc["nodes"] = Json::array({item});
  doc["edges"] = Json::array({EdgeJson("file:a", "defines", "symbol:x", 1.0f)});
  doc["empty"] = Json::array();
  std::string text = RenderText(doc);
  CHECK(text ==
        "query: demo\n"
        "found: true\n"
        "score: 0.5\n"
        "start: file:a (file #3) \"hello\"\n"
        "nodes (1):\n"
        "  - file:a (file #3) \"hello\"  depth=2  via={file:a --defines--> symbol:x  weight=1}\n"
        "edges (1):\n"
        "  - file:a --defines--> symbol:x  weight=1\n"
        "empty (0): none\n");
  CHECK(Render(doc, Format::kJson) == RenderJson(doc));
  // Invalid UTF-8 (never in a validated snapshot) is replaced, not thrown.
  Json bad;
  bad["key"] = std::string("\xff\xfe");
  CHECK_NOTHROW(RenderJson(bad));
  CHECK_NOTHROW(RenderText(bad));
}
