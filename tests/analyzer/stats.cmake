# The statistics bench and compare share (analyzer/lib/stats): known distributions, fixed seeds.
add_executable(stats_test stats_descriptive_test.cpp stats_mann_whitney_test.cpp stats_verdict_test.cpp)
target_link_libraries(stats_test PRIVATE tuneup-analysis GTest::gtest_main tuneup_warnings tuneup_sanitizer)
tuneup_discover_tests(stats_test LABELS analyzer stats)
