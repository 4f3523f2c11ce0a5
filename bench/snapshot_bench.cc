// Snapshot benchmarks on the paper's workload (bench/workload.h).
//
//   build    BuildSnapshot from an in-memory StoreState (the writer alone)
//   export   Store::ReadState + BuildSnapshot + atomic write, from an LMDB store
//   open     Reader::Open (map + full structural validation), file in page cache
//   verify   Reader::Verify (checksum pass + content decompression), fresh reader
//   content  first content() access (lazy LZ4 decompression), fresh reader
//   sizes    bytes per node and per edge, by section
//
// Usage: snapshot_bench [--benchmarks=build,export,open,verify,content,sizes]
//                       [--num=100000] [--reps=11] [--vectors=1]
// Each line: "name : X micros/op; Y MB/s" plus a checksum so no work is skipped.
#include <cstdio>
#include <string>

#include "bench/bench_util.h"
#include "bench/workload.h"
#include "common/hash.h"
#include "snapshot/export.h"
#include "snapshot/reader.h"
#include "snapshot/writer.h"
#include "store/store.h"

namespace amem::bench {
namespace {

StoreState StateFromWorkload(const Workload& w, uint32_t dimension) {
  StoreState s;
  s.dimension = dimension;
  for (int r = 0; r < kBuiltinRelationCount; ++r) {
    s.relations.push_back({static_cast<RelationId>(r), BuiltinRelationName(static_cast<RelationId>(r))});
  }
  s.nodes.reserve(w.nodes.size());
  for (const NodeInput& in : w.nodes) {
    NodeRecord n;
    n.id = NodeIdForKey(in.key);
    n.key = in.key;
    n.type = in.type;
    n.content = in.content;
    n.meta = in.meta;
    n.confidence = in.confidence;
    n.scope = in.scope.value_or("");
    n.run = in.run.value_or("");
    n.task = in.task.value_or("");
    n.created_ts = n.updated_ts = in.ts.value_or(0);
    n.vector = in.vector;
    s.nodes.push_back(std::move(n));
  }
  s.edges.reserve(w.edges.size());
  for (const EdgeInput& in : w.edges) {
    EdgeRecord e;
    e.src_key = in.src;
    e.dst_key = in.dst;
    e.src = NodeIdForKey(in.src);
    e.dst = NodeIdForKey(in.dst);
    e.rel_name = in.rel;
    e.rel = *ParseBuiltinRelation(in.rel);
    e.weight = in.weight;
    e.payload = in.payload;
    e.run = in.run.value_or("");
    e.task = in.task.value_or("");
    e.created_ts = e.updated_ts = in.ts.value_or(0);
    s.edges.push_back(std::move(e));
  }
  return s;
}

[[noreturn]] void DieStatus(const Status& s) { ::amem::bench::Die("snapshot_bench", s.ToString(), 1); }

}  // namespace
}  // namespace amem::bench

int main(int argc, char** argv) {
  using namespace amem;
  using namespace amem::bench;
  Flags flags(argc, argv);
  const auto benchmarks = flags.List("benchmarks", "build,export,open,verify,content,sizes");
  const uint64_t num = flags.Uint("num", 100000);
  const uint64_t reps = flags.Uint("reps", 11);
  const bool vectors = flags.Bool("vectors", true);
  if (!flags.Unknown().empty()) ::amem::bench::Die("snapshot_bench", "unknown flag " + flags.Unknown()[0], 2);

  WorkloadOptions wo;
  wo.num_nodes = num;
  wo.vectors = vectors;
  Workload w = GenerateWorkload(wo);
  StoreState state = StateFromWorkload(w, wo.dimension);
  ScratchDir dir("amem-snapshot-bench");
  const std::string path = dir.Sub("bench.amem");
  std::printf("snapshot_bench: %llu nodes, %zu edges, vectors %s\n",
              static_cast<unsigned long long>(num), w.edges.size(), vectors ? "on" : "off");

  // The file every other benchmark reads.
  auto built = snapshot::BuildSnapshot(state);
  if (!built.ok()) DieStatus(built.status());
  if (Status s = snapshot::WriteFileAtomic(path, *built); !s.ok()) DieStatus(s);
  const std::string bytes = std::move(built).value();

  for (const std::string& b : benchmarks) {
    if (b == "build") {
      std::vector<double> wall;
      uint64_t sum = 0;
      for (uint64_t r = 0; r < std::max<uint64_t>(3, reps / 3); ++r) {
        Stopwatch sw;
        auto out = snapshot::BuildSnapshot(state);
        wall.push_back(sw.Elapsed().wall);
        if (!out.ok()) DieStatus(out.status());
        sum += Hash64(*out);
      }
      Report("build", Median(wall), 1, bytes.size(),
             "(" + std::to_string(bytes.size()) + " bytes, xxh3 " + FormatHexId(sum) + ")");
    } else if (b == "export") {
      StoreOptions so;
      so.dimension = wo.dimension;
      so.durable = false;
      auto store = Store::Open(dir.Sub("store"), so);
      if (!store.ok()) DieStatus(store.status());
      Batch batch;
      AddToBatch(w, &batch);
      if (auto rev = (*store)->Apply(batch); !rev.ok()) DieStatus(rev.status());
      std::vector<double> wall;
      for (uint64_t r = 0; r < 3; ++r) {
        Stopwatch sw;
        auto res = snapshot::ExportSnapshot(**store, dir.Sub("export.amem"));
        wall.push_back(sw.Elapsed().wall);
        if (!res.ok()) {
          std::printf("export : failed: %s\n", res.status().ToString().c_str());
          break;
        }
      }
      if (!wall.empty() && wall.size() == 3) Report("export", Median(wall), 1, 0, "(store -> file, fsync)");
    } else if (b == "open") {
      std::vector<double> wall, cpu;
      uint64_t sum = 0;
      for (uint64_t r = 0; r < reps + 1; ++r) {
        Stopwatch sw;
        auto reader = snapshot::Reader::Open(path);
        Sample t = sw.Elapsed();
        if (!reader.ok()) DieStatus(reader.status());
        sum += (*reader)->node_count() + (*reader)->edge_count();
        if (r > 0) {  // the first open warms the page cache
          wall.push_back(t.wall);
          cpu.push_back(t.cpu);
        }
      }
      char extra[96];
      std::snprintf(extra, sizeof(extra), "(cpu %.0f micros; validate %llu)", Median(cpu) * 1e6,
                    static_cast<unsigned long long>(sum));
      Report("open", Median(wall), 1, 0, extra);
    } else if (b == "verify" || b == "content") {
      std::vector<double> wall;
      for (uint64_t r = 0; r < std::max<uint64_t>(3, reps / 3); ++r) {
        auto reader = snapshot::Reader::Open(path);
        if (!reader.ok()) DieStatus(reader.status());
        Stopwatch sw;
        Status s = b == "verify" ? (*reader)->Verify() : (*reader)->EnsureContent();
        wall.push_back(sw.Elapsed().wall);
        if (!s.ok()) DieStatus(s);
      }
      Report(b, Median(wall), 1, b == "verify" ? bytes.size() : 0, "");
    } else if (b == "sizes") {
      auto reader = snapshot::Reader::Open(path);
      if (!reader.ok()) DieStatus(reader.status());
      const snapshot::Reader& r = **reader;
      const double n = r.node_count(), m = r.edge_count();
      std::printf("sizes : file %llu bytes = %.1f bytes/node + %.1f bytes/edge overall "
                  "(%.1f bytes per node+3 edges)\n",
                  static_cast<unsigned long long>(r.file_size()), r.file_size() / n,
                  r.file_size() / m, r.file_size() / n);
      std::printf("sizes : records %.0f B/node, %.0f B/edge; content %llu -> %llu bytes (%.2fx)\n",
                  64.0, 13.0, static_cast<unsigned long long>(r.content_uncompressed_size()),
                  static_cast<unsigned long long>(r.content_compressed_size()),
                  r.content_compressed_size()
                      ? double(r.content_uncompressed_size()) / double(r.content_compressed_size())
                      : 0.0);
      for (const snapshot::BlockInfo& bi : r.blocks()) {
        std::printf("sizes : block %-16s %10llu bytes\n", snapshot::BlockName(bi.tag).c_str(),
                    static_cast<unsigned long long>(bi.length));
      }
    } else {
      ::amem::bench::Die("snapshot_bench", "unknown benchmark " + b, 2);
    }
  }
  return 0;
}
