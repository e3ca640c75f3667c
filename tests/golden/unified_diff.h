#pragma once
// A unified diff of two texts, line by line, as `diff -u` prints it: what a failed golden-file test shows.

#include <cstddef>
#include <string>
#include <string_view>

namespace tuneup::golden {

// "" when the texts are equal; else "--- beforeName", "+++ afterName" and hunks with `context` lines
// around each change, cut after `maxLines` lines with a note of how many were left out.
std::string unifiedDiff(std::string_view before, std::string_view after, std::string_view beforeName,
    std::string_view afterName, size_t maxLines = 80, size_t context = 3);

} // namespace tuneup::golden
