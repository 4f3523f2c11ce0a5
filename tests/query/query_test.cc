// query.h: the node resolver, filters and node rows.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "common/hash.h"
#include "query/query.h"
#include "query/render.h"
#include "tests/query/fixture.h"

using namespace amem;
using namespace amem::query;
using amem::testing::GraphFixture;

TEST_CASE("ResolveNode accepts a key, a hex id or a dense index", "[query]") {
  GraphFixture g;
  g.Node("file:a", NodeType::kFile, "alpha");
  g.Node("file:b", NodeType::kFile, "beta");
  g.Node("7", NodeType::kEntity, "a key made of digits");
  auto r = g.Open();
  uint32_t a = GraphFixture::Index(*r, "file:a");
  CHECK(*ResolveNode(*r, "file:a") == a);
  CHECK(*ResolveNode(*r, FormatHexId(NodeIdForKey("file:a"))) == a);
  CHECK(*ResolveNode(*r, "0x" + FormatHexId(NodeIdForKey("file:a"))) == a);
  CHECK(*ResolveNode(*r, std::to_string(a)) == a);
  CHECK(*ResolveNode(*r, "#" + std::to_string(a)) == a);
  // A key wins over the index reading of the same text.
  CHECK(*ResolveNode(*r, "7") == GraphFixture::Index(*r, "7"));

  auto missing = ResolveNode(*r, "file:zzz");
  REQUIRE_FALSE(missing.ok());
  CHECK(missing.status().IsNotFound());
  CHECK(missing.status().message().find("file:zzz") != std::string::npos);
  CHECK(ResolveNode(*r, "3").status().IsNotFound());  // index out of range
  CHECK(ResolveNode(*r, "#").status().IsNotFound());
  CHECK(ResolveNode(*r, "-1").status().IsNotFound());
  CHECK(ResolveNode(*r, "99999999999999999999").status().IsNotFound());
  CHECK(ResolveNode(*r, FormatHexId(12345)).status().IsNotFound());
  CHECK(ResolveNode(*r, "").status().IsInvalidArgument());
}

TEST_CASE("Relation, type and run filters parse names and reject unknown ones", "[query]") {
  GraphFixture g;
  g.Node("a").Run("r1");
  g.Node("b").Run("r2");
  g.Edge("a", "blocks", "b");  // custom relation, id 64
  auto r = g.Open();

  auto rels = ParseRelations(*r, {"caused_by,supports", "blocks"});
  REQUIRE(rels.ok());
  CHECK(rels->Matches(kCausedBy));
  CHECK(rels->Matches(kSupports));
  CHECK(rels->Matches(64));
  CHECK_FALSE(rels->Matches(kCalls));
  CHECK(ParseRelations(*r, {})->all());
  CHECK(ParseRelations(*r, {"9"})->Matches(kCalls));
  CHECK(ParseRelations(*r, {"nope"}).status().IsInvalidArgument());
  CHECK(ParseRelations(*r, {"65"}).status().IsInvalidArgument());  // undefined id
  CHECK(ParseRelations(*r, {"300"}).status().IsInvalidArgument());

  auto types = ParseTypes({"decision,fact"});
  REQUIRE(types.ok());
  CHECK(types->Matches(NodeType::kDecision));
  CHECK_FALSE(types->Matches(NodeType::kFile));
  CHECK(ParseTypes({"procedure"})->Matches(NodeType::kSkill));
  CHECK(ParseTypes({"bogus"}).status().IsInvalidArgument());

  RunFilter runs = ParseRuns(*r, {"r2", "unknown-run"});
  CHECK_FALSE(runs.all());
  CHECK(runs.Matches(r->session(GraphFixture::Index(*r, "b"))));
  CHECK_FALSE(runs.Matches(r->session(GraphFixture::Index(*r, "a"))));
  RunFilter none = ParseRuns(*r, {"unknown-run"});
  CHECK_FALSE(none.Matches(0));
  CHECK_FALSE(none.Matches(r->session(GraphFixture::Index(*r, "a"))));

  CHECK(ParseDirection("both").ok());
  CHECK(ParseDirection("sideways").status().IsInvalidArgument());
  CHECK(SplitList({"a,,b", "", "c"}) == std::vector<std::string>{"a", "b", "c"});
}

TEST_CASE("Node rows carry index, id, key, type and a UTF-8-safe preview", "[query][render]") {
  GraphFixture g;
  std::string long_text(79, 'x');
  long_text += "\xc3\xa9 and more";  // é straddles the 80-byte cut
  g.Node("fact:long", NodeType::kFact, long_text);
  auto r = g.Open();
  NodeRow row = MakeNodeRow(*r, 0);
  CHECK(row.index == 0);
  CHECK(row.id == NodeIdForKey("fact:long"));
  CHECK(row.key == "fact:long");
  CHECK(row.type == NodeType::kFact);
  CHECK(row.preview == std::string(79, 'x') + "\xe2\x80\xa6");

  Json j = NodeRowJson(row);
  CHECK(j["id"] == FormatHexId(NodeIdForKey("fact:long")));
  CHECK(j["type"] == "fact");
  std::string json = RenderJson(j);
  CHECK(json.back() == '\n');
  CHECK(Json::parse(json) == j);
}
