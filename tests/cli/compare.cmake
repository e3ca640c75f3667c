# tuneup compare as users run it: recordings of the dataloader_workers Python sample against its
# --fixed twin (improved, with the cause named; swapped: regressed; itself and an A/A pair: no
# regression), the real HTA trace_diff pair (incomparable: A100 vs V100), malformed inputs (exit 2
# with the reason), every format (JSON fields, JUnit validated against tests/fixtures/junit.xsd and
# parsed back, Markdown under 1 MiB), --fail-on-inconclusive; and tuneup advise --format junit.
if(TUNEUP_PYTHON)
  add_executable(compare_cli_test compare_cli_test.cpp)
  target_include_directories(compare_cli_test PRIVATE ${PROJECT_SOURCE_DIR}/tests/support)
  target_include_directories(compare_cli_test SYSTEM PRIVATE ${RAPIDJSON_INCLUDE_DIRS})
  target_link_libraries(compare_cli_test PRIVATE GTest::gtest_main tuneup_warnings)
  target_compile_definitions(compare_cli_test PRIVATE TUNEUP_BINARY="$<TARGET_FILE:tuneup>"
    TUNEUP_PYTHON="${TUNEUP_PYTHON}" TUNEUP_SOURCE_DIR="${PROJECT_SOURCE_DIR}"
    TUNEUP_SHARED_TRACES="${TUNEUP_SHARED_TRACES}")
  add_dependencies(compare_cli_test tuneup tuneup-agent)
  # The recordings, made once and alone (record_compare_runs.sh says why); the tests read them.
  set(runs ${CMAKE_CURRENT_BINARY_DIR}/compare_runs)
  add_test(NAME compare_cli_recordings COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/record_compare_runs.sh
    $<TARGET_FILE:tuneup> ${TUNEUP_PYTHON} ${PROJECT_SOURCE_DIR} ${runs})
  set_tests_properties(compare_cli_recordings PROPERTIES LABELS "cli;compare" TIMEOUT 300 RUN_SERIAL TRUE
    FIXTURES_SETUP compare_runs)
  tuneup_discover_tests(compare_cli_test LABELS cli compare PROPERTIES TIMEOUT 300
    FIXTURES_REQUIRED compare_runs ENVIRONMENT TUNEUP_COMPARE_RUNS=${runs})
endif()
