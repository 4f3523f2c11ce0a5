# Short libFuzzer runs as ctest entries, one per *_fuzz.cc target. libFuzzer needs
# clang; the normal builds may use gcc, so each entry builds its target itself with
# clang++ (tests/run_fuzz.sh reads what to link from the target's `// fuzz-link:`
# lines). Skipped (with a message) when clang++ is not installed;
# `tools/bootstrap.sh test` installs it. -DAMEM_FUZZ_TESTS=OFF leaves them out:
# each session builds its own instrumented binary whatever the build type, so
# tools/test.sh runs them in one of its two builds only.
find_program(AMEM_CLANGXX NAMES clang++ clang++-19 clang++-18 clang++-17 clang++-16 clang++-15 clang++-14)

# amem_fuzz_test(NAME SOURCE [RUNS [SECONDS]]): SOURCE relative to the project root.
function(amem_fuzz_test name source)
  set(runs 20000)
  set(secs 20)
  if(ARGC GREATER 2)
    set(runs ${ARGV2})
  endif()
  if(ARGC GREATER 3)
    set(secs ${ARGV3})
  endif()
  if(NOT AMEM_FUZZ_TESTS)
    return()
  elseif(AMEM_CLANGXX)
    add_test(NAME ${name}
             COMMAND ${CMAKE_COMMAND} -E env AMEM_FUZZ_CXX=${AMEM_CLANGXX}
                     bash ${PROJECT_SOURCE_DIR}/tests/run_fuzz.sh
                     ${PROJECT_SOURCE_DIR} ${CMAKE_BINARY_DIR}/fuzz ${source} ${runs} ${secs})
    # The targets share sources (common/, store/, snapshot/): the first session
    # compiles them (through ccache), and every other one waits for it, then runs
    # beside the other tests and the other sessions, the shared objects in the cache.
    # COST: started early, the sessions run beside the other tests instead of after.
    set_tests_properties(${name} PROPERTIES TIMEOUT 600 LABELS fuzz COST 60)
    if(NOT name STREQUAL "snapshot_reader_fuzz")
      set_tests_properties(${name} PROPERTIES DEPENDS snapshot_reader_fuzz)
    else()
      set_tests_properties(${name} PROPERTIES COST 100)
    endif()
  else()
    message(STATUS "clang++ not found: fuzz test ${name} is not registered")
  endif()
endfunction()

amem_fuzz_test(snapshot_reader_fuzz snapshot/reader_fuzz.cc)
amem_fuzz_test(tools_ingest_fuzz tools/io/ingest_fuzz.cc)
amem_fuzz_test(tools_mcp_fuzz tools/mcp/server_fuzz.cc)
amem_fuzz_test(snapshot_agentic_memory_fuzz snapshot/agentic_memory_fuzz.cc)
amem_fuzz_test(tools_index_scip_fuzz tools/index/scip_fuzz.cc)
amem_fuzz_test(tools_index_ctags_fuzz tools/index/ctags_fuzz.cc)

# With clang as the project compiler and -DAMEM_FUZZ=ON, also a regular target.
if(AMEM_FUZZ AND CMAKE_CXX_COMPILER_ID MATCHES "Clang")
  add_executable(amem_reader_fuzz ${PROJECT_SOURCE_DIR}/snapshot/reader_fuzz.cc)
  target_compile_options(amem_reader_fuzz PRIVATE -fsanitize=fuzzer,address)
  target_link_options(amem_reader_fuzz PRIVATE -fsanitize=fuzzer,address)
  target_link_libraries(amem_reader_fuzz PRIVATE amem_snapshot)
endif()
amem_fuzz_test(tools_index_diff_fuzz tools/index/diff_fuzz.cc)
# Deltas patched with their checksums redone (tests/snapshot/delta_fuzz_fixture.h):
# Delta::Open's checks, and every accessor of the base + delta view.
amem_fuzz_test(snapshot_delta_fuzz snapshot/delta_fuzz.cc)
amem_fuzz_test(snapshot_layered_fuzz snapshot/layered_fuzz.cc)
amem_fuzz_test(tools_view_writers_fuzz tools/view/writers_fuzz.cc)
