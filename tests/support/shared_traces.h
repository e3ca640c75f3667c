#pragma once
// The real traces in ../shared/traces (TUNEUP_SHARED_TRACES). A user's clone has no such folder: tests
// that read it skip with a message. In CI (CI=true) the folder must be there, so a missing one is a
// failure rather than a skip that would let a broken checkout pass.

#include "ci.h"

#include <filesystem>
#include <gtest/gtest.h>
#include <string>

namespace tuneup::test {

inline std::string missingSharedTraces(const std::filesystem::path& root) {
    return "the real traces are not at " + root.string()
        + " (../shared/traces beside the checkout; configure with -DTUNEUP_SHARED_TRACES=<path> to read them "
          "elsewhere)";
}

} // namespace tuneup::test

// In a test body: skips (fails under CI=true) when the folder `root` is absent.
#define TUNEUP_REQUIRE_SHARED_TRACES(root)                                                                             \
    do {                                                                                                               \
        if (!std::filesystem::is_directory(root)) {                                                                    \
            if (::tuneup::test::inCi())                                                                                \
                FAIL() << ::tuneup::test::missingSharedTraces(root) << "; CI=true requires them";                      \
            GTEST_SKIP() << ::tuneup::test::missingSharedTraces(root) << ": the real-trace tests run in CI";           \
        }                                                                                                              \
    } while (0)
