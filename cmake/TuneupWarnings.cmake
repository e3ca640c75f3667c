# Warnings for our own code only: third-party headers (LibTorch, Qt, CUDA) come in as SYSTEM includes.
# Warnings are errors in the presets and CI (TUNEUP_WERROR=ON), never by default: a packager's build
# with another compiler or build type must not fail on a new warning (GCC's -O3 flow warnings give
# false positives).
option(TUNEUP_WERROR "Treat warnings as errors (on in the presets and CI)" OFF)
add_library(tuneup_warnings INTERFACE)
target_compile_options(tuneup_warnings INTERFACE
  -Wall -Wextra -Wpedantic -Wshadow -Wnon-virtual-dtor -Wcast-align -Wunused -Woverloaded-virtual
  -Wnull-dereference -Wimplicit-fallthrough)
if(TUNEUP_WERROR)
  target_compile_options(tuneup_warnings INTERFACE -Werror)
  # GCC 12 at -O3 reports `"x" + std::string(...)` as an overlapping memcpy (GCC bug 105651): a warning,
  # never an error, there.
  if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU" AND CMAKE_CXX_COMPILER_VERSION VERSION_LESS 13)
    target_compile_options(tuneup_warnings INTERFACE -Wno-error=restrict)
  endif()
endif()

# Sanitizers (presets asan, tsan) apply to code that is not injected: the analyzer, the CLI and the
# tests, including a testable copy of the agent's core. The injected module stays uninstrumented
# unless TUNEUP_SANITIZE_AGENT is on, since an instrumented preload breaks uninstrumented hosts.
set(TUNEUP_SANITIZER "" CACHE STRING "Sanitizers for non-injected code, e.g. address,undefined or thread")
add_library(tuneup_sanitizer INTERFACE)
if(TUNEUP_SANITIZER)
  target_compile_options(tuneup_sanitizer INTERFACE -fsanitize=${TUNEUP_SANITIZER} -fno-omit-frame-pointer -fno-sanitize-recover=all)
  target_link_options(tuneup_sanitizer INTERFACE -fsanitize=${TUNEUP_SANITIZER})
endif()
