# The trace model, its builder, format detection and the Kineto JSON importer, checked against the
# real traces in ../shared/traces (tests skip with a message when that folder is absent).
add_executable(kineto_json_test ${CMAKE_CURRENT_LIST_DIR}/kineto_json_test.cpp)
target_link_libraries(kineto_json_test PRIVATE tuneup-analysis GTest::gtest_main ZLIB::ZLIB tuneup_warnings
  tuneup_sanitizer)
target_compile_definitions(kineto_json_test PRIVATE TUNEUP_SHARED_TRACES="${TUNEUP_SHARED_TRACES}")
gtest_discover_tests(kineto_json_test PROPERTIES LABELS analyzer DISCOVERY_TIMEOUT 60)
