// The test binary is defined by the top-level CMakeLists, which links amem::cli
// but not bench/'s amem_workload (and the sanitizer build skips bench/ entirely).
// Compiling the library's sources here, once, lets any test include
// "bench/workload.h" or "bench/bench_util.h".
#include "bench/bench_util.cc"  // NOLINT(bugprone-suspicious-include)
#include "bench/workload.cc"    // NOLINT(bugprone-suspicious-include)
