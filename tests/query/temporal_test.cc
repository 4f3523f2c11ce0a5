// Query 5, temporal: two periods compared item by item.
#include "query/temporal.h"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "snapshot/reader.h"
#include "tests/query/fixture.h"

using namespace amem;
using namespace amem::query;
using amem::testing::GraphFixture;

TEST_CASE("temporal splits two periods into added, corrected, updated, unchanged",
          "[query][temporal]") {
  GraphFixture g;
  // Period A = [100, 200), B = [200, 300).
  g.Node("a-kept").Ts(110);
  g.Node("a-edited").Ts(120, 250);  // updated inside B
  g.Node("a-late-edit").Ts(130, 350);  // updated after B: unchanged for this question
  g.Node("a-old").Ts(140);
  g.Node("b-fix").Ts(210);
  g.Node("b-new").Ts(220);
  g.Node("outside").Ts(500);
  g.Edge("b-fix", "supersedes", "a-old");
  g.Edge("outside", "supersedes", "a-kept");  // the newer version is not in B
  auto r = g.Open();
  auto keys = [&](const std::vector<uint32_t>& v) {
    std::vector<std::string> out;
    for (uint32_t i : v) out.emplace_back(r->key(i));
    return out;
  };
  using V = std::vector<std::string>;
  TemporalOptions o;
  o.a = *ParsePeriod("100..200");
  o.b = *ParsePeriod("200..300");
  auto t = Temporal(*r, o);
  CHECK(keys(t.added) == V{"b-fix", "b-new"});
  REQUIRE(t.corrected.size() == 1);
  CHECK(r->key(t.corrected[0].newer) == "b-fix");
  CHECK(r->key(t.corrected[0].older) == "a-old");
  CHECK(keys(t.updated) == V{"a-edited"});
  CHECK(keys(t.unchanged) == V{"a-kept", "a-late-edit"});
  CHECK(t.a_count == 4);
  CHECK(t.b_count == 2);

  // The same question by runs.
  GraphFixture h;
  h.Node("x1").Ts(10).Run("monday");
  h.Node("x2").Ts(20, 35).Run("monday");
  h.Node("y1").Ts(30).Run("tuesday");
  h.Node("y2").Ts(40).Run("tuesday");
  h.Edge("y2", "supersedes", "x1");
  auto s = h.Open();
  TemporalOptions runs;
  runs.a = *ParsePeriod("run:monday");
  runs.b = *ParsePeriod("run:tuesday");
  auto u = Temporal(*s, runs);
  CHECK(u.added.size() == 2);
  CHECK(u.corrected.size() == 1);
  CHECK(u.updated.size() == 1);  // x2 updated at 35, inside tuesday's [30, 41)
  CHECK(u.unchanged.empty());
  runs.limit = 1;
  auto cut = Temporal(*s, runs);
  CHECK(cut.added.size() == 1);
  CHECK(cut.added_count == 2);
  Json j = TemporalJson(*s, u);
  CHECK(j["counts"]["added"] == 2);

  // Overlapping periods: a node in both is not "added".
  TemporalOptions same;
  same.a = *ParsePeriod("..");
  same.b = *ParsePeriod("..");
  CHECK(Temporal(*s, same).added.empty());

  CHECK(ParsePeriod("abc").status().IsInvalidArgument());
  CHECK(ParsePeriod("1..x").status().IsInvalidArgument());
  CHECK(ParsePeriod("run:").status().IsInvalidArgument());
  CHECK(ParsePeriod("..5")->to == 5);
  CHECK_FALSE(ParsePeriod("..5")->from.has_value());
}
