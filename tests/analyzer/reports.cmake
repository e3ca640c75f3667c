# Markdown and HTML reports, what their readers see (report_display_test), SQL user rules and the
# tuneup-schema writer, with the built-in rules; the real-trace tests skip with a message when
# ../shared/traces is absent.
foreach(test reports_test report_display_test sql_rule_test)
  add_executable(${test} ${CMAKE_CURRENT_LIST_DIR}/${test}.cpp)
  target_link_libraries(${test} PRIVATE tuneup-rules tuneup-analysis GTest::gtest_main tuneup_warnings tuneup_sanitizer)
  target_compile_definitions(${test} PRIVATE TUNEUP_SHARED_TRACES="${TUNEUP_SHARED_TRACES}")
  gtest_discover_tests(${test} PROPERTIES LABELS analyzer DISCOVERY_TIMEOUT 60)
endforeach()
