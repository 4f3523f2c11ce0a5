// Whether this test binary is the AddressSanitizer build (tools/test.sh builds it
// beside the Release build). Under it every amem process the tests start is 10-40
// times slower, so tests that start hundreds of them ask for fewer rounds there:
// the sanitizer checks the same code paths, the Release build runs every round.
#ifndef AMEM_TESTS_SANITIZER_H_
#define AMEM_TESTS_SANITIZER_H_

namespace amem::testing {
#if defined(__SANITIZE_ADDRESS__)
inline constexpr bool kSanitizerBuild = true;
#else
inline constexpr bool kSanitizerBuild = false;
#endif
}  // namespace amem::testing

#endif  // AMEM_TESTS_SANITIZER_H_
