# The real indexers of the code graph tests. index_scip_typescript runs the pinned
# scip-typescript (tests/index/package-lock.json, installed by npm ci when needed)
# on the TypeScript fixture tests/data/code/ts and writes
# ${CMAKE_BINARY_DIR}/scip_ts/index.scip; a test that reads that index requires the
# ctest fixture `scip_ts`. universal-ctags (tools/bootstrap.sh test) is run by the
# C++ tests themselves (tests/index/ctags_test.cc).
add_test(NAME index_scip_typescript
         COMMAND bash ${PROJECT_SOURCE_DIR}/tests/index/make_scip.sh ${CMAKE_BINARY_DIR}/scip_ts)
set_tests_properties(index_scip_typescript PROPERTIES TIMEOUT 300 LABELS "index;node"
                     FIXTURES_SETUP scip_ts)

# The code graph of that index (tests/cli/cmd_index_scip_test.cc, hidden from the
# test discovery by its [.] tag, since it needs the fixture above).
add_test(NAME index_scip_typescript_graph
         COMMAND amem_tests "[scip_ts]")
set_tests_properties(index_scip_typescript_graph PROPERTIES TIMEOUT 300 LABELS "index"
                     FIXTURES_REQUIRED scip_ts
                     ENVIRONMENT "AMEM_SCIP_TS_INDEX=${CMAKE_BINARY_DIR}/scip_ts/index.scip")
