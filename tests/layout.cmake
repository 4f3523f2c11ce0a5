# Test files are named after what they test (tests/README.md, tests/check_test_names.sh).
add_test(NAME test_file_names
         COMMAND bash ${PROJECT_SOURCE_DIR}/tests/check_test_names.sh ${PROJECT_SOURCE_DIR})
set_tests_properties(test_file_names PROPERTIES TIMEOUT 60)
