# tuneup bench on the Python CPU samples and a LibTorch sample: each finding's fix found, applied in the
# process and measured; A/A; advise --bench (label "samples" and "bench": tens of seconds each).
if(TUNEUP_PYTHON)
  add_executable(bench_samples_test bench_samples_test.cpp)
  target_include_directories(bench_samples_test PRIVATE ${PROJECT_SOURCE_DIR}/tests/support)
  target_include_directories(bench_samples_test SYSTEM PRIVATE ${RAPIDJSON_INCLUDE_DIRS})
  target_link_libraries(bench_samples_test PRIVATE GTest::gtest_main tuneup_warnings)
  target_compile_definitions(bench_samples_test PRIVATE TUNEUP_BINARY="$<TARGET_FILE:tuneup>"
    TUNEUP_PYTHON="${TUNEUP_PYTHON}" TUNEUP_SAMPLES_DIR="${PROJECT_SOURCE_DIR}/samples"
    TUNEUP_SAMPLES_BIN="${CMAKE_BINARY_DIR}/samples")
  add_dependencies(bench_samples_test tuneup tuneup-agent anomaly)
  # Alone: they time A/B runs interleaved, and a test beside them (two ranks of torch, another bench) takes the
  # cores the two sides share unevenly (ctest -j2 started both bench tests together, first, as the longest).
  tuneup_discover_tests(bench_samples_test LABELS samples bench PROPERTIES TIMEOUT 300 RUN_SERIAL TRUE
    DISCOVERY_TIMEOUT 60)
endif()
