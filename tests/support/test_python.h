#pragma once
// The Python with torch that a test records: the build's (TUNEUP_PYTHON, docs/torch-versions.md), or the one
// TUNEUP_TEST_PYTHON names in the environment, so that ctest runs the same tests on another torch (the
// compatibility tests, label torch1.13).

#include <cstdlib>
#include <string>

namespace tuneup::test {

inline std::string testPython() {
    const char* chosen = std::getenv("TUNEUP_TEST_PYTHON");
    return chosen && *chosen ? chosen : TUNEUP_PYTHON;
}

} // namespace tuneup::test
