// Helpers shared by the benchmark programs (bench/*_bench.cc, amem_gen): db_bench
// style flags, a scratch directory that removes itself, timing and medians.
#ifndef AMEM_BENCH_BENCH_UTIL_H_
#define AMEM_BENCH_BENCH_UTIL_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace amem::bench {

// Parses "--name=value" (or "--name" alone, for booleans) arguments. Every flag a
// program reads must be declared by reading it; Unknown() lists the rest.
class Flags {
 public:
  Flags(int argc, char** argv);
  // The value of --name, or `def` when absent. Exits with status 2 (usage) when the
  // value does not parse.
  std::string String(std::string_view name, std::string_view def);
  uint64_t Uint(std::string_view name, uint64_t def);
  bool Bool(std::string_view name, bool def);  // "--x", "--x=1|true", "--x=0|false"
  // Comma-separated values, e.g. --benchmarks=ingest,open.
  std::vector<std::string> List(std::string_view name, std::string_view def);
  // Arguments that were never read, in command-line order.
  std::vector<std::string> Unknown() const;

 private:
  const std::string* Find(std::string_view name);
  std::vector<std::string> args_;
  std::vector<bool> used_;
};

// A fresh directory under $TMPDIR (else /tmp), removed recursively on destruction.
class ScratchDir {
 public:
  explicit ScratchDir(std::string_view prefix);
  ~ScratchDir();
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
  const std::string& path() const { return path_; }
  // A path inside the directory.
  std::string Sub(std::string_view name) const { return path_ + "/" + std::string(name); }

 private:
  std::string path_;
};

// Removes `path` and everything below it; missing is fine.
void RemoveAll(const std::string& path);

// Seconds since an arbitrary start, monotonic.
double NowSeconds();
// CPU seconds (user + system) this process has used, all threads.
double CpuSeconds();
// Minor page faults this process has taken (first touches of memory).
uint64_t MinorFaults();

// Wall and CPU time and page faults of one timed region. On a shared machine the
// CPU time is the steadier figure; the wall time includes waiting for fsync and for
// other processes. On these VMs a first-touch fault costs ~13 us (docs/DESIGN.md §8).
struct Sample {
  double wall = 0, cpu = 0;
  uint64_t faults = 0;
};
class Stopwatch {
 public:
  Stopwatch() : wall_(NowSeconds()), cpu_(CpuSeconds()), faults_(MinorFaults()) {}
  Sample Elapsed() const {
    return {NowSeconds() - wall_, CpuSeconds() - cpu_, MinorFaults() - faults_};
  }

 private:
  double wall_, cpu_;
  uint64_t faults_;
};

// The median of `samples` (the mean of the middle two for an even count).
// REQUIRES: !samples.empty().
double Median(std::vector<double> samples);

// Unless `trim`, keeps freed memory in the process so that timed runs reuse the
// pages the warm-up touched (docs/DESIGN.md §8: a first touch costs ~13 us here); glibc
// would otherwise hand large frees back to the kernel and every run would fault
// again. Returns how to say which in a header line.
const char* ConfigureMalloc(bool trim);

// Prints "name : X micros/op; Y MB/s" (db_bench's line; MB/s omitted when bytes is
// 0) followed by free-form `extra`, on stdout.
void Report(std::string_view name, double seconds, uint64_t ops, uint64_t bytes,
            std::string_view extra);

// Prints "<program>: <message>" to stderr and exits with `code` (2: usage).
[[noreturn]] void Die(std::string_view program, std::string_view message, int code = 1);

}  // namespace amem::bench

#endif  // AMEM_BENCH_BENCH_UTIL_H_
