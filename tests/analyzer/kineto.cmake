# The trace model, its builder, format detection and the Kineto JSON importer, checked against the
# real traces in ../shared/traces (tests skip with a message when that folder is absent).
add_executable(kineto_json_test ${CMAKE_CURRENT_LIST_DIR}/kineto_json_test.cpp
  ${CMAKE_CURRENT_LIST_DIR}/trace_model_test.cpp ${CMAKE_CURRENT_LIST_DIR}/kineto_windows_test.cpp
  ${CMAKE_CURRENT_LIST_DIR}/kineto_real_traces_test.cpp)
target_link_libraries(kineto_json_test PRIVATE tuneup-analysis GTest::gtest_main ZLIB::ZLIB tuneup_warnings
  tuneup_sanitizer)
target_compile_definitions(kineto_json_test PRIVATE TUNEUP_SHARED_TRACES="${TUNEUP_SHARED_TRACES}")
gtest_discover_tests(kineto_json_test TEST_FILTER "-KinetoJsonThreads.*" PROPERTIES LABELS analyzer
  DISCOVERY_TIMEOUT 60)
# Windows of events parsed on several threads: the tsan preset runs these too.
gtest_discover_tests(kineto_json_test TEST_FILTER "KinetoJsonThreads.*" PROPERTIES LABELS threads
  DISCOVERY_TIMEOUT 60)
tuneup_threads_test_programs(kineto_json_test)

# The scanner that cuts the events array into windows, and the windows (import/json_windows.h).
add_executable(json_window_splitter_test ${CMAKE_CURRENT_LIST_DIR}/json_window_splitter_test.cpp)
target_link_libraries(json_window_splitter_test PRIVATE tuneup-analysis GTest::gtest_main tuneup_warnings
  tuneup_sanitizer)
gtest_discover_tests(json_window_splitter_test PROPERTIES LABELS analyzer)
