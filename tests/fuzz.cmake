# A short libFuzzer run of the snapshot reader (snapshot/reader_fuzz.cc) as a ctest
# entry. libFuzzer needs clang; the normal builds may use gcc, so the entry builds
# the target itself with clang++ (tests/snapshot/run_fuzz.sh). Skipped (with a
# message) when clang++ is not installed; tools/bootstrap.sh installs it.
find_program(AMEM_CLANGXX NAMES clang++ clang++-19 clang++-18 clang++-17 clang++-16 clang++-15 clang++-14)
if(AMEM_CLANGXX)
  add_test(NAME snapshot_reader_fuzz
           COMMAND ${CMAKE_COMMAND} -E env AMEM_FUZZ_CXX=${AMEM_CLANGXX}
                   bash ${PROJECT_SOURCE_DIR}/tests/snapshot/run_fuzz.sh
                   ${PROJECT_SOURCE_DIR} ${CMAKE_BINARY_DIR}/fuzz/reader 20000 20)
  set_tests_properties(snapshot_reader_fuzz PROPERTIES TIMEOUT 600 LABELS fuzz)
else()
  message(STATUS "clang++ not found: the snapshot reader fuzz test is not registered")
endif()

# With clang as the project compiler and -DAMEM_FUZZ=ON, also a regular target.
if(AMEM_FUZZ AND CMAKE_CXX_COMPILER_ID MATCHES "Clang")
  add_executable(amem_reader_fuzz ${PROJECT_SOURCE_DIR}/snapshot/reader_fuzz.cc)
  target_compile_options(amem_reader_fuzz PRIVATE -fsanitize=fuzzer,address)
  target_link_options(amem_reader_fuzz PRIVATE -fsanitize=fuzzer,address)
  target_link_libraries(amem_reader_fuzz PRIVATE amem_snapshot)
endif()
