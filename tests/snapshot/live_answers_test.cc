// The live views answer every query as a fresh full export does (docs/STORE.md §10,
// docs/QUERIES.md): a store of the benchmark workload (bench/workload.h) takes
// rounds of writes (new nodes with their edges, updates, deletes, edge changes),
// and after each round the 16 queries, rendered as JSON, must be the same bytes on
// the export of the head revision, on a one-shot process's view (base + delta,
// the delta file written) and on amem mcp's view (a LiveCache's stack of views,
// small caps, merging in the background for the second half of the rounds).
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "bench/workload.h"
#include "query/analogy.h"
#include "query/centrality.h"
#include "query/consolidate.h"
#include "query/context.h"
#include "query/drift.h"
#include "query/gaps.h"
#include "query/hybrid_search.h"
#include "query/impact.h"
#include "query/path.h"
#include "query/render.h"
#include "query/resolve.h"
#include "query/revise.h"
#include "query/search.h"
#include "query/similar.h"
#include "query/temporal.h"
#include "query/text_search.h"
#include "query/traverse.h"
#include "snapshot/live.h"
#include "snapshot/reader.h"
#include "snapshot/writer.h"
#include "tests/sanitizer.h"
#include "tests/snapshot/snapshot_test_util.h"
#include "tests/store/store_test_util.h"

namespace amem::live_answers {
namespace {

using query::Json;

// The nodes the queries start from: workload nodes the writes update but never
// delete (a deleted anchor would make most answers a NotFound on both sides).
struct Anchors {
  std::vector<std::string> keys;
};

// "<name>: <rendered JSON>" or "<name>: error <status>" for each query, in a fixed
// order; the queries that take a node run from each anchor that exists.
std::vector<std::string> AllAnswers(const snapshot::Reader& r, const Anchors& anchors,
                                    int64_t start_ts) {
  std::vector<std::string> out;
  auto add = [&](const std::string& name, const Json& doc) {
    out.push_back(name + ": " + query::RenderJson(doc));
  };
  auto add_result = [&](const std::string& name, const auto& result, auto&& to_json) {
    if (!result.ok()) {
      out.push_back(name + ": error " + result.status().ToString());
    } else {
      add(name, to_json(*result));
    }
  };
  std::vector<uint32_t> nodes;
  for (const std::string& key : anchors.keys) {
    auto i = r.FindKey(key);
    out.push_back("anchor " + key + (i ? " found" : " missing"));
    if (i) nodes.push_back(*i);
  }
  const std::vector<std::string>& words = bench::Vocabulary();
  const std::string text = words[3] + " " + words[17] + " " + words[40] + " " + words[300];

  // 1 traverse, 4 impact, 7 resolve, 5 similar (by node), 14 analogy, 12 revise.
  for (size_t k = 0; k < nodes.size(); ++k) {
    const uint32_t i = nodes[k];
    const std::string at = " " + anchors.keys[k];
    query::TraverseOptions to;
    to.direction = k % 2 ? query::Direction::kBoth : query::Direction::kOut;
    to.depth = 3;
    add("traverse" + at, query::TraverseJson(r, query::Traverse(r, i, to), to));
    add("impact" + at, query::ImpactJson(r, query::Impact(r, i, {})));
    add("resolve" + at, query::ResolveJson(r, query::Resolve(r, i, {})));
    query::SimilarOptions so;
    so.node = i;
    add_result("similar" + at, query::Similar(r, so), [&](const auto& x) { return query::SimilarJson(r, x); });
    add_result("analogy" + at, query::Analogy(r, i), [](const auto& x) { return query::AnalogyJson(x); });
    add_result("revise" + at, query::Revise(r, {i}), [](const auto& x) { return query::ReviseJson(x); });
  }
  // 2 search.
  for (auto sort : {query::SearchOptions::Sort::kRecent, query::SearchOptions::Sort::kConfidence}) {
    query::SearchOptions so;
    so.sort = sort;
    so.limit = 30;
    add("search", query::SearchJson(r, query::Search(r, so), so));
  }
  // 3 temporal: the first two sessions' days against everything after.
  {
    query::TemporalOptions t;
    t.a.from = start_ts;
    t.a.to = start_ts + 2 * 21600;
    t.b.from = start_ts + 2 * 21600;
    add("temporal", query::TemporalJson(r, query::Temporal(r, t)));
  }
  // 6 context, as JSON and as the text the CLI prints.
  if (!nodes.empty()) {
    for (auto format : {query::Format::kJson, query::Format::kText}) {
      query::ContextOptions co;
      co.format = format;
      const std::vector<uint32_t> seeds(nodes.begin(), nodes.begin() + std::min<size_t>(2, nodes.size()));
      auto c = query::BuildContextChecked(r, seeds, co);
      if (!c.ok()) {
        out.push_back("context: error " + c.status().ToString());
      } else if (format == query::Format::kJson) {
        add("context", query::ContextJson(r, *c, co));
      } else {
        out.push_back("context text: " + query::ContextText(r, *c, co));
      }
    }
  }
  // 11 path, unweighted and weighted.
  if (nodes.size() >= 2) {
    for (bool weighted : {false, true}) {
      query::PathOptions po;
      po.weighted = weighted;
      add("path", query::PathJson(r, query::FindPath(r, nodes[0], nodes.back(), po), po));
    }
  }
  // 5 similar (by text), 8 text-search, 9 hybrid-search.
  {
    query::SimilarOptions so;
    so.text = text;
    add_result("similar text", query::Similar(r, so), [&](const auto& x) { return query::SimilarJson(r, x); });
    query::TextSearchOptions ts;
    ts.query = text;
    ts.limit = 20;
    add_result("text-search", query::TextSearch(r, ts), [&](const auto& x) { return query::TextSearchJson(r, x); });
    query::HybridSearchOptions hs;
    hs.text = text;
    add_result("hybrid-search", query::HybridSearch(r, hs),
               [&](const auto& x) { return query::HybridSearchJson(r, x); });
  }
  // 10 centrality, each metric.
  for (auto metric : {query::CentralityMetric::kPageRank, query::CentralityMetric::kBetweenness,
                      query::CentralityMetric::kDegree}) {
    query::CentralityOptions co;
    co.metric = metric;
    add_result("centrality", query::Centrality(r, co), [&](const auto& x) { return query::CentralityJson(r, x); });
  }
  // 13 gaps, 15 consolidate, 16 drift.
  add_result("gaps", query::FindGaps(r), [](const auto& x) { return query::GapsJson(x); });
  query::ConsolidateOptions co;
  add_result("consolidate", query::PlanConsolidation(r, co),
             [&](const auto& x) { return query::ConsolidateJson(r, x, co, nullptr); });
  query::DriftOptions dr;
  add_result("drift", query::Drift(r, dr), [&](const auto& x) { return query::DriftJson(x, dr); });
  out.push_back("read status: " + r.ReadStatus().ToString());
  return out;
}

// One round of writes: workload nodes held back so far, with the edges they
// complete; updates of present nodes (content, confidence, a later ts); deletes
// of nodes and edges; new edges between present nodes.
class Writer {
 public:
  Writer(const bench::Workload& w, size_t initial, uint32_t seed) : w_(w), rng_(seed) {
    for (size_t i = 0; i < initial; ++i) present_.insert(i);
    next_ = initial;
    ts_ = w.nodes.back().ts.value_or(0) + 1000;
  }

  // The first batch: the initial nodes and the edges among them.
  Batch Initial() {
    Batch b;
    for (size_t i : present_) b.PutNode(w_.nodes[i]);
    AddCompletedEdges(&b);
    return b;
  }

  // A big round: several of each; else an agent's small write (one or two
  // operations), which the top of a LiveCache's stack takes.
  Batch Round(const std::set<std::string>& keep, bool big) {
    Batch b;
    const size_t add = std::min<size_t>(big ? Pick(12) : Pick(3) == 0, w_.nodes.size() - next_);
    for (size_t k = 0; k < add; ++k) {
      present_.insert(next_);
      b.PutNode(w_.nodes[next_++]);
    }
    AddCompletedEdges(&b);
    const std::vector<size_t> present(present_.begin(), present_.end());
    for (int k = 0, n = big ? 1 + Pick(6) : Pick(2); k < n; ++k) {  // updates
      NodeInput node = w_.nodes[present[Pick(present.size())]];
      node.content += " " + bench::Vocabulary()[Pick(200)] + " revised " + std::to_string(ts_);
      node.confidence = 0.3f + 0.05f * static_cast<float>(Pick(14));
      node.ts = ++ts_;
      b.PutNode(std::move(node));
    }
    for (int k = 0, n = big ? Pick(3) : Pick(6) == 0; k < n; ++k) {  // deletes of nodes
      const size_t i = present[Pick(present.size())];
      if (keep.count(w_.nodes[i].key)) continue;
      b.DeleteNode(w_.nodes[i].key);
      present_.erase(i);
    }
    for (int k = 0, n = big ? Pick(4) : Pick(4) == 0; k < n; ++k) {  // deletes of workload edges
      const EdgeInput& e = w_.edges[Pick(w_.edges.size())];
      b.DeleteEdge(e.src, e.rel, e.dst);
    }
    static const char* kRels[] = {"supports", "caused_by", "related_to", "supersedes",
                                  "contradicts", "derived_from", "references", "calls"};
    for (int k = 0, n = big ? Pick(8) : Pick(3) == 0; k < n; ++k) {  // new edges
      EdgeInput e;
      e.src = w_.nodes[present[Pick(present.size())]].key;
      e.dst = w_.nodes[present[Pick(present.size())]].key;
      e.rel = kRels[Pick(8)];
      e.weight = 0.25f * static_cast<float>(1 + Pick(4));
      e.ts = ++ts_;
      b.PutEdge(std::move(e));
    }
    return b;
  }

  int64_t ts() const { return ts_; }

 private:
  uint32_t Pick(size_t n) { return static_cast<uint32_t>(rng_() % n); }
  // The workload edges whose both ends have been added, once each.
  void AddCompletedEdges(Batch* b) {
    while (edge_ < w_.edges.size()) {
      const EdgeInput& e = w_.edges[edge_];
      if (index_.empty()) {
        for (size_t i = 0; i < w_.nodes.size(); ++i) index_.emplace_back(w_.nodes[i].key, i);
        std::sort(index_.begin(), index_.end());
      }
      auto at = [&](const std::string& key) {
        auto it = std::lower_bound(index_.begin(), index_.end(), std::make_pair(key, size_t{0}));
        return it != index_.end() && it->first == key ? it->second : w_.nodes.size();
      };
      if (std::max(at(e.src), at(e.dst)) >= next_) break;  // edges follow their nodes' order
      b->PutEdge(e);
      ++edge_;
    }
  }

  const bench::Workload& w_;
  std::mt19937 rng_;
  std::set<size_t> present_;
  std::vector<std::pair<std::string, size_t>> index_;
  size_t next_ = 0, edge_ = 0;
  int64_t ts_ = 0;
};

void CheckSame(const std::vector<std::string>& got, const std::vector<std::string>& want,
               const char* view) {
  REQUIRE(got.size() == want.size());
  for (size_t k = 0; k < want.size(); ++k) {
    INFO(view << ", answer " << k);
    CHECK(got[k] == want[k]);
  }
}

}  // namespace

TEST_CASE("Every query answers on the live views as on a full export, across writes and merges",
          "[snapshot][live][answers]") {
  amem::testing::TempDir dir;
  bench::WorkloadOptions wo;
  wo.num_nodes = amem::testing::kSanitizerBuild ? 300 : 500;
  const bench::Workload w = bench::GenerateWorkload(wo);
  StoreOptions so;
  so.durable = false;  // no fsync per round: the test is about answers
  auto store = amem::testing::OpenStore(dir.path(), so);
  const size_t initial = w.nodes.size() * 3 / 5;
  Writer writer(w, initial, 20261129);
  REQUIRE(store->Apply(writer.Initial()).ok());
  Anchors anchors;
  for (size_t i : {size_t{1}, size_t{42}, initial / 2, initial - 3}) anchors.keys.push_back(w.nodes[i].key);
  const std::set<std::string> keep(anchors.keys.begin(), anchors.keys.end());

  // A one-shot process's view: base + the delta file, merging now and then.
  snapshot::LiveOptions cli;
  cli.merge_fraction = 0;
  cli.merge_records = 150;
  // amem mcp's: no delta file, a stack of views with small caps, the base checked
  // whole; the merge in the background from half-way.
  snapshot::LiveOptions mcp = amem::snapshot_test::McpLiveOptions(60, 8, 24);
  mcp.check_records = true;
  // The bases the background merges warmed and handed to prepare_base (on the
  // merge's thread), by revision: each must be the very reader the next views
  // stand on, its answers the full export's. Before the cache, whose end waits
  // for its merge.
  std::mutex prepared_mu;
  // (Catch2 asserts on this thread only: the merge's records what it saw.)
  struct Prepared {
    const snapshot::Reader* base = nullptr;
    uint32_t pages_left = 1;  // 0 once warmed: every page checked
  };
  std::map<uint64_t, Prepared> prepared;
  // A view on a base the background merge made: that base, warmed.
  auto check_prepared = [&](const snapshot::LiveView& live) {
    const snapshot::Reader* base = live.reader.get();
    while (base->layered()) base = base->layer_base().get();
    std::lock_guard<std::mutex> lock(prepared_mu);
    CHECK(prepared[live.base_revision].base == base);
    CHECK(prepared[live.base_revision].pages_left == 0);
  };
  snapshot::LiveCache cache;

  const int rounds = amem::testing::kSanitizerBuild ? 16 : 40;
  int layered = 0, stacked = 0, merged = 0, background_bases = 0, compared = 0;
  uint64_t last_base = 0;
  for (int round = 0; round < rounds; ++round) {
    INFO("round " << round);
    if (round == rounds / 2) {
      // From here on a base that changes is the mcp view's merge, in the background.
      mcp.background_merge = true;
      mcp.warm_base = true;
      mcp.prepare_base = [&](const Store&, const std::shared_ptr<const snapshot::Reader>& base,
                             uint64_t revision) {
        std::lock_guard<std::mutex> lock(prepared_mu);
        prepared[revision] = {base.get(), base->PagesLeft()};
      };
      cli.merge_records = UINT64_MAX / 2;
    }
    REQUIRE(store->Apply(writer.Round(keep, /*big=*/round % 6 == 5)).ok());
    const uint64_t head = store->revision().value();
    auto state = store->ReadState(ReadView::AtRevision(head));
    REQUIRE(state.ok());
    auto bytes = snapshot::BuildSnapshot(*state);
    REQUIRE(bytes.ok());
    auto full = snapshot::Reader::OpenBuffer(*bytes);
    REQUIRE(full.ok());
    const std::vector<std::string> want = AllAnswers(**full, anchors, wo.start_ts);

    // amem mcp's view first: a one-shot view of the same revision writes the
    // delta file, which the next OpenLive at that revision would read instead of
    // keeping its stack.
    auto live = snapshot::OpenLive(*store, ReadView::Latest(), mcp, &cache);
    REQUIRE(live.ok());
    REQUIRE(live->revision == head);
    int depth = 0;
    for (const snapshot::Reader* x = live->reader.get(); x->layered(); x = x->layer_base().get()) ++depth;
    stacked += depth > 1;
    merged += live->merged;
    if (mcp.background_merge && live->base_revision != last_base && last_base != 0) {
      ++background_bases;
      check_prepared(*live);
    }
    last_base = live->base_revision;
    CheckSame(AllAnswers(*live->reader, anchors, wo.start_ts), want, "mcp view");
    auto one_shot = snapshot::OpenLive(*store, ReadView::Latest(), cli);
    REQUIRE(one_shot.ok());
    REQUIRE(one_shot->revision == head);
    layered += one_shot->reader->layered();
    merged += one_shot->merged;
    CheckSame(AllAnswers(*one_shot->reader, anchors, wo.start_ts), want, "one-shot view");

    compared += 2;
  }
  // A background merge still running when the writes stopped: the next views
  // take its base once it is in (a wait, bounded, not a time measured).
  for (int k = 0; k < 500 && background_bases == 0; ++k) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    auto live = snapshot::OpenLive(*store, ReadView::Latest(), mcp, &cache);
    REQUIRE(live.ok());
    if (live->base_revision == last_base) continue;
    ++background_bases;
    check_prepared(*live);
    auto state = store->ReadState(ReadView::AtRevision(live->revision));
    REQUIRE(state.ok());
    auto bytes = snapshot::BuildSnapshot(*state);
    REQUIRE(bytes.ok());
    auto full = snapshot::Reader::OpenBuffer(*bytes);
    REQUIRE(full.ok());
    CheckSame(AllAnswers(*live->reader, anchors, wo.start_ts),
              AllAnswers(**full, anchors, wo.start_ts), "mcp view on a warmed base");
  }
  INFO("layered " << layered << " stacked " << stacked << " merged " << merged << " background bases "
                  << background_bases);
  CHECK(compared == 2 * rounds);
  CHECK(layered > 0);
  CHECK(stacked > 0);
  CHECK(merged > 0);
  CHECK(background_bases > 0);
}

}  // namespace amem::live_answers
