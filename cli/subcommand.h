#pragma once
// A subcommand of `tuneup`: it adds itself to the parser (its options, help and examples) and says
// what to run when it is the one chosen. subcommands.cpp lists them, one line each.

#include "cli11.h"

#include <cstddef>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace tuneup::cli {

// Exit codes shared by the subcommands (record returns its command's own otherwise).
inline constexpr int kBadInput = 1;
inline constexpr int kUsageError = 2;

// From this many ranks on, advise and compare keep only each rank's summary: a job of many ranks fits in
// memory.
inline constexpr size_t kStreamFromRanks = 64;

struct Subcommand {
    // Adds the subcommand to `app`; the returned function runs it after parsing. `command` holds what
    // followed "--" on the command line (record's CMD ARGS...).
    using Add = std::function<int()> (*)(CLI::App& app, const std::vector<std::string>& command);
    std::string_view name;
    Add add;
    bool takesCommand = false; // "tuneup NAME [OPTIONS] -- CMD ARGS...": everything after -- is CMD
};

const std::vector<Subcommand>& subcommands();

// The exit codes, for every --help.
extern const char* const kExitCodes;

} // namespace tuneup::cli
