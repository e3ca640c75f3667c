# tuneup bench: its arguments and fix catalogue (unit), and the command on a small program of sleeping
# "step" ranges (no torch: quick): usage errors, a failing baseline, a crashing candidate or one that
# changes the number of steps, an A/A bench, the JSON, --micro without a GPU.
add_executable(bench_args_test bench_args_test.cpp ${CMAKE_SOURCE_DIR}/cli/bench_args.cpp
  ${CMAKE_SOURCE_DIR}/cli/bench_fixes.cpp)
target_include_directories(bench_args_test PRIVATE ${CMAKE_SOURCE_DIR}/cli)
target_link_libraries(bench_args_test PRIVATE tuneup-analysis GTest::gtest_main tuneup_warnings tuneup_sanitizer)
tuneup_discover_tests(bench_args_test LABELS cli bench)

if(TUNEUP_PYTHON)
  add_executable(bench_cli_test bench_cli_test.cpp)
  target_include_directories(bench_cli_test PRIVATE ${PROJECT_SOURCE_DIR}/tests/support)
  target_include_directories(bench_cli_test SYSTEM PRIVATE ${RAPIDJSON_INCLUDE_DIRS})
  target_link_libraries(bench_cli_test PRIVATE GTest::gtest_main tuneup_warnings)
  target_compile_definitions(bench_cli_test PRIVATE TUNEUP_BINARY="$<TARGET_FILE:tuneup>"
    TUNEUP_PYTHON="${TUNEUP_PYTHON}" TUNEUP_BENCH_STEPS="${CMAKE_CURRENT_SOURCE_DIR}/bench_steps.py"
    TUNEUP_SOURCE_DIR="${PROJECT_SOURCE_DIR}")
  add_dependencies(bench_cli_test tuneup tuneup-agent)
  tuneup_discover_tests(bench_cli_test LABELS cli bench PROPERTIES TIMEOUT 300)
endif()
