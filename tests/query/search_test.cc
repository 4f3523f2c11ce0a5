#include "query/search.h"

#include <catch2/catch.hpp>

#include <algorithm>

#include <nlohmann/json.hpp>

#include "query/temporal.h"
#include "snapshot/reader.h"
#include "tests/query/fixture.h"
#include "tests/query/graph_gen.h"

using namespace amem;
using namespace amem::query;
using amem::testing::GraphFixture;

namespace {

std::vector<std::string> Keys(const snapshot::Reader& r, const std::vector<uint32_t>& v) {
  std::vector<std::string> out;
  for (uint32_t i : v) out.emplace_back(r.key(i));
  return out;
}

GraphFixture Memories() {
  GraphFixture g;
  g.Node("d1", NodeType::kDecision).Ts(100).Confidence(0.9f).Run("r1").Scope("proj");
  g.Node("d2", NodeType::kDecision).Ts(300).Confidence(0.5f).Run("r2").Scope("proj");
  g.Node("f1", NodeType::kFact).Ts(200).Confidence(0.9f).Run("r1");
  g.Node("f2", NodeType::kFact).Ts(300).Confidence(0.7f).Run("r2");
  g.Node("i1", NodeType::kInference).Ts(400).Confidence(0.2f).Run("r2").Scope("other");
  return g;
}

}  // namespace

TEST_CASE("search filters by type, run, scope, confidence and time", "[query][search]") {
  auto g = Memories();
  auto r = g.Open();
  using V = std::vector<std::string>;
  SearchOptions all;
  auto res = Search(*r, all);
  // Recent first; f2 and d2 tie at 300 -> dense index order (d2 in r2 sorts... by index).
  REQUIRE(res.nodes.size() == 5);
  CHECK(r->key(res.nodes[0]) == "i1");
  CHECK(r->key(res.nodes[4]) == "d1");
  CHECK(res.nodes[1] < res.nodes[2]);
  CHECK(res.matched == 5);

  SearchOptions dec;
  dec.types = *ParseTypes({"decision"});
  CHECK(Keys(*r, Search(*r, dec).nodes) == V{"d2", "d1"});
  CHECK(std::string(Search(*r, dec).plan) == "type index");

  SearchOptions run;
  run.runs = {"r1"};
  run.sort = SearchOptions::Sort::kConfidence;
  auto byrun = Search(*r, run);
  CHECK(Keys(*r, byrun.nodes).size() == 2);
  CHECK(byrun.nodes[0] < byrun.nodes[1]);  // equal confidence 0.9: index order
  CHECK(std::string(byrun.plan) == "session index");

  SearchOptions window;
  window.after = 200;
  window.before = 400;  // [200, 400)
  CHECK(Keys(*r, Search(*r, window).nodes).size() == 3);
  CHECK(std::string(Search(*r, window).plan) == "time index");

  SearchOptions scope;
  scope.scope = "proj";
  scope.min_confidence = 0.6f;
  CHECK(Keys(*r, Search(*r, scope).nodes) == V{"d1"});

  SearchOptions conf;
  conf.sort = SearchOptions::Sort::kConfidence;
  conf.max_confidence = 0.75f;
  conf.limit = 2;
  auto c = Search(*r, conf);
  CHECK(Keys(*r, c.nodes) == V{"f2", "d2"});
  CHECK(c.matched == 3);

  SearchOptions nothing;
  nothing.runs = {"no-such-run"};
  CHECK(Search(*r, nothing).nodes.empty());
  SearchOptions backwards;
  backwards.after = 500;
  backwards.before = 100;
  CHECK(Search(*r, backwards).nodes.empty());
  SearchOptions zero;
  zero.limit = 0;
  CHECK(Search(*r, zero).nodes.empty());
  CHECK(Search(*r, zero).matched == 5);
  CHECK(ParseSearchSort("bogus").status().IsInvalidArgument());
  Json j = SearchJson(*r, res, all);
  CHECK(j["nodes"][0]["run"] == "r2");
}

TEST_CASE("search equals a filtered full sort on random graphs", "[query][search]") {
  auto g = amem::testing::RandomGraph(7, 200, 10);
  auto r = g.Open();
  for (int variant = 0; variant < 8; ++variant) {
    SearchOptions o;
    o.limit = 7;
    if (variant & 1) o.types = *ParseTypes({"fact,decision,file,entity"});
    if (variant & 2) o.runs = {"r0", "r2"};
    if (variant & 4) {
      o.after = 1010;
      o.before = 1030;
    }
    o.sort = variant % 3 ? SearchOptions::Sort::kRecent : SearchOptions::Sort::kConfidence;
    o.min_confidence = 0.1f;
    std::vector<uint32_t> ref;
    RunFilter runs = ParseRuns(*r, o.runs);
    for (uint32_t i = 0; i < r->node_count(); ++i) {
      int64_t ts = r->created_ts(i);
      if (o.types.Matches(r->type(i)) && runs.Matches(r->session(i)) &&
          r->confidence(i) >= 0.1f && (!o.after || ts >= *o.after) &&
          (!o.before || ts < *o.before)) {
        ref.push_back(i);
      }
    }
    auto key = [&](uint32_t i) {
      return o.sort == SearchOptions::Sort::kRecent ? static_cast<double>(r->created_ts(i))
                                                    : static_cast<double>(r->confidence(i));
    };
    std::sort(ref.begin(), ref.end(), [&](uint32_t a, uint32_t b) {
      return key(a) != key(b) ? key(a) > key(b) : a < b;
    });
    auto res = Search(*r, o);
    CHECK(res.matched == ref.size());
    if (ref.size() > o.limit) ref.resize(o.limit);
    CHECK(res.nodes == ref);
  }
}

TEST_CASE("search and temporal on an empty graph return empty answers",
          "[query][search][temporal]") {
  GraphFixture empty;
  auto r = empty.Open();
  REQUIRE(r->node_count() == 0);
  SearchOptions all;
  CHECK(Search(*r, all).nodes.empty());
  for (auto sort : {SearchOptions::Sort::kRecent, SearchOptions::Sort::kConfidence}) {
    SearchOptions o;
    o.sort = sort;
    o.types.Add(NodeType::kDecision);
    o.runs = {"r1"};
    o.scope = "proj";
    o.after = 0;
    o.before = 1000;
    auto s = Search(*r, o);
    CHECK(s.nodes.empty());
    CHECK(s.matched == 0);
    CHECK(SearchJson(*r, s, o)["nodes"].empty());
  }
  for (const char* a : {"..", "run:monday", "0..100"}) {
    TemporalOptions o;
    o.a = *ParsePeriod(a);
    o.b = *ParsePeriod("..");
    auto t = Temporal(*r, o);
    CHECK(t.added.empty());
    CHECK(t.corrected.empty());
    CHECK(t.updated.empty());
    CHECK(t.unchanged.empty());
    CHECK(t.a_count == 0);
    CHECK(t.b_count == 0);
    Json j = TemporalJson(*r, t);
    CHECK(j["counts"]["added"] == 0);
  }
}
