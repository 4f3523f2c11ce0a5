// The wall clock, in one place so that tests and replays can avoid it: every write
// takes an explicit timestamp when the caller gives one.
#ifndef AMEM_COMMON_CLOCK_H_
#define AMEM_COMMON_CLOCK_H_

#include <cstdint>

namespace amem {

// Unix time in whole seconds (UTC).
int64_t NowSeconds();
// Monotonic nanoseconds, for timing only.
uint64_t MonotonicNanos();

}  // namespace amem

#endif  // AMEM_COMMON_CLOCK_H_
