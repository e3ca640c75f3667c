#pragma once
// The Python with torch that a test records: the build's (TUNEUP_PYTHON, docs/torch-versions.md), or the one
// TUNEUP_TEST_PYTHON names in the environment, so that ctest runs the same tests on another torch (the
// compatibility tests, label torch1.13).

#include <cstdio>
#include <cstdlib>
#include <string>

namespace tuneup::test {

inline std::string testPython() {
    const char* chosen = std::getenv("TUNEUP_TEST_PYTHON");
    return chosen && *chosen ? chosen : TUNEUP_PYTHON;
}

// That Python's torch as major * 100 + minor (2.13: 213), asked of torch itself; -1 when it cannot say.
inline int testTorchVersion() {
    const std::string command = testPython()
        + " -c 'import torch; v = torch.__version__.split(\".\"); "
          "print(int(v[0]) * 100 + int(v[1]))' 2>/dev/null";
    FILE* pipe = popen(command.c_str(), "r");
    if (!pipe) return -1;
    int version = -1;
    if (std::fscanf(pipe, "%d", &version) != 1) version = -1;
    pclose(pipe);
    return version;
}

} // namespace tuneup::test
