# `tuneup import`, and `tuneup advise` on Nsight Systems exports (real ones from ../shared/traces; skipped
# with a message when that folder is absent).
add_executable(import_cli_test ${CMAKE_CURRENT_LIST_DIR}/import_cli_test.cpp)
target_include_directories(import_cli_test PRIVATE ${CMAKE_SOURCE_DIR}/tests/analyzer)
target_link_libraries(import_cli_test PRIVATE SQLite::SQLite3 GTest::gtest_main tuneup_warnings)
target_compile_definitions(import_cli_test PRIVATE TUNEUP_BINARY="$<TARGET_FILE:tuneup>"
  TUNEUP_SHARED_TRACES="${TUNEUP_SHARED_TRACES}")
add_dependencies(import_cli_test tuneup)
tuneup_discover_tests(import_cli_test LABELS analyzer cli)
