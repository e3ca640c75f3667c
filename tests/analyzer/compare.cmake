# tuneup compare's analysis (analyzer/lib/compare): verdicts on known step times (same, regressed,
# improved, inconclusive with the steps that would decide, few steps, incomparable environments),
# kernels per call and per step, findings and settings, the reports' formats (JSON fields, Markdown's
# size bound, JUnit and CSV escaping), the real HTA trace_diff pair through the job core, and the run
# history in real SQLite files.
add_executable(compare_test ${CMAKE_CURRENT_LIST_DIR}/compare_test.cpp ${CMAKE_CURRENT_LIST_DIR}/compare_reports_test.cpp
  ${CMAKE_CURRENT_LIST_DIR}/history_test.cpp)
target_include_directories(compare_test PRIVATE ${PROJECT_SOURCE_DIR}/tests/support)
target_link_libraries(compare_test PRIVATE tuneup-analysis tuneup-rules SQLite::SQLite3 GTest::gtest_main tuneup_warnings
  tuneup_sanitizer)
target_compile_definitions(compare_test PRIVATE TUNEUP_SHARED_TRACES="${TUNEUP_SHARED_TRACES}")
tuneup_discover_tests(compare_test LABELS analyzer compare DISCOVERY_TIMEOUT 60)

# tuneup advise --format junit: one test case per rule over a job's ranks, failures by --fail-on.
add_executable(junit_report_test ${CMAKE_CURRENT_LIST_DIR}/junit_report_test.cpp)
target_link_libraries(junit_report_test PRIVATE tuneup-analysis GTest::gtest_main tuneup_warnings tuneup_sanitizer)
gtest_discover_tests(junit_report_test PROPERTIES LABELS analyzer)
