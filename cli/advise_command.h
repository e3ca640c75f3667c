#pragma once
// `tuneup advise`: import traces (one per rank), run the rules, report; `tuneup rules`: list them.

#include <string>
#include <vector>

namespace tuneup::cli {

struct AdviseOptions {
    std::vector<std::string> files;
    std::string format = "text"; // text, json, markdown, html
    std::string output; // -o: a file instead of stdout
    std::string failOn; // info, warning, error: exit 3 when a finding is that severe or worse
    std::string stepRange; // --step-range NAME
    std::string userRules; // --rules: a .sql file or a folder of them
};

// Exit codes: 0 done; 1 a bad input file; 2 a usage error; 3 a finding at or above --fail-on.
int runAdvise(const AdviseOptions& options);
// Lists the built-in rules (and the user rules in `userRules`, if given): id, what each detects,
// what it needs, its documentation. Exit 1 when a user rule cannot be loaded.
int runRules(const std::string& userRules);

} // namespace tuneup::cli
