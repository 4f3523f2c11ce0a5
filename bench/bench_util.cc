#include "bench/bench_util.h"

#include <malloc.h>

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <limits>

#include <sys/resource.h>

#include "common/clock.h"

namespace amem::bench {

Flags::Flags(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) args_.emplace_back(argv[i]);
  used_.assign(args_.size(), false);
}

// The last occurrence wins, as in db_bench; earlier ones count as read too.
const std::string* Flags::Find(std::string_view name) {
  const std::string* found = nullptr;
  for (size_t i = 0; i < args_.size(); ++i) {
    std::string_view a = args_[i];
    if (a.substr(0, 2) != "--" || a.substr(2, name.size()) != name) continue;
    std::string_view rest = a.substr(2 + name.size());
    if (!rest.empty() && rest[0] != '=') continue;
    used_[i] = true;
    found = &args_[i];
  }
  return found;
}

namespace {
std::string_view ValueOf(const std::string& arg) {
  size_t eq = arg.find('=');
  return eq == std::string::npos ? std::string_view() : std::string_view(arg).substr(eq + 1);
}
}  // namespace

std::string Flags::String(std::string_view name, std::string_view def) {
  const std::string* a = Find(name);
  return std::string(a ? ValueOf(*a) : def);
}

uint64_t Flags::Uint(std::string_view name, uint64_t def) {
  const std::string* a = Find(name);
  if (!a) return def;
  std::string_view v = ValueOf(*a);
  uint64_t out = 0;
  auto r = std::from_chars(v.data(), v.data() + v.size(), out);
  if (v.empty() || r.ec != std::errc() || r.ptr != v.data() + v.size()) {
    Die("flags", "--" + std::string(name) + " wants a non-negative integer, got '" +
                     std::string(v) + "'", 2);
  }
  return out;
}

bool Flags::Bool(std::string_view name, bool def) {
  const std::string* a = Find(name);
  if (!a) return def;
  if (a->find('=') == std::string::npos) return true;
  std::string_view v = ValueOf(*a);
  if (v == "1" || v == "true") return true;
  if (v == "0" || v == "false") return false;
  Die("flags", "--" + std::string(name) + " wants 0, 1, true or false, got '" +
                   std::string(v) + "'", 2);
}

std::vector<std::string> Flags::List(std::string_view name, std::string_view def) {
  std::string v = String(name, def);
  std::vector<std::string> out;
  size_t p = 0;
  while (p <= v.size()) {
    size_t q = std::min(v.find(',', p), v.size());
    if (q > p) out.push_back(v.substr(p, q - p));
    p = q + 1;
  }
  return out;
}

std::vector<std::string> Flags::Unknown() const {
  std::vector<std::string> out;
  for (size_t i = 0; i < args_.size(); ++i) {
    if (!used_[i]) out.push_back(args_[i]);
  }
  return out;
}

ScratchDir::ScratchDir(std::string_view prefix) {
  const char* tmp = std::getenv("TMPDIR");
  std::string templ = std::string(tmp && *tmp ? tmp : "/tmp") + "/" + std::string(prefix) +
                      "-XXXXXX";
  std::vector<char> buf(templ.begin(), templ.end());
  buf.push_back('\0');
  if (mkdtemp(buf.data()) == nullptr) Die("scratch", "mkdtemp failed for " + templ);
  path_ = buf.data();
}

ScratchDir::~ScratchDir() { RemoveAll(path_); }

void RemoveAll(const std::string& path) {
  std::error_code ec;
  std::filesystem::remove_all(path, ec);
}

double NowSeconds() { return static_cast<double>(MonotonicNanos()) * 1e-9; }

double CpuSeconds() {
  timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

uint64_t MinorFaults() {
  rusage usage;
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<uint64_t>(usage.ru_minflt);
}

const char* ConfigureMalloc(bool trim) {
  if (trim) return "malloc returns memory to the kernel (cold pages)";
  mallopt(M_TRIM_THRESHOLD, std::numeric_limits<int>::max());
  mallopt(M_MMAP_THRESHOLD, 32 << 20);
  return "malloc keeps freed memory (warm pages)";
}

double Median(std::vector<double> samples) {
  std::sort(samples.begin(), samples.end());
  size_t n = samples.size();
  return n % 2 ? samples[n / 2] : (samples[n / 2 - 1] + samples[n / 2]) / 2;
}

void Report(std::string_view name, double seconds, uint64_t ops, uint64_t bytes,
            std::string_view extra) {
  double micros_per_op = ops ? seconds * 1e6 / static_cast<double>(ops) : 0;
  std::printf("%-28.*s : %11.3f micros/op;", static_cast<int>(name.size()), name.data(),
              micros_per_op);
  if (bytes > 0 && seconds > 0) {
    std::printf(" %7.1f MB/s;", static_cast<double>(bytes) / 1048576.0 / seconds);
  }
  if (!extra.empty()) std::printf(" %.*s", static_cast<int>(extra.size()), extra.data());
  std::printf("\n");
  std::fflush(stdout);
}

[[noreturn]] void Die(std::string_view program, std::string_view message, int code) {
  std::fprintf(stderr, "%.*s: %.*s\n", static_cast<int>(program.size()), program.data(),
               static_cast<int>(message.size()), message.data());
  std::exit(code);
}

}  // namespace amem::bench
