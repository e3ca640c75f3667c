# The Nsight Systems SQLite importer, on the nsys exports in ../shared/traces (skipped with a message when
# that folder is absent) and on small exports the test builds.
add_executable(nsys_sqlite_test ${CMAKE_CURRENT_LIST_DIR}/nsys_sqlite_test.cpp)
target_link_libraries(nsys_sqlite_test PRIVATE tuneup-analysis GTest::gtest_main SQLite::SQLite3 tuneup_warnings
  tuneup_sanitizer)
target_compile_definitions(nsys_sqlite_test PRIVATE TUNEUP_SHARED_TRACES="${TUNEUP_SHARED_TRACES}")
gtest_discover_tests(nsys_sqlite_test PROPERTIES LABELS analyzer)

# `tuneup import`'s round trip: any trace -> tuneup file -> read back, table by table.
add_executable(import_roundtrip_test ${CMAKE_CURRENT_LIST_DIR}/import_roundtrip_test.cpp)
target_link_libraries(import_roundtrip_test PRIVATE tuneup-analysis GTest::gtest_main tuneup_warnings tuneup_sanitizer)
target_compile_definitions(import_roundtrip_test PRIVATE TUNEUP_SHARED_TRACES="${TUNEUP_SHARED_TRACES}")
gtest_discover_tests(import_roundtrip_test PROPERTIES LABELS analyzer)
