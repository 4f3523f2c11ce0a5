# The headless Chromium tests of `amem view`'s HTML pages (tests/view/): Node's test
# runner drives Debian's chromium through puppeteer-core. Screenshots are saved in
# the build directory's view-artifacts/.
add_test(NAME view_chromium
         COMMAND bash ${PROJECT_SOURCE_DIR}/tests/view/run_node_tests.sh $<TARGET_FILE:amem>
                 ${CMAKE_BINARY_DIR}/view-artifacts)
set_tests_properties(view_chromium PROPERTIES TIMEOUT 300 LABELS "view;node" COST 100)
