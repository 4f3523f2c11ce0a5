// amem_gen: writes the benchmark workload (bench/workload.h) as `amem ingest` JSON
// Lines (docs/DESIGN.md §6): every node line, then every edge line.
//
//   amem_gen [--num=10000] [--seed=1634559341] [--vectors=1] [--dimension=128]
//            [--start_ts=1700000000|auto] [--out=FILE|-] [--truth=FILE]
//
// --start_ts: the first session's Unix time. Sessions are 6 h apart, so a large
// workload reaches past today (1M nodes: about 7 years), which amem ingest refuses
// (a ts more than a day ahead of the clock); `auto` starts it early enough to end
// by now, when the default start would not (as ingest_bench and snapshot_bench
// generate it, so the workload checksums agree).
//
// --truth writes the planted ground truth as one JSON object, by node key:
//   {"chains":[[oldest,...,newest],...],"near_duplicates":[[earlier,copy],...],
//    "contradictions":[[statement,negation],...]}
// The workload checksum goes to stderr.
#include <algorithm>
#include <cstdio>
#include <string>

#include "bench/bench_util.h"
#include "bench/workload.h"

using namespace amem::bench;

namespace {

constexpr const char* kProgram = "amem_gen";

void AppendKey(std::string* out, const Workload& w, uint32_t index) {
  // Keys are generated from [a-z0-9:/._-] and UTF-8 letters: nothing to escape.
  *out += '"' + w.nodes[index].key + '"';
}

std::string TruthJson(const Workload& w) {
  std::string out = "{\"chains\":[";
  for (size_t c = 0; c < w.chains.size(); ++c) {
    if (c > 0) out += ',';
    out += '[';
    for (size_t k = 0; k < w.chains[c].size(); ++k) {
      if (k > 0) out += ',';
      AppendKey(&out, w, w.chains[c][k]);
    }
    out += ']';
  }
  auto pairs = [&](const char* name, const std::vector<std::pair<uint32_t, uint32_t>>& v) {
    out += std::string("],\"") + name + "\":[";
    for (size_t k = 0; k < v.size(); ++k) {
      if (k > 0) out += ',';
      out += '[';
      AppendKey(&out, w, v[k].first);
      out += ',';
      AppendKey(&out, w, v[k].second);
      out += ']';
    }
  };
  pairs("near_duplicates", w.near_duplicates);
  pairs("contradictions", w.contradictions);
  out += "]}\n";
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  Flags flags(argc, argv);
  WorkloadOptions options;
  options.num_nodes = flags.Uint("num", options.num_nodes);
  options.seed = flags.Uint("seed", options.seed);
  options.vectors = flags.Bool("vectors", options.vectors);
  options.dimension = static_cast<uint32_t>(flags.Uint("dimension", options.dimension));
  const std::string start = flags.String("start_ts", "");
  std::string out_path = flags.String("out", "-");
  std::string truth_path = flags.String("truth", "");
  if (!flags.Unknown().empty()) {
    Die(kProgram, "unknown argument " + flags.Unknown()[0] +
                      "\nusage: amem_gen [--num=N] [--seed=S] [--vectors=0|1] "
                      "[--dimension=D] [--start_ts=UNIX|auto] [--out=FILE|-] [--truth=FILE]", 2);
  }
  if (start == "auto") {  // as ingest_bench and snapshot_bench do: same checksum
    options.start_ts = std::min(options.start_ts, WorkloadStartEndingNow(options));
  } else if (!start.empty()) {
    options.start_ts = static_cast<int64_t>(flags.Uint("start_ts", 0));
  }
  if (options.num_nodes >= (uint64_t{1} << 31)) Die(kProgram, "--num is too large", 2);
  if (options.dimension == 0 || options.dimension > amem::kMaxDimension) {
    Die(kProgram, "--dimension must be 1.." + std::to_string(amem::kMaxDimension), 2);
  }

  Workload w = GenerateWorkload(options);
  std::FILE* out = out_path == "-" ? stdout : std::fopen(out_path.c_str(), "wb");
  if (out == nullptr) Die(kProgram, "cannot open " + out_path);
  if (!WriteJsonLines(w, out)) Die(kProgram, "write failed: " + out_path);
  if (out != stdout && std::fclose(out) != 0) Die(kProgram, "close failed: " + out_path);

  if (!truth_path.empty()) {
    std::FILE* t = std::fopen(truth_path.c_str(), "wb");
    if (t == nullptr) Die(kProgram, "cannot open " + truth_path);
    std::string json = TruthJson(w);
    bool ok = std::fwrite(json.data(), 1, json.size(), t) == json.size();
    if (std::fclose(t) != 0 || !ok) Die(kProgram, "write failed: " + truth_path);
  }
  std::fprintf(stderr, "amem_gen: %zu nodes, %zu edges, checksum %016llx\n",
               w.nodes.size(), w.edges.size(),
               static_cast<unsigned long long>(WorkloadChecksum(w)));
  return 0;
}
