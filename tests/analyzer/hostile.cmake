# Hostile and odd files (issue 18, items 7-9): views and other code in place of tables, SQLite's work
# and value sizes bounded, meta values that are not numbers, times that are not times, reports that say
# what was lost; pipes and FIFOs as inputs (read once, their head kept for format detection).
foreach(test hostile_sqlite_test odd_values_test stream_input_test)
  add_executable(${test} ${CMAKE_CURRENT_LIST_DIR}/${test}.cpp)
  target_link_libraries(${test} PRIVATE tuneup-analysis GTest::gtest_main SQLite::SQLite3 tuneup_warnings
    tuneup_sanitizer)
  gtest_discover_tests(${test} PROPERTIES LABELS analyzer)
endforeach()
