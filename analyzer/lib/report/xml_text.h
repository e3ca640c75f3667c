#pragma once
// Text for XML 1.0 and HTML (the JUnit reports of `tuneup advise` and `tuneup compare`, the HTML report and
// the rule docs rendered into it): the five special characters as entities, control characters XML cannot hold dropped,
// bytes that are not UTF-8 as U+FFFD (text from a trace may hold anything).

#include <string>
#include <string_view>

namespace tuneup::analysis {

std::string xmlText(std::string_view text);

} // namespace tuneup::analysis
