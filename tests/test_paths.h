// Where the tests find the amem binary (AMEM_BINARY) and the source tree
// (AMEM_SOURCE_DIR, for tests/data and the scripts in tools/). Both are defined in
// one source that CMakeLists.txt generates in the build directory, so that no other
// test file depends on the clone's path and ccache can share them between clones.
#ifndef AMEM_TESTS_TEST_PATHS_H_
#define AMEM_TESTS_TEST_PATHS_H_

namespace amem::testing {
const char* AmemBinary();
const char* SourceDir();
}  // namespace amem::testing

#define AMEM_BINARY (::amem::testing::AmemBinary())
#define AMEM_SOURCE_DIR (::amem::testing::SourceDir())

#endif  // AMEM_TESTS_TEST_PATHS_H_
