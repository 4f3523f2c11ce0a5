// Writes a synthetic SCIP index (bench/scip_encode.h GenerateIndex) to a file, for
// benchmarks of `amem index --scip` (bench/index_bench.sh).
//
// Usage: scip_gen --out=FILE [--docs=5000] [--occ-per-doc=200] [--symbols-per-doc=20]
//                 [--seed=42] [--changed-doc=D]
// --changed-doc draws document D's references again: the index after an edit of
// one file, for timing a re-index.
// Every flag takes a value, given as `--flag=VALUE` or `--flag VALUE`.
// Same flags, same bytes. Prints the documents, occurrences and bytes written.
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "bench/bench_util.h"
#include "bench/scip_encode.h"

int main(int argc, char** argv) {
  // "--flag VALUE" as "--flag=VALUE", the form Flags reads.
  std::vector<std::string> args = {argv[0]};
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a.rfind("--", 0) == 0 && a.find('=') == std::string::npos && i + 1 < argc &&
        std::string(argv[i + 1]).rfind("--", 0) != 0) {
      a += std::string("=") + argv[++i];
    }
    args.push_back(std::move(a));
  }
  std::vector<char*> ptrs;
  for (std::string& a : args) ptrs.push_back(a.data());
  amem::bench::Flags flags(static_cast<int>(ptrs.size()), ptrs.data());
  const std::string out = flags.String("out", "");
  amem::bench::scip::GenOptions options;
  options.docs = flags.Uint("docs", options.docs);
  options.occ_per_doc = flags.Uint("occ-per-doc", options.occ_per_doc);
  options.symbols_per_doc = flags.Uint("symbols-per-doc", options.symbols_per_doc);
  options.seed = flags.Uint("seed", options.seed);
  options.changed_doc = flags.Uint("changed-doc", options.changed_doc);
  if (out.empty() || !flags.Unknown().empty()) {
    std::fprintf(stderr,
                 "usage: scip_gen --out=FILE [--docs=N] [--occ-per-doc=M] "
                 "[--symbols-per-doc=K] [--seed=S] [--changed-doc=D]\n");
    return 2;
  }
  const std::string bytes = amem::bench::scip::GenerateIndex(options);
  std::ofstream file(out, std::ios::binary | std::ios::trunc);
  file.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  file.close();
  if (!file) {
    std::fprintf(stderr, "scip_gen: cannot write %s\n", out.c_str());
    return 1;
  }
  std::printf("scip_gen: %s: %llu documents, %llu occurrences, %zu bytes\n", out.c_str(),
              static_cast<unsigned long long>(options.docs),
              static_cast<unsigned long long>(options.docs * options.occ_per_doc), bytes.size());
  return 0;
}
