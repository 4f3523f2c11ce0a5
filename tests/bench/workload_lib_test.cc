// The test binary is defined by the top-level CMakeLists, which links amem_tools
// but not bench/'s amem_workload (and the sanitizer build skips bench/ entirely).
// Compiling the generator here, once, lets any test include "bench/workload.h".
#include "bench/workload.cc"  // NOLINT(bugprone-suspicious-include)
