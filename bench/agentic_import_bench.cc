// Importing a file written in AgenticMemory's own layout (docs/AGENTIC_MEMORY.md):
//
//   write    the file, by tests/snapshot/agentic_memory_writer.h (not timed)
//   parse    agentic::Parse of the whole file (read + checks + LZ4 + UTF-8)
//   import   agentic::Import into a fresh store (one transaction)
//   reimport the same file again: compare every record, write nothing
//
// Usage: agentic_import_bench [--nodes=100000] [--edges=300000] [--dim=128]
//          [--vector_every=0] [--out=FILE]
// --vector_every=K gives every K-th node a non-zero vector (0: none, as files made
// by the tool's CLI and MCP server). --out keeps the file, e.g. to time the
// `amem import` process:
//   build/bench/agentic_import_bench --out=/tmp/big.amem
//   build/amem --store /tmp/s init
//   /usr/bin/time -v build/amem --store /tmp/s import /tmp/big.amem
#include <cstdio>
#include <random>
#include <string>

#include "bench/bench_util.h"
#include "snapshot/agentic_import.h"
#include "snapshot/agentic_memory.h"
#include "store/store.h"
#include "tests/snapshot/agentic_memory_writer.h"

namespace amem::bench {
namespace {

namespace aw = amem::agentic_test;
namespace ag = amem::snapshot::agentic;

const char* kWords[] = {"store", "lmdb",   "cache",   "build",  "test",  "module", "symbol",
                        "file",  "decide", "because", "commit", "query", "index",  "import",
                        "the",   "a",      "uses",    "fails",  "fixed", "after"};

aw::Graph MakeGraph(uint64_t nodes, uint64_t edges, uint32_t dim, uint64_t vector_every) {
  std::mt19937_64 rng(42);
  aw::Graph g;
  g.dimension = dim;
  g.lz4_matches = true;
  const uint64_t t0 = 1700000000000000;
  g.nodes.resize(nodes);
  for (uint64_t i = 0; i < nodes; ++i) {
    aw::Node& n = g.nodes[i];
    n.id = i;
    n.event_type = static_cast<uint8_t>(rng() % 6);
    n.created_at = t0 + i * 1000003;
    n.session = static_cast<uint32_t>(i / 1000);
    n.confidence = static_cast<float>(rng() % 1001) / 1000.0f;
    n.access_count = static_cast<uint32_t>(rng() % 50);
    n.last_accessed = n.created_at + rng() % 1000000000;
    n.decay_score = 1.0f;
    const int words = 8 + static_cast<int>(rng() % 16);
    for (int w = 0; w < words; ++w) {
      if (w) n.content += ' ';
      n.content += kWords[rng() % std::size(kWords)];
    }
    n.content += " #" + std::to_string(i);
    if (vector_every && i % vector_every == 0) {
      n.vector.resize(dim);
      for (float& f : n.vector) f = static_cast<float>(rng() % 2001) / 1000.0f - 1.0f;
    }
  }
  g.edges.resize(edges);
  for (aw::Edge& e : g.edges) {
    e.source = rng() % nodes;
    e.target = rng() % nodes;
    e.edge_type = static_cast<uint8_t>(rng() % 7);
    e.weight = static_cast<float>(rng() % 101) / 100.0f;
    e.created_at = t0 + rng() % (nodes * 1000003);
  }
  return g;
}

void Report(const char* name, const Sample& s, uint64_t records) {
  std::printf("%-9s: %10.3f micros/op; %8.3f s wall, %8.3f s cpu (%llu records)\n", name,
              s.wall * 1e6 / static_cast<double>(records), s.wall, s.cpu,
              static_cast<unsigned long long>(records));
}

int Main(int argc, char** argv) {
  Flags flags(argc, argv);
  const uint64_t nodes = flags.Uint("nodes", 100000);
  const uint64_t edges = flags.Uint("edges", 300000);
  const uint32_t dim = static_cast<uint32_t>(flags.Uint("dim", 128));
  const uint64_t vector_every = flags.Uint("vector_every", 0);
  const std::string out = flags.String("out", "");
  if (!flags.Unknown().empty() || nodes == 0) {
    std::fprintf(stderr, "usage: agentic_import_bench [--nodes=N] [--edges=M] [--dim=D] "
                         "[--vector_every=K] [--out=FILE]\n");
    return 2;
  }
  const std::string bytes = aw::Write(MakeGraph(nodes, edges, dim, vector_every));
  std::printf("file     : %llu nodes, %llu edges, %zu bytes\n",
              static_cast<unsigned long long>(nodes), static_cast<unsigned long long>(edges),
              bytes.size());
  ScratchDir scratch("agentic_import_bench");
  const std::string path = out.empty() ? scratch.Sub("big.amem") : out;
  {
    FILE* f = std::fopen(path.c_str(), "wb");
    if (!f || std::fwrite(bytes.data(), 1, bytes.size(), f) != bytes.size()) {
      std::fprintf(stderr, "cannot write %s\n", path.c_str());
      return 1;
    }
    std::fclose(f);
  }
  Stopwatch parse_watch;
  Result<std::string> read = ag::ReadWholeFile(path);
  Result<ag::File> file = read.ok() ? ag::Parse(*read) : Result<ag::File>(read.status());
  const Sample parse_time = parse_watch.Elapsed();
  if (!file.ok()) {
    std::fprintf(stderr, "parse: %s\n", file.status().ToString().c_str());
    return 1;
  }
  Report("parse", parse_time, nodes + edges);

  StoreOptions options;
  options.dimension = dim;
  auto store = Store::Open(scratch.Sub("store"), options);
  if (!store.ok()) {
    std::fprintf(stderr, "store: %s\n", store.status().ToString().c_str());
    return 1;
  }
  for (const char* name : {"import", "reimport"}) {
    Stopwatch w;
    Result<ag::ImportResult> r = ag::Import(*file, "big", store->get());
    const Sample s = w.Elapsed();
    if (!r.ok()) {
      std::fprintf(stderr, "%s: %s\n", name, r.status().ToString().c_str());
      return 1;
    }
    Report(name, s, nodes + edges);
    std::printf("           %llu nodes written, %llu edges written, revision %llu\n",
                static_cast<unsigned long long>(r->nodes_written),
                static_cast<unsigned long long>(r->edges_written),
                static_cast<unsigned long long>(r->revision));
  }
  return 0;
}

}  // namespace
}  // namespace amem::bench

int main(int argc, char** argv) { return amem::bench::Main(argc, argv); }
