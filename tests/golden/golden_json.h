#pragma once
// The golden form of a JSON report: what changes between machines and builds taken out, printed so
// that two reports compare line by line and a diff of them reads well.

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace tuneup::golden {

struct Normalisation {
    // Object members dropped wherever they are, as "parent.member" ("tool.version").
    std::vector<std::string> dropMembers;
    // Text replaced in every string (absolute paths of this machine by a placeholder), in order.
    std::vector<std::pair<std::string, std::string>> replacements;
    // Floating-point numbers are printed with this many significant digits: the last bits of a ratio
    // are not worth a failure.
    int significantDigits = 6;
};

// Parses `json`, normalises it and prints it: two-space indentation, and arrays and objects that fit in
// `width` columns on one line (short elements of a long array packed several to a line). Throws
// std::runtime_error when `json` is not valid JSON.
std::string goldenForm(std::string_view json, const Normalisation& normalisation, size_t width = 110);

} // namespace tuneup::golden
