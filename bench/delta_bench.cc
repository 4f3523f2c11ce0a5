// Delta segments against full re-export (snapshot/delta.h), on the paper's
// workload (bench/workload.h): what a query after a write must compile before it
// can read the latest state.
//
//   export   Store::ReadState + stream the whole file + atomic write (today's path
//            after every write)
//   delta    CompileDelta from the change log since the base + Delta::OpenBuffer,
//            after `changes` overwritten nodes (plus one new edge per two), in
//            ever larger steps since the base
//   merge    MergeState(base, delta) + BuildSnapshot: rebuilding the base from
//            base + delta (what a merge does), same bytes as a full export
//   view     Reader::OpenLayered(base, delta): the merged read view a query uses
//   pagerank, betweenness, text-search
//            the query on the view against the same query on a Reader over the
//            full export at the same revision (answers checked equal)
//   *-fresh-view   a new view per run, as after each write (text-search: the two
//            most frequent words, and -rpc "retry policy cache")
//   text-search-stacked-view[-rpc]   one more write compiled against the view, a
//            new view over it per run (amem mcp's stack of views); that write
//            is in the later rows' deltas too
//
// Usage: delta_bench [--num=100000[,...]] [--changes=1,10,100,1000] [--reps=5]
// Medians of --reps timed runs after one warm-up. Exits non-zero on any failure,
// including merged bytes that differ from the full export.
#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "bench/bench_util.h"
#include "bench/workload.h"
#include "common/tokenizer.h"
#include "query/centrality.h"
#include "query/text_search.h"
#include "snapshot/delta.h"
#include "snapshot/export.h"
#include "snapshot/reader.h"
#include "snapshot/writer.h"
#include "store/store.h"

namespace amem::bench {
namespace {

constexpr char kProgram[] = "delta_bench";

std::vector<uint64_t> ParseList(const std::string& s) {
  std::vector<uint64_t> out;
  size_t at = 0;
  while (at <= s.size()) {
    size_t comma = s.find(',', at);
    if (comma == std::string::npos) comma = s.size();
    out.push_back(std::stoull(s.substr(at, comma - at)));
    at = comma + 1;
  }
  return out;
}

template <typename Fn>
double MedianOf(int reps, Fn&& fn) {
  fn();  // warm-up
  std::vector<double> t;
  for (int r = 0; r < reps; ++r) {
    Stopwatch w;
    fn();
    t.push_back(w.Elapsed().wall);
  }
  return Median(t);
}

void Run(uint64_t num, const std::vector<uint64_t>& changes, int reps) {
  ScratchDir dir(kProgram);
  WorkloadOptions wo;
  wo.num_nodes = num;
  // At 1M the default start puts the newest sessions past the clock: end today.
  wo.start_ts = std::min(wo.start_ts, WorkloadStartEndingNow(wo));
  Workload w = GenerateWorkload(wo);
  StoreOptions so;
  so.durable = false;
  auto store_or = Store::Open(dir.Sub("store"), so);
  if (!store_or.ok()) Die(kProgram, store_or.status().ToString());
  Store& store = **store_or;
  {
    Batch b;
    AddToBatch(w, &b);
    if (auto r = store.Apply(b); !r.ok()) Die(kProgram, r.status().ToString());
  }
  const uint64_t base_rev = store.revision().value();
  const std::string base_path = dir.Sub("base.amem");
  double export_s = MedianOf(reps, [&] {
    auto r = snapshot::ExportSnapshot(store, base_path);
    if (!r.ok()) Die(kProgram, r.status().ToString());
  });
  Report("export/" + std::to_string(num), export_s, 1, 0, "(full re-export)");
  auto base_or = snapshot::Reader::Open(base_path);
  if (!base_or.ok()) Die(kProgram, base_or.status().ToString());
  std::shared_ptr<const snapshot::Reader> base_shared = std::move(*base_or);
  const snapshot::Reader& base = *base_shared;
  if (auto s = base.DecodeAllContent(); !s.ok()) Die(kProgram, s.ToString());

  Random rng(num);
  uint64_t done = 0;
  for (uint64_t target : changes) {
    Batch b;
    for (; done < target; ++done) {
      NodeInput n = w.nodes[rng.Uniform(w.nodes.size())];
      n.content += " changed " + std::to_string(done);
      n.ts.reset();
      if (done % 2 == 0) {
        EdgeInput e = w.edges[rng.Uniform(w.edges.size())];
        e.dst = n.key;
        e.ts.reset();
        b.PutEdge(e);
      }
      b.PutNode(std::move(n));
    }
    if (auto r = store.Apply(b); !r.ok()) Die(kProgram, r.status().ToString());
    const uint64_t head = store.revision().value();
    std::string bytes;
    double compile_s = MedianOf(reps, [&] {
      auto r = snapshot::CompileDelta(store, base, base_rev, head, &bytes);
      if (!r.ok()) Die(kProgram, r.status().ToString());
      auto d = snapshot::Delta::OpenBuffer(bytes, base);
      if (!d.ok()) Die(kProgram, d.status().ToString());
    });
    char extra[160];
    std::snprintf(extra, sizeof(extra), "%llu changes since the base; %zu delta bytes; %.1fx faster than export",
                  static_cast<unsigned long long>(target), bytes.size(), export_s / compile_s);
    Report("delta/" + std::to_string(num) + "/" + std::to_string(target), compile_s, 1, 0, extra);

    auto delta = snapshot::Delta::OpenBuffer(bytes, base);
    if (!delta.ok()) Die(kProgram, delta.status().ToString());
    std::string merged;
    double merge_s = MedianOf(1, [&] {
      auto st = snapshot::MergeState(base, **delta);
      if (!st.ok()) Die(kProgram, st.status().ToString());
      auto m = snapshot::BuildSnapshot(*st);
      if (!m.ok()) Die(kProgram, m.status().ToString());
      merged = std::move(*m);
    });
    auto full = store.ReadState();
    if (!full.ok()) Die(kProgram, full.status().ToString());
    auto want = snapshot::BuildSnapshot(*full);
    if (!want.ok() || *want != merged) Die(kProgram, "merged bytes differ from the full export");
    Report("merge/" + std::to_string(num) + "/" + std::to_string(target), merge_s, 1, 0,
           "(base + delta -> full file; bytes equal the full export)");

    // The merged read view, and bulk queries on it against the full file.
    std::shared_ptr<const snapshot::Delta> shared_delta = std::move(*delta);
    std::unique_ptr<snapshot::Reader> view;
    double view_s = MedianOf(reps, [&] {
      auto v = snapshot::Reader::OpenLayered(base_shared, shared_delta);
      if (!v.ok()) Die(kProgram, v.status().ToString());
      view = std::move(*v);
    });
    Report("view/" + std::to_string(num) + "/" + std::to_string(target), view_s, 1, 0,
           "(Reader::OpenLayered: base + delta as one graph)");
    auto full_reader = snapshot::Reader::OpenBuffer(*want);
    if (!full_reader.ok()) Die(kProgram, full_reader.status().ToString());
    auto compare = [&](const std::string& name, auto&& run) {
      query::Json a, b;
      double on_view = MedianOf(reps, [&] { a = run(*view); });
      double on_full = MedianOf(reps, [&] { b = run(**full_reader); });
      if (a != b) Die(kProgram, name + ": the view's answer differs from the full export's");
      char note[120];
      std::snprintf(note, sizeof(note), "view %.2f ms vs full file %.2f ms: %.2fx", on_view * 1e3,
                    on_full * 1e3, on_view / on_full);
      Report(name + "/" + std::to_string(num) + "/" + std::to_string(target), on_view, 1, 0, note);
    };
    {
      // A fresh view per run: PageRank then also pays for the view's edge tables.
      query::Json a, b;
      double on_fresh = MedianOf(reps, [&] {
        auto v = snapshot::Reader::OpenLayered(base_shared, shared_delta);
        if (!v.ok()) Die(kProgram, v.status().ToString());
        auto res = query::Centrality(**v, query::CentralityOptions());
        if (!res.ok()) Die(kProgram, res.status().ToString());
        a = query::CentralityJson(**v, *res);
      });
      double on_full = MedianOf(reps, [&] {
        auto res = query::Centrality(**full_reader, query::CentralityOptions());
        if (!res.ok()) Die(kProgram, res.status().ToString());
        b = query::CentralityJson(**full_reader, *res);
      });
      if (a != b) Die(kProgram, "pagerank: the fresh view's answer differs from the full export's");
      char note[120];
      std::snprintf(note, sizeof(note), "new view + query %.2f ms vs full file %.2f ms: %.2fx",
                    on_fresh * 1e3, on_full * 1e3, on_fresh / on_full);
      Report("pagerank-fresh-view/" + std::to_string(num) + "/" + std::to_string(target), on_fresh,
             1, 0, note);
    }
    // A fresh view per run, as after each write: the common terms' postings are
    // merged from the base's and the delta's (a term in most documents), and the
    // MCP benchmark's query.
    std::string common;  // the two most frequent searchable words
    for (size_t k = 0, words = 0; k < Vocabulary().size() && words < 2; ++k) {
      const std::string& w = Vocabulary()[k];
      if (w.size() < 2 || IsStopWord(w)) continue;
      common += (words++ ? " " : "") + w;
    }
    auto fresh_search = [&](const std::string& row, const std::string& text,
                            const std::shared_ptr<const snapshot::Reader>& under,
                            const std::shared_ptr<const snapshot::Delta>& delta,
                            const snapshot::Reader& full) {
      auto search = [&](const snapshot::Reader& r) {
        query::TextSearchOptions o;
        o.query = text;
        auto res = query::TextSearch(r, o);
        if (!res.ok()) Die(kProgram, res.status().ToString());
        return query::TextSearchJson(r, *res);
      };
      query::Json a, b;
      double on_fresh = MedianOf(reps, [&] {
        auto v = snapshot::Reader::OpenLayered(under, delta);
        if (!v.ok()) Die(kProgram, v.status().ToString());
        a = search(**v);
      });
      double on_full = MedianOf(reps, [&] { b = search(full); });
      if (a != b) Die(kProgram, row + ": the fresh view's answer differs from the full export's");
      char note[160];
      std::snprintf(note, sizeof(note), "\"%s\": new view + query %.2f ms vs full file %.2f ms: %.2fx",
                    text.c_str(), on_fresh * 1e3, on_full * 1e3, on_fresh / on_full);
      Report(row + "/" + std::to_string(num) + "/" + std::to_string(target), on_fresh, 1, 0, note);
    };
    fresh_search("text-search-fresh-view", common, base_shared, shared_delta, **full_reader);
    fresh_search("text-search-fresh-view-rpc", "retry policy cache", base_shared, shared_delta,
                 **full_reader);
    compare("pagerank", [](const snapshot::Reader& r) {
      query::CentralityOptions o;
      auto res = query::Centrality(r, o);
      if (!res.ok()) Die(kProgram, res.status().ToString());
      return query::CentralityJson(r, *res);
    });
    compare("betweenness", [](const snapshot::Reader& r) {
      query::CentralityOptions o;
      o.metric = query::CentralityMetric::kBetweenness;
      auto res = query::Centrality(r, o);
      if (!res.ok()) Die(kProgram, res.status().ToString());
      return query::CentralityJson(r, *res);
    });
    compare("text-search", [](const snapshot::Reader& r) {
      query::TextSearchOptions o;
      o.query = "retry policy cache";
      auto res = query::TextSearch(r, o);
      if (!res.ok()) Die(kProgram, res.status().ToString());
      return query::TextSearchJson(r, *res);
    });
    {
      // A view over the view, as amem mcp stacks them: one more write compiled
      // against the view (kept, and queried above), a fresh top level per run.
      std::shared_ptr<const snapshot::Reader> level = std::move(view);
      NodeInput n = w.nodes[rng.Uniform(w.nodes.size())];
      n.content += " stacked " + std::to_string(target);
      n.ts.reset();
      if (auto r = store.PutNode(std::move(n)); !r.ok()) Die(kProgram, r.status().ToString());
      const uint64_t top = store.revision().value();
      std::string top_bytes;
      if (auto r = snapshot::CompileDelta(store, *level, head, top, &top_bytes); !r.ok()) {
        Die(kProgram, r.status().ToString());
      }
      auto top_delta = snapshot::Delta::OpenBuffer(top_bytes, *level);
      if (!top_delta.ok()) Die(kProgram, top_delta.status().ToString());
      std::shared_ptr<const snapshot::Delta> shared_top = std::move(*top_delta);
      auto top_state = store.ReadState();
      if (!top_state.ok()) Die(kProgram, top_state.status().ToString());
      auto top_full = snapshot::BuildSnapshot(*top_state);
      if (!top_full.ok()) Die(kProgram, top_full.status().ToString());
      auto top_reader = snapshot::Reader::OpenBuffer(*top_full);
      if (!top_reader.ok()) Die(kProgram, top_reader.status().ToString());
      fresh_search("text-search-stacked-view", common, level, shared_top, **top_reader);
      fresh_search("text-search-stacked-view-rpc", "retry policy cache", level, shared_top,
                   **top_reader);
    }
  }
}

}  // namespace
}  // namespace amem::bench

int main(int argc, char** argv) {
  using namespace amem::bench;
  std::vector<uint64_t> nums = {100000}, changes = {1, 10, 100, 1000};
  int reps = 5;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a.rfind("--num=", 0) == 0) {
      nums = ParseList(a.substr(6));
    } else if (a.rfind("--changes=", 0) == 0) {
      changes = ParseList(a.substr(10));
    } else if (a.rfind("--reps=", 0) == 0) {
      reps = std::stoi(a.substr(7));
    } else {
      Die(kProgram, "usage: delta_bench [--num=N,...] [--changes=C,...] [--reps=R]", 2);
    }
  }
  std::printf("delta_bench: %s\n", ConfigureMalloc(false));
  for (uint64_t n : nums) Run(n, changes, reps);
  return 0;
}
