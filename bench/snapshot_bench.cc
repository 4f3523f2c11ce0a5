// Snapshot benchmarks on the paper's workload (bench/workload.h), for every size in
// --num (the figures: --num=10000,100000,1000000).
//
//   build    BuildSnapshot from an in-memory StoreState (the writer alone)
//   export   ExportSnapshot from an LMDB store: Store::VisitState (records read as
//            views) + WriteSnapshot streamed into WriteFileAtomic (temp file, fsync,
//            rename)
//   export_nofile  the same VisitState (edge refs) + WriteSnapshot with the bytes counted and
//            dropped: no file, page cache or fsync (what the export's own work costs)
//   open     Reader::Open (map + full structural validation), file in page cache
//   verify   Reader::Verify (checksum pass + content decompression), fresh reader
//   content  first content() access (lazy LZ4 decompression), fresh reader
//   sizes    file bytes split into node-owned and edge-owned sections, per node/edge
//
// Usage: snapshot_bench [--benchmarks=build,export,export_nofile,open,verify,content,sizes]
//                       [--num=100000[,...]] [--reps=11] [--vectors=1] [--malloc_trim=0]
// By default malloc keeps freed memory, so timed runs reuse the pages the warm-up
// touched; --malloc_trim=1 keeps glibc's default (every run pays first-touch page
// faults, as a one-shot `amem export` process does).
// Timings are medians of timed runs after one untimed warm-up run. Each line:
// "name : X micros/op; Y MB/s" plus a checksum so no work is skipped. A final
// summary line per size collects export, open and verify times and the sizes.
// Any failure (export included) exits non-zero.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "bench/bench_util.h"
#include "bench/workload.h"
#include "common/hash.h"
#include "snapshot/export.h"
#include "snapshot/format.h"
#include "snapshot/reader.h"
#include "snapshot/writer.h"
#include "store/store.h"

namespace amem::bench {
namespace {

[[noreturn]] void DieStatus(const Status& s) { ::amem::bench::Die("snapshot_bench", s.ToString(), 1); }

// File bytes by owner. Block sizes include their 8-byte header.
struct SizeSplit {
  uint64_t node_records = 0, content = 0, vectors = 0, node_ext = 0, terms = 0, node_index = 0;
  uint64_t edge_records = 0, edge_attrs = 0, edge_payloads = 0, csr = 0;
  uint64_t other = 0;  // header, info, names, runs, labels, kv, checksum, unknown blocks
  uint64_t node_owned() const {
    return node_records + content + vectors + node_ext + terms + node_index;
  }
  uint64_t edge_owned() const { return edge_records + edge_attrs + edge_payloads + csr; }
};

// The SizeSplit field a block's bytes count towards.
uint64_t SizeSplit::*OwnerOf(snapshot::BlockTag tag) {
  using snapshot::BlockTag;
  switch (tag) {
    case BlockTag::kTypeIndex: case BlockTag::kSessionIndex: case BlockTag::kTimeIndex:
    case BlockTag::kClusterMap:
      return &SizeSplit::node_index;
    case BlockTag::kTermIndex: case BlockTag::kDocLengths: return &SizeSplit::terms;
    case BlockTag::kNodeIds: case BlockTag::kNodeKeys: case BlockTag::kNodeAttrs:
      return &SizeSplit::node_ext;
    case BlockTag::kEdgeAttrs: return &SizeSplit::edge_attrs;
    case BlockTag::kEdgePayloads: return &SizeSplit::edge_payloads;
    case BlockTag::kOutIndex: case BlockTag::kInIndex: return &SizeSplit::csr;
    default: return &SizeSplit::other;  // info, names, runs, labels, kv, checksum, unknown
  }
}

SizeSplit SplitSizes(const snapshot::Reader& r, std::string_view file) {
  snapshot::Header h;
  if (Status s = h.DecodeFrom(file); !s.ok()) DieStatus(s);
  SizeSplit z;
  z.node_records = uint64_t{h.node_count} * snapshot::NodeEntry::kEncodedLength;
  z.edge_records = uint64_t{h.edge_count} * snapshot::EdgeEntry::kEncodedLength;
  z.content = h.vector_offset - h.content_offset;  // LZ4 frame + padding
  z.vectors = h.index_offset - h.vector_offset;    // vector block + padding
  z.other = snapshot::Header::kEncodedLength;
  for (const snapshot::BlockInfo& b : r.blocks()) {
    z.*OwnerOf(static_cast<snapshot::BlockTag>(b.tag)) += snapshot::kBlockHeaderLength + b.length;
  }
  if (z.node_owned() + z.edge_owned() + z.other != file.size()) {
    Die("snapshot_bench", "sizes: sections do not add up to the file size");
  }
  return z;
}

void PrintSizes(const SizeSplit& z, const snapshot::Reader& r) {
  const double n = std::max<uint32_t>(r.node_count(), 1), m = std::max<uint32_t>(r.edge_count(), 1);
  const uint64_t total = z.node_owned() + z.edge_owned() + z.other;
  std::printf("sizes : file %llu bytes = node-owned %llu (%.1f B/node) + edge-owned %llu "
              "(%.1f B/edge) + other %llu; whole file %.1f B/node\n",
              static_cast<unsigned long long>(total),
              static_cast<unsigned long long>(z.node_owned()), z.node_owned() / n,
              static_cast<unsigned long long>(z.edge_owned()), z.edge_owned() / m,
              static_cast<unsigned long long>(z.other), total / n);
  std::printf("sizes : per node: records %.1f, content %.1f, vectors %.1f, keys/ids/attrs %.1f, "
              "term index + doc lengths %.1f, type/session/time indexes %.1f\n",
              z.node_records / n, z.content / n, z.vectors / n, z.node_ext / n, z.terms / n,
              z.node_index / n);
  std::printf("sizes : per edge: records %.1f, attrs %.1f, payloads %.1f, CSR out+in %.1f\n",
              z.edge_records / m, z.edge_attrs / m, z.edge_payloads / m, z.csr / m);
  std::printf("sizes : content %llu -> %llu bytes (%.2fx)\n",
              static_cast<unsigned long long>(r.content_uncompressed_size()),
              static_cast<unsigned long long>(r.content_compressed_size()),
              r.content_compressed_size()
                  ? double(r.content_uncompressed_size()) / double(r.content_compressed_size())
                  : 0.0);
  for (const snapshot::BlockInfo& bi : r.blocks()) {
    std::printf("sizes : block %-16s %10llu bytes\n", snapshot::BlockName(bi.tag).c_str(),
                static_cast<unsigned long long>(bi.length));
  }
}

// Median wall time of `timed` runs of fn after one untimed warm-up run.
template <typename Fn>
double TimeMedian(uint64_t timed, Fn&& fn) {
  fn();
  std::vector<double> wall;
  for (uint64_t k = 0; k < timed; ++k) {
    Stopwatch sw;
    fn();
    wall.push_back(sw.Elapsed().wall);
  }
  return Median(wall);
}

struct Summary {
  uint64_t nodes = 0, edges = 0, bytes = 0;
  double export_s = -1, export_nofile_s = -1, open_s = -1, verify_s = -1;
  double node_bytes = -1, edge_bytes = -1;
};

Summary RunSize(uint64_t num, const std::vector<std::string>& benchmarks, uint64_t reps,
                bool vectors) {
  WorkloadOptions wo;
  wo.num_nodes = num;
  wo.vectors = vectors;
  // The store refuses timestamps more than a day ahead: a large workload starts
  // early enough to end about now (smaller ones keep the default start, and
  // their bytes).
  wo.start_ts = std::min(wo.start_ts, WorkloadStartEndingNow(wo));
  Workload w = GenerateWorkload(wo);
  StoreState state = StateOfWorkload(w, wo.dimension);
  ScratchDir dir("amem-snapshot-bench");
  const std::string path = dir.Sub("bench.amem");
  std::printf("snapshot_bench: %llu nodes, %zu edges, vectors %s\n",
              static_cast<unsigned long long>(num), w.edges.size(), vectors ? "on" : "off");
  Summary sum;
  sum.nodes = num;
  sum.edges = w.edges.size();

  // The file every other benchmark reads.
  auto built = snapshot::BuildSnapshot(state);
  if (!built.ok()) DieStatus(built.status());
  if (Status s = snapshot::WriteFileAtomic(path, *built); !s.ok()) DieStatus(s);
  const std::string bytes = std::move(built).value();
  sum.bytes = bytes.size();
  const uint64_t few = std::max<uint64_t>(3, reps / 3);
  std::unique_ptr<Store> store;  // export's and export_nofile's, made once

  for (const std::string& b : benchmarks) {
    if (b == "build") {
      uint64_t check = 0;
      double t = TimeMedian(few, [&] {
        auto out = snapshot::BuildSnapshot(state);
        if (!out.ok()) DieStatus(out.status());
        check += Hash64(*out);
      });
      Report("build", t, 1, bytes.size(),
             "(" + std::to_string(bytes.size()) + " bytes, xxh3 " + FormatHexId(check) + ")");
    } else if (b == "export" || b == "export_nofile") {
      if (!store) {
        StoreOptions so;
        so.dimension = wo.dimension;
        so.durable = false;
        auto opened = Store::Open(dir.Sub("store"), so);
        if (!opened.ok()) DieStatus(opened.status());
        store = std::move(opened).value();
        Batch batch;
        AddToBatch(w, &batch);
        if (auto rev = store->Apply(batch); !rev.ok()) DieStatus(rev.status());
      }
      uint64_t out_bytes = 0;
      if (b == "export") {
        sum.export_s = TimeMedian(3, [&] {
          auto res = snapshot::ExportSnapshot(*store, dir.Sub("export.amem"));
          if (!res.ok()) DieStatus(res.status().WithContext("export"));
          out_bytes = res->bytes;
        });
        Report("export", sum.export_s, 1, out_bytes, "(store -> file, fsync)");
      } else {
        sum.export_nofile_s = TimeMedian(3, [&] {
          snapshot::CountingSink sink;
          // As ExportSnapshot reads the store: edges as refs, vectors freed as it goes.
          Store::VisitOptions visit;
          visit.edge_refs = true;
          Status s = store->VisitState(ReadView(), visit, [&](StoreStateView& state) {
            return snapshot::WriteSnapshot(std::move(state), snapshot::WriterOptions(), &sink)
                .status();
          });
          if (!s.ok()) DieStatus(s.WithContext("export_nofile"));
          out_bytes = sink.bytes();
        });
        Report("export_nofile", sum.export_nofile_s, 1, out_bytes,
               "(store -> bytes counted, no file)");
      }
      // The store's map is closed before the benchmarks that read the file.
      if (std::none_of(std::find(benchmarks.begin(), benchmarks.end(), b) + 1, benchmarks.end(),
                       [](const std::string& next) { return next.starts_with("export"); })) {
        store.reset();
      }
    } else if (b == "open") {
      std::vector<double> cpu;
      uint64_t check = 0;
      sum.open_s = TimeMedian(reps, [&] {
        Stopwatch sw;
        auto reader = snapshot::Reader::Open(path);
        cpu.push_back(sw.Elapsed().cpu);
        if (!reader.ok()) DieStatus(reader.status());
        check += (*reader)->node_count() + (*reader)->edge_count();
      });
      cpu.erase(cpu.begin());  // the warm-up
      char extra[96];
      std::snprintf(extra, sizeof(extra), "(cpu %.0f micros; validate %llu)", Median(cpu) * 1e6,
                    static_cast<unsigned long long>(check));
      Report("open", sum.open_s, 1, 0, extra);
    } else if (b == "verify" || b == "content") {
      std::vector<double> wall;
      for (uint64_t r = 0; r < few + 1; ++r) {
        auto reader = snapshot::Reader::Open(path);
        if (!reader.ok()) DieStatus(reader.status());
        Stopwatch sw;
        Status s = b == "verify" ? (*reader)->Verify() : (*reader)->DecodeAllContent();
        if (r > 0) wall.push_back(sw.Elapsed().wall);  // r == 0 warms up
        if (!s.ok()) DieStatus(s);
      }
      if (b == "verify") sum.verify_s = Median(wall);
      Report(b, Median(wall), 1, b == "verify" ? bytes.size() : 0, "");
    } else if (b == "sizes") {
      auto reader = snapshot::Reader::Open(path);
      if (!reader.ok()) DieStatus(reader.status());
      SizeSplit z = SplitSizes(**reader, bytes);
      PrintSizes(z, **reader);
      sum.node_bytes = double(z.node_owned()) / std::max<uint64_t>(num, 1);
      sum.edge_bytes = double(z.edge_owned()) / std::max<size_t>(w.edges.size(), 1);
    }
  }
  return sum;
}

}  // namespace
}  // namespace amem::bench

int main(int argc, char** argv) {
  using namespace amem;
  using namespace amem::bench;
  Flags flags(argc, argv);
  const auto benchmarks =
      flags.List("benchmarks", "build,export,export_nofile,open,verify,content,sizes");
  const auto sizes = flags.List("num", "100000");
  const uint64_t reps = flags.Uint("reps", 11);
  const bool vectors = flags.Bool("vectors", true);
  const bool malloc_trim = flags.Bool("malloc_trim", false);
  if (!flags.Unknown().empty()) Die("snapshot_bench", "unknown flag " + flags.Unknown()[0], 2);
  const std::vector<std::string> known = {"build",  "export",  "export_nofile", "open",
                                          "verify", "content", "sizes"};
  for (const std::string& b : benchmarks) {
    if (std::find(known.begin(), known.end(), b) == known.end()) {
      Die("snapshot_bench", "unknown benchmark " + b, 2);
    }
  }
  if (reps < 1) Die("snapshot_bench", "--reps must be at least 1", 2);
  std::vector<uint64_t> nums;
  for (const std::string& s : sizes) {
    char* end = nullptr;
    unsigned long long v = std::strtoull(s.c_str(), &end, 10);
    if (end == s.c_str() || *end != '\0' || v < 2 || v >= (1ULL << 31)) {
      Die("snapshot_bench", "--num wants sizes >= 2, got '" + s + "'", 2);
    }
    nums.push_back(v);
  }

  std::printf("snapshot_bench: medians of %llu timed runs after a warm-up; %s\n",
              static_cast<unsigned long long>(reps), ConfigureMalloc(malloc_trim));
  std::vector<Summary> summaries;
  for (uint64_t num : nums) summaries.push_back(RunSize(num, benchmarks, reps, vectors));
  auto fixed = [](double v, const char* format) {  // "-": not measured
    char buf[32];
    std::snprintf(buf, sizeof(buf), format, v);
    return v < 0 ? std::string("-") : std::string(buf);
  };
  auto ms = [&](double s) { return fixed(s * 1e3, "%.2f"); };
  auto per = [&](double v) { return fixed(v, "%.1f"); };
  for (const Summary& s : summaries) {
    std::printf("summary : %llu nodes %llu edges %llu bytes; export %s ms (no file %s ms), "
                "open %s ms, verify %s ms; %s B/node (node-owned), %s B/edge (edge-owned)\n",
                static_cast<unsigned long long>(s.nodes), static_cast<unsigned long long>(s.edges),
                static_cast<unsigned long long>(s.bytes), ms(s.export_s).c_str(),
                ms(s.export_nofile_s).c_str(), ms(s.open_s).c_str(), ms(s.verify_s).c_str(), per(s.node_bytes).c_str(),
                per(s.edge_bytes).c_str());
  }
  // Linearity (budget: 1M <= 11x 100K, docs/DESIGN.md §8): each size against the one before it.
  for (size_t k = 1; k < summaries.size(); ++k) {
    const Summary& a = summaries[k - 1];
    const Summary& b = summaries[k];
    auto ratio = [](double x, double y) {
      char buf[32];
      std::snprintf(buf, sizeof(buf), "%.1fx", y / x);
      return x > 0 && y > 0 ? std::string(buf) : std::string("-");
    };
    std::printf("growth  : %llu -> %llu nodes (%.0fx): export %s, export_nofile %s\n",
                static_cast<unsigned long long>(a.nodes), static_cast<unsigned long long>(b.nodes),
                static_cast<double>(b.nodes) / static_cast<double>(a.nodes),
                ratio(a.export_s, b.export_s).c_str(),
                ratio(a.export_nofile_s, b.export_nofile_s).c_str());
  }
  return 0;
}
