// SCIP parse benchmark: tools/index/scip.h's ReadScip against Debian's protobuf
// (libprotobuf, C++ generated from bench/scip.proto) on one synthetic index
// (bench/scip_encode.h GenerateIndex), held in memory.
//
//   amem            ReadScip: the wire format, every check of docs/CODE.md §6, and
//                   the CodeIndex model (strings copied out of the input)
//   protobuf        scip::Index::ParseFromArray into a fresh message (proto3: string
//                   fields checked as UTF-8 too, no other check)
//   protobuf_arena  the same, the message allocated on a google::protobuf::Arena
//
// Usage: scip_parse_bench [--benchmarks=amem,protobuf,protobuf_arena] [--docs=5000]
//                         [--occ-per-doc=200] [--symbols-per-doc=20] [--runs=5]
//                         [--malloc_trim=0]
// The defaults make 1,000,000 occurrences and 100,000 symbols. Built without
// protobuf (not found by CMake), the protobuf runs print that the peer is missing.
// Each line: "name : X micros/op; Y MB/s" (X one parse of the whole index, the median
// wall time of --runs timed runs after one untimed one; CPU time beside it) and a
// checksum (occurrences + symbols seen) so that no work is skipped. Last, the ratios
// of each peer's medians to amem's. Run one benchmark per process for the fairest
// figures. By default malloc keeps freed memory, so timed runs reuse the pages the
// untimed one touched; --malloc_trim=1 keeps glibc's default, under which protobuf's
// many small frees hand pages back and each run faults them in again (~95,000 page
// faults a parse at the defaults, against tens for amem).
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "bench/bench_util.h"
#include "bench/scip_encode.h"
#include "tools/index/scip.h"

#ifdef AMEM_HAVE_PROTOBUF
#include <google/protobuf/arena.h>

#include "scip.pb.h"
#endif

namespace amem::bench {
namespace {

struct Timing {
  double wall = 0, cpu = 0, faults = 0;
  uint64_t checksum = 0;
};

// Runs `parse` once untimed and `runs` times timed; parse returns the checksum and
// keeps what it built until `release`, which is not timed.
template <typename Parse, typename Release>
Timing Measure(uint64_t runs, Parse parse, Release release) {
  Timing t;
  t.checksum = parse();
  release();
  std::vector<double> wall, cpu, faults;
  for (uint64_t i = 0; i < runs; ++i) {
    Stopwatch watch;
    const uint64_t sum = parse();
    const Sample s = watch.Elapsed();
    release();
    if (sum != t.checksum) {
      std::fprintf(stderr, "scip_parse_bench: checksum changed between runs\n");
      std::exit(1);
    }
    wall.push_back(s.wall);
    cpu.push_back(s.cpu);
    faults.push_back(static_cast<double>(s.faults));
  }
  t.wall = Median(wall);
  t.cpu = Median(cpu);
  t.faults = Median(faults);
  return t;
}

void Report(const char* name, const Timing& t, size_t bytes) {
  std::printf("%-15s: %10.0f micros/op; %7.1f MB/s (cpu %.0f micros, %.0f page faults) "
              "checksum %llu\n",
              name, t.wall * 1e6, bytes / t.wall / 1e6, t.cpu * 1e6, t.faults,
              static_cast<unsigned long long>(t.checksum));
}

uint64_t AmemParse(const std::string& bytes, index::CodeIndex* out) {
  auto r = index::ReadScip(bytes);
  if (!r.ok()) {
    std::fprintf(stderr, "scip_parse_bench: %s\n", r.status().ToString().c_str());
    std::exit(1);
  }
  uint64_t sum = 0;
  for (const index::Document& d : r->documents) sum += d.occurrences.size() + d.symbols.size();
  *out = std::move(*r);
  return sum;
}

#ifdef AMEM_HAVE_PROTOBUF
uint64_t Count(const ::scip::Index& index) {
  uint64_t sum = 0;
  for (const ::scip::Document& d : index.documents()) {
    sum += d.occurrences_size() + d.symbols_size();
  }
  return sum;
}
#endif

int Main(int argc, char** argv) {
  Flags flags(argc, argv);
  const std::vector<std::string> benchmarks =
      flags.List("benchmarks", "amem,protobuf,protobuf_arena");
  scip::GenOptions options;
  options.docs = flags.Uint("docs", options.docs);
  options.occ_per_doc = flags.Uint("occ-per-doc", options.occ_per_doc);
  options.symbols_per_doc = flags.Uint("symbols-per-doc", options.symbols_per_doc);
  const uint64_t runs = flags.Uint("runs", 5);
  const bool malloc_trim = flags.Bool("malloc_trim", false);
  if (!flags.Unknown().empty() || runs == 0) {
    std::fprintf(stderr, "usage: scip_parse_bench [--benchmarks=amem,protobuf,protobuf_arena] "
                         "[--docs=N] [--occ-per-doc=M] [--symbols-per-doc=K] [--runs=R] "
                         "[--malloc_trim=0|1]\n");
    return 2;
  }
  const std::string bytes = scip::GenerateIndex(options);
  std::printf("index: %llu documents, %llu occurrences, %llu symbols, %zu bytes; median of "
              "%llu; %s\n",
              static_cast<unsigned long long>(options.docs),
              static_cast<unsigned long long>(options.docs * options.occ_per_doc),
              static_cast<unsigned long long>(options.docs * options.symbols_per_doc),
              bytes.size(), static_cast<unsigned long long>(runs), ConfigureMalloc(malloc_trim));

  Timing amem;
  std::vector<std::pair<std::string, Timing>> peers;
  for (const std::string& name : benchmarks) {
    if (name == "amem") {
      index::CodeIndex model;
      const Timing t = Measure(
          runs, [&] { return AmemParse(bytes, &model); }, [&] { model = index::CodeIndex(); });
      Report("amem", t, bytes.size());
      amem = t;
    } else if (name == "protobuf" || name == "protobuf_arena") {
#ifdef AMEM_HAVE_PROTOBUF
      const bool arena = name == "protobuf_arena";
      std::unique_ptr<google::protobuf::Arena> last_arena;
      std::unique_ptr<::scip::Index> last_index;
      auto release = [&] {
        last_index.reset();
        last_arena.reset();
      };
      const Timing t = Measure(runs, [&] {
        ::scip::Index* index;
        if (arena) {
          last_arena = std::make_unique<google::protobuf::Arena>();
          index = google::protobuf::Arena::CreateMessage<::scip::Index>(last_arena.get());
        } else {
          last_index = std::make_unique<::scip::Index>();
          index = last_index.get();
        }
        if (!index->ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) {
          std::fprintf(stderr, "scip_parse_bench: protobuf refused the index\n");
          std::exit(1);
        }
        return Count(*index);
      }, release);
      Report(name.c_str(), t, bytes.size());
      peers.emplace_back(name, t);
#else
      std::printf("%-15s: peer missing (protobuf not found when bench/ was configured)\n",
                  name.c_str());
#endif
    } else {
      std::fprintf(stderr, "scip_parse_bench: unknown benchmark '%s'\n", name.c_str());
      return 2;
    }
  }
  // On a shared machine the CPU time is the steadier figure (bench/bench_util.h).
  for (const auto& [name, t] : peers) {
    if (amem.wall > 0) {
      std::printf("ratio %s/amem: wall %.2f, cpu %.2f\n", name.c_str(), t.wall / amem.wall,
                  t.cpu / amem.cpu);
    }
  }
  return 0;
}

}  // namespace
}  // namespace amem::bench

int main(int argc, char** argv) { return amem::bench::Main(argc, argv); }
