# The commands' outputs and inputs when things go wrong (issue 18, items 9-11): full disks, text that is
# not UTF-8, pipes and FIFOs as inputs, the data loss in advise's and info's output.
add_executable(outputs_cli_test ${CMAKE_CURRENT_LIST_DIR}/outputs_cli_test.cpp)
target_include_directories(outputs_cli_test PRIVATE ${CMAKE_SOURCE_DIR}/tests/analyzer)
target_link_libraries(outputs_cli_test PRIVATE tuneup-common SQLite::SQLite3 GTest::gtest_main tuneup_warnings)
target_compile_definitions(outputs_cli_test PRIVATE TUNEUP_BINARY="$<TARGET_FILE:tuneup>")
add_dependencies(outputs_cli_test tuneup)
gtest_discover_tests(outputs_cli_test PROPERTIES LABELS cli)
