// text-search's any-term mode scores few documents: a document whose bound is not
// above the worst of the top-k so far is skipped (query/text_search.cc,
// AnyTermPath). These tests hold the pruned top-k to exhaustive scoring: the scan
// path with no limit scores and orders every matching document, and the pruned
// answer must be its first k rows bit for bit (index, score, matched terms) with
// the same `matched` count, over random corpora with many ties, k from 0 to past
// the matches, repeated and unknown query terms, filters, windows of every size,
// and a base + delta view.
#include <catch2/catch.hpp>

#include <algorithm>
#include <limits>
#include <string>
#include <vector>

#include "query/text_search.h"
#include "snapshot/live.h"
#include "snapshot/writer.h"
#include "tests/query/fixture.h"
#include "tests/snapshot/snapshot_test_util.h"
#include "tests/store/store_test_util.h"

namespace amem::query {
namespace {

using testing::GraphFixture;

struct Rng {
  uint64_t s;
  uint32_t operator()(uint32_t bound) {
    s = s * 6364136223846793005ull + 1442695040888963407ull;
    return static_cast<uint32_t>((s >> 33) % bound);
  }
};

const std::vector<std::string>& Vocab() {
  static const std::vector<std::string> v = {"retry", "policy", "cache", "lmdb",  "store",
                                             "graph", "node",   "edge",  "fast",  "slow",
                                             "page",  "write",  "read",  "merge", "delta"};
  return v;
}

// A text of skewed words; one in four is a copy of a few fixed texts (ties).
std::string Text(Rng& next) {
  static const std::vector<std::string> twins = {"retry policy", "cache cache store",
                                                 "policy cache retry", "lmdb"};
  if (next(4) == 0) return twins[next(twins.size())];
  std::string text;
  const uint32_t len = next(14);  // some empty
  for (uint32_t w = 0; w < len; ++w) {
    text += Vocab()[std::min(next(Vocab().size()), next(Vocab().size()))];
    text += next(3) == 0 ? ", " : " ";
  }
  return text;
}

// A word of letters only for k ("uqa", "uqb", ...): digits would be a term apart.
std::string Unique(uint32_t k) { return amem::testing::LettersWord("uq", k); }

std::string Query(Rng& next) {
  std::string q;
  const uint32_t words = 1 + next(5);
  for (uint32_t w = 0; w < words; ++w) {
    q += next(8) == 0 ? "zzunknown" : Vocab()[next(Vocab().size())];
    q += " ";
    if (next(4) == 0) q += Vocab()[next(3)] + " ";  // repeats of common words
  }
  return q;
}

// The pruned answers for limits from 0 to past the matches against every matching
// document scored and sorted (the scan path with no limit, on `scan_on`); returns
// how many checks failed, reporting each.
int CompareLimits(const snapshot::Reader& pruned_on, const snapshot::Reader& scan_on,
                  Rng& next, const std::string& query, const std::string& what) {
  TextSearchOptions o;
  o.query = query;
  if (next(5) == 0) o.types.Add(NodeType::kDecision);
  if (next(5) == 0) o.runs = ParseRuns(pruned_on, {"odd"});
  o.path = TextSearchOptions::Path::kScan;
  o.limit = std::numeric_limits<uint32_t>::max();
  auto all = TextSearch(scan_on, o);
  REQUIRE(all.ok());
  REQUIRE(all->matched == all->hits.size());
  o.path = TextSearchOptions::Path::kIndex;
  int failed = 0;
  for (uint32_t limit : {0u, 1u, 2u, 3u, 10u, 37u, 1000000u}) {
    o.limit = limit;
    auto a = TextSearch(pruned_on, o);
    REQUIRE(a.ok());
    auto check = [&](bool ok, const std::string& msg) {
      if (!ok) {
        ++failed;
        UNSCOPED_INFO(what << " limit " << limit << ": " << msg);
      }
    };
    check(a->matched == all->matched, "matched");
    check(a->hits.size() == std::min<size_t>(limit, all->hits.size()), "hit count");
    for (size_t j = 0; j < std::min(a->hits.size(), all->hits.size()); ++j) {
      const TextHit &x = a->hits[j], &y = all->hits[j];
      check(x.index == y.index && x.score == y.score && x.matched == y.matched,
            "row " + std::to_string(j));
    }
  }
  return failed;
}

TEST_CASE("text-search: pruned top-k equals exhaustive scoring on random corpora",
          "[query][text-search][property]") {
  Rng next{20260229};
  int failed = 0, checked = 0;
  for (int corpus = 0; corpus < 8; ++corpus) {
    GraphFixture g;
    // Past one window of node numbers (4096) in half of them.
    const uint32_t docs = corpus % 2 ? 4000 + next(6000) : 1 + next(300);
    for (uint32_t d = 0; d < docs; ++d) {
      const auto type = static_cast<NodeType>(next(3));
      std::string text = Text(next);
      if (docs > 1000 && d % 2 == 0) text += " " + Unique(d % 1100);
      g.Node("doc:" + std::to_string(d), type, text).Run(next(2) ? "even" : "odd");
    }
    auto r = g.Open();
    REQUIRE(r->has_term_index());
    for (int query = 0; query < 12; ++query) {
      const std::string q = Query(next);
      if (QueryTerms(q).empty()) continue;
      failed += CompareLimits(*r, *r, next, q, "corpus " + std::to_string(corpus) + " '" + q + "'");
      ++checked;
    }
    // In the large corpora 550 of these terms have postings (the even ones), which
    // shrinks the window to 64 node numbers; the unknown ones add nothing.
    std::string wide = "retry cache";
    for (uint32_t k = 0; k < 1100; ++k) wide += " " + Unique(k) + " zz" + Unique(k);
    failed += CompareLimits(*r, *r, next, wide, "corpus " + std::to_string(corpus) + " wide");
  }
  CHECK(checked > 50);
  CHECK(failed == 0);
}

TEST_CASE("text-search: pruned top-k on a base + delta view equals exhaustive scoring",
          "[query][text-search][property][live]") {
  amem::testing::TempDir dir;
  auto store = amem::testing::OpenStore(dir.path());
  Rng next{7};
  const uint32_t docs = 6000;
  {
    Batch b;
    for (uint32_t d = 0; d < docs; ++d) {
      const std::string text = Text(next);
      b.PutNode(amem::testing::Node("doc:" + std::to_string(d), text,
                                    static_cast<NodeType>(next(3))));
    }
    REQUIRE(store->Apply(b).ok());
  }
  // amem mcp's, with caps small enough to stack views
  const snapshot::LiveOptions options = snapshot_test::McpLiveOptions(100000, 50, 400);
  snapshot::LiveCache cache;
  REQUIRE(snapshot::OpenLive(*store, ReadView::Latest(), options, &cache).ok());
  int failed = 0;
  for (int step = 0; step < 4; ++step) {
    Batch b;
    for (int k = 0; k < 60; ++k) {  // replaced, removed and new documents
      const uint32_t d = next(docs + 200);
      if (next(4) == 0) {
        b.DeleteNode("doc:" + std::to_string(d));
      } else {
        const std::string text = Text(next);
      b.PutNode(amem::testing::Node("doc:" + std::to_string(d), text,
                                    static_cast<NodeType>(next(3))));
      }
    }
    REQUIRE(store->Apply(b).ok());
    auto view = snapshot::OpenLive(*store, ReadView::Latest(), options, &cache);
    REQUIRE(view.ok());
    const snapshot::Reader& r = *view->reader;
    REQUIRE(r.layered());
    auto bytes = snapshot::BuildSnapshot(*store->ReadState(ReadView::Latest()));
    REQUIRE(bytes.ok());
    auto full = snapshot::Reader::OpenBuffer(*bytes);
    REQUIRE(full.ok());
    for (int query = 0; query < 10; ++query) {
      const std::string q = Query(next);
      if (QueryTerms(q).empty()) continue;
      const std::string what = "step " + std::to_string(step) + " '" + q + "'";
      failed += CompareLimits(r, **full, next, q, what + " view");
      failed += CompareLimits(r, r, next, q, what + " view scan");
    }
  }
  CHECK(failed == 0);
}

}  // namespace
}  // namespace amem::query
