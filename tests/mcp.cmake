# The MCP end-to-end tests (tests/mcp/): Node's test runner drives `amem mcp` through
# the official MCP SDK client, and compares it with the official memory server.
# tests/mcp/run_node_tests.sh installs the pinned packages (npm ci) when needed and
# fails loudly when node or npm is missing. The C++ protocol tests in
# tests/mcp/*_test.cc are part of amem_tests like every other *_test.cc.
add_test(NAME mcp_node_e2e
         COMMAND bash ${PROJECT_SOURCE_DIR}/tests/mcp/run_node_tests.sh $<TARGET_FILE:amem>)
# COST: ctest starts the costliest tests first; a new build directory has no timings
# of its own yet, and these long ones started last would run alone at the end.
set_tests_properties(mcp_node_e2e PROPERTIES TIMEOUT 300 LABELS "mcp;node" COST 200)
