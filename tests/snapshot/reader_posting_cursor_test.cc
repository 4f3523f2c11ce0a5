// Posting cursors (snapshot::PostingCursor) on live views: a common term's list
// read through a stack of views, with the nodes at both ends of the list removed,
// replaced and inserted before and after, runs removed from its middle, a node one
// level inserted and the next removed, and terms only the deltas hold. Each view's
// cursors walk and seek as the full export's lists, and text-search answers the
// same bytes (the cursors are what it reads).
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "query/render.h"
#include "query/text_search.h"
#include "snapshot/live.h"
#include "snapshot/reader.h"
#include "snapshot/writer.h"
#include "tests/snapshot/reader_compare.h"
#include "tests/snapshot/snapshot_test_util.h"
#include "tests/store/store_test_util.h"

using namespace amem;
using namespace amem::snapshot;

namespace {

std::string Key(char prefix, int k) {
  std::string key(1, prefix);
  key += static_cast<char>('0' + k / 10);
  key += static_cast<char>('0' + k % 10);
  return key;
}

// `common` k times (its tf), then the rest.
std::string Text(int common, const std::string& rest) {
  std::string s;
  for (int k = 0; k < common; ++k) s += "common ";
  return s + rest;
}

std::vector<std::string> Answers(const Reader& r) {
  std::vector<std::string> out;
  for (const char* q : {"common", "common rare", "fresh common", "fresh", "rare gone"}) {
    for (bool all : {false, true}) {
      for (uint32_t limit : {3u, 1000u}) {
        query::TextSearchOptions o;
        o.query = q;
        o.match_all = all;
        o.limit = limit;
        auto res = query::TextSearch(r, o);
        out.push_back(res.ok() ? query::RenderJson(query::TextSearchJson(r, *res))
                               : res.status().ToString());
      }
    }
  }
  return out;
}

}  // namespace

TEST_CASE("posting cursors over a stack of views walk, seek and answer as the full export",
          "[snapshot][live][cursor]") {
  amem::testing::TempDir dir;
  auto store = amem::testing::OpenStore(dir.path());
  {
    Batch b;
    for (int k = 0; k < 40; ++k) {
      b.PutNode(amem::testing::Node(Key('k', k), Text(1 + k % 3, k % 4 == 0 ? "rare note" : "note")));
    }
    REQUIRE(store->Apply(b).ok());
  }
  // amem mcp's, with caps small enough to stack every step
  const LiveOptions options = amem::snapshot_test::McpLiveOptions(1000, 3, 12);
  LiveCache cache;
  REQUIRE(OpenLive(*store, ReadView::Latest(), options, &cache).ok());  // the base

  using Step = void (*)(Batch*);
  const std::vector<Step> steps = {
      [](Batch* b) {  // both ends of the list go; new ones before and after them
        b->DeleteNode(Key('k', 0));
        b->DeleteNode(Key('k', 39));
        b->PutNode(amem::testing::Node(Key('a', 0), Text(2, "first")));
        b->PutNode(amem::testing::Node(Key('z', 99), Text(1, "last rare")));
      },
      [](Batch* b) {  // replaced in place: another tf, the term dropped, a new term
        b->PutNode(amem::testing::Node(Key('k', 1), Text(5, "changed")));
        b->PutNode(amem::testing::Node(Key('k', 38), "no longer"));
        b->PutNode(amem::testing::Node(Key('k', 20), Text(1, "fresh")));
      },
      [](Batch* b) {  // a run out of the middle, one node put back inside it
        for (int k = 10; k < 15; ++k) b->DeleteNode(Key('k', k));
        b->PutNode(amem::testing::Node("k12b", Text(3, "fresh inside")));
      },
      [](Batch* b) {  // a node a lower level inserted is removed, another first one
        b->DeleteNode(Key('a', 0));
        b->PutNode(amem::testing::Node(Key('a', 1), Text(1, "fresh")));
      },
      [](Batch* b) {  // the new last one loses the term; a replaced one goes
        b->PutNode(amem::testing::Node(Key('z', 99), "last"));
        b->DeleteNode(Key('k', 1));
      },
      [](Batch* b) {  // a block of new nodes at one gap
        for (int k = 0; k < 6; ++k) b->PutNode(amem::testing::Node(Key('b', k), Text(1 + k, "block")));
      },
      [](Batch* b) {  // every rare node goes: the term leaves the index
        for (int k = 4; k < 39; k += 4) {
          if (k < 10 || k >= 15) b->DeleteNode(Key('k', k));
        }
      },
      // A run of new documents at one gap (as an agent's session writes them),
      // which the cursors read as one stretch of a lower level's delta; then small
      // writes that a higher level holds break into it: a node put inside it,
      // one removed from it, one replaced with another tf, one without the term.
      [](Batch* b) {
        for (int k = 0; k < 30; ++k) b->PutNode(amem::testing::Node(Key('r', k), Text(1 + k % 2, "runs")));
      },
      [](Batch* b) {
        b->PutNode(amem::testing::Node("r05b", Text(2, "runs inside")));
        b->DeleteNode(Key('r', 9));
      },
      [](Batch* b) {
        b->PutNode(amem::testing::Node(Key('r', 14), Text(4, "runs")));
        b->PutNode(amem::testing::Node("r20b", "runs without the other word"));
      },
      [](Batch* b) { b->DeleteNode(Key('r', 25)); },
  };
  int deepest = 0;
  for (size_t step = 0; step < steps.size(); ++step) {
    INFO("step " << step);
    Batch b;
    steps[step](&b);
    REQUIRE(store->Apply(b).ok());
    auto view = OpenLive(*store, ReadView::Latest(), options, &cache);
    REQUIRE(view.ok());
    const Reader& r = *view->reader;
    int depth = 0;
    for (const Reader* x = &r; x->layered(); x = x->layer_base().get()) ++depth;
    deepest = std::max(deepest, depth);
    auto bytes = BuildSnapshot(*store->ReadState(ReadView::Latest()));
    REQUIRE(bytes.ok());
    auto full = Reader::OpenBuffer(*bytes);
    REQUIRE(full.ok());
    const Reader& head = **full;
    for (const char* term : {"common", "rare", "fresh", "note", "block", "runs"}) {
      INFO("term " << term);
      auto t = head.FindTerm(term);
      auto vt = r.FindTerm(term);
      if (!t) {  // gone at the head: the view may keep the term, with no postings
        if (vt) {
          PostingCursor c = r.postings_cursor(*vt);
          CHECK(c.done());
          CHECK(c.size() == 0);
        }
        continue;
      }
      REQUIRE(vt);
      for (Field f : {Field::kContent, Field::kMeta}) {
        amem::snapshot_test::CheckSameCursor(r, *vt, head, head.postings(*t, f), f);
      }
    }
    CHECK(Answers(r) == Answers(head));
    CHECK(r.ReadStatus().ok());
    CHECK((step != 6 || !head.FindTerm("rare")));  // the last step empties a list
  }
  CHECK(deepest >= 2);  // the cursors went through a view over a view
}
