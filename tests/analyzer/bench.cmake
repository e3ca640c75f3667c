# tuneup bench's analysis (analyzer/lib/bench): warm-up, measurement and verdicts on known step times,
# the bench JSON written and read back, bad bench files.
add_executable(bench_analysis_test bench_measure_test.cpp bench_json_test.cpp)
target_link_libraries(bench_analysis_test PRIVATE tuneup-analysis GTest::gtest_main tuneup_warnings tuneup_sanitizer)
tuneup_discover_tests(bench_analysis_test LABELS analyzer bench)
