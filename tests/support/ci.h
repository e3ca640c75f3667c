#pragma once
// Whether the tests run in CI, where what a user's clone may lack (../shared/traces) must be present.

#include <cstdlib>
#include <string_view>

namespace tuneup::test {

// True under CI=true (GitHub Actions, GitLab and most CI services set it).
inline bool inCi() {
    const char* ci = std::getenv("CI");
    if (!ci) return false;
    const std::string_view v = ci;
    return v == "true" || v == "TRUE" || v == "True" || v == "1";
}

} // namespace tuneup::test
