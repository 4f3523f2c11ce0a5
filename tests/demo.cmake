# The demo builds only what it runs (tests/demo_build_check.sh): tools/demo.sh in a
# new build directory plans to compile amem's sources and link amem, nothing else,
# and this build, where amem is built, has no work left for it.
add_test(NAME demo_builds_only_amem
         COMMAND bash ${PROJECT_SOURCE_DIR}/tests/demo_build_check.sh
                 ${PROJECT_SOURCE_DIR} ${CMAKE_BINARY_DIR})
set_tests_properties(demo_builds_only_amem PROPERTIES TIMEOUT 300 LABELS tools)
