// code_impact_bench: `impact --diff` in process, on a snapshot file and a patch,
// the figures docs/QUERIES.md quotes beside the whole-process time.
//
//   code_impact_bench --snapshot=FILE --diff=FILE [--reps=21] [--depth=3] [--limit=100]
//
// bench/code_graph_gen.py writes such a code graph (ingest it, then use the store's
// current.amem) and a patch. Prints db_bench lines, medians of --reps calls after
// one untimed call (which decompresses the content blocks the answer reads; that
// first call is printed on its own as "cold"):
//   parse diff      : X micros/op
//   code impact     : X micros/op   (the query: mapping, walk, tests, memories)
//   json            : X micros/op   (the answer document and its text)
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "bench/bench_util.h"
#include "query/code_impact.h"
#include "query/render.h"
#include "snapshot/reader.h"
#include "tools/index/diff.h"

namespace amem {
namespace {

size_t g_sink = 0;

int Run(int argc, char** argv) {
  bench::Flags flags(argc, argv);
  const std::string snapshot = flags.String("snapshot", "");
  const std::string diff_path = flags.String("diff", "");
  const int reps = static_cast<int>(flags.Uint("reps", 21));
  query::CodeImpactOptions o;
  o.depth = static_cast<uint32_t>(flags.Uint("depth", o.depth));
  o.limit = flags.Uint("limit", o.limit);
  if (!flags.Unknown().empty() || snapshot.empty() || diff_path.empty() || reps < 1) {
    std::fprintf(stderr, "usage: code_impact_bench --snapshot=FILE --diff=FILE [--reps=21] "
                         "[--depth=3] [--limit=100]\n");
    return 2;
  }
  std::ifstream in(diff_path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  const std::string patch = text.str();

  bench::Stopwatch open_watch;
  auto reader = snapshot::Reader::Open(snapshot);
  if (!reader.ok()) {
    std::fprintf(stderr, "%s\n", reader.status().ToString().c_str());
    return 1;
  }
  const double open_us = open_watch.Elapsed().wall * 1e6;
  const snapshot::Reader& r = **reader;
  auto changes = index::ParseUnifiedDiff(patch);
  if (!changes.ok()) {
    std::fprintf(stderr, "%s\n", changes.status().ToString().c_str());
    return 1;
  }
  bench::Stopwatch cold_watch;
  query::CodeImpactResult first = query::CodeImpact(r, *changes, o);
  g_sink += query::RenderJson(query::CodeImpactJson(r, first, o)).size();
  const bench::Sample cold = cold_watch.Elapsed();

  std::vector<double> parse, impact, json;
  for (int i = 0; i < reps; ++i) {
    bench::Stopwatch a;
    auto c = index::ParseUnifiedDiff(patch);
    parse.push_back(a.Elapsed().wall);
    bench::Stopwatch b;
    query::CodeImpactResult res = query::CodeImpact(r, *c, o);
    impact.push_back(b.Elapsed().wall);
    bench::Stopwatch j;
    g_sink += query::RenderJson(query::CodeImpactJson(r, res, o)).size();
    json.push_back(j.Elapsed().wall);
  }
  std::printf("nodes %u, edges %u; diff: %zu files; changed %zu, affected %zu, tests %zu, "
              "memories %zu\n",
              r.node_count(), r.edge_count(), changes->size(), first.changed_count,
              first.affected_count, first.tests_count, first.memories_count);
  std::printf("open            : %10.1f micros\n", open_us);
  std::printf("cold (1st call) : %10.1f micros (cpu %.1f, %llu page faults)\n", cold.wall * 1e6,
              cold.cpu * 1e6, static_cast<unsigned long long>(cold.faults));
  std::printf("parse diff      : %10.1f micros/op\n", bench::Median(parse) * 1e6);
  std::printf("code impact     : %10.1f micros/op\n", bench::Median(impact) * 1e6);
  std::printf("json            : %10.1f micros/op\n", bench::Median(json) * 1e6);
  std::printf("(checksum %zu)\n", g_sink);
  return 0;
}

}  // namespace
}  // namespace amem

int main(int argc, char** argv) { return amem::Run(argc, argv); }
