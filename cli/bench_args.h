#pragma once
// The words of `tuneup bench`'s arguments that are not plain options: --candidate's command line and
// --max-time's duration.

#include <optional>
#include <string>
#include <vector>

namespace tuneup::cli {

// --candidate 'CMD ARGS': words split as a shell would split them (quotes, backslashes), without
// variables, globs or redirections. Empty and `error` set when the quotes do not close.
std::vector<std::string> splitCommandLine(const std::string& text, std::string& error);

// --max-time: "90s", "10m", "1h30m", "2.5m", or a number of seconds; nullopt when not a positive duration.
std::optional<double> parseDuration(const std::string& text);

} // namespace tuneup::cli
