#include "subcommand.h"

namespace tuneup::cli {

std::function<int()> addRecordCommand(CLI::App& app, const std::vector<std::string>& command);
std::function<int()> addInfoCommand(CLI::App& app, const std::vector<std::string>& command);
std::function<int()> addAdviseCommand(CLI::App& app, const std::vector<std::string>& command);
std::function<int()> addRulesCommand(CLI::App& app, const std::vector<std::string>& command);
std::function<int()> addExportCommand(CLI::App& app, const std::vector<std::string>& command);
std::function<int()> addImportCommand(CLI::App& app, const std::vector<std::string>& command);
std::function<int()> addBenchCommand(CLI::App& app, const std::vector<std::string>& command);
std::function<int()> addCompareCommand(CLI::App& app, const std::vector<std::string>& command);
std::function<int()> addHistoryCommand(CLI::App& app, const std::vector<std::string>& command);

// In the order `tuneup --help` lists them.
const std::vector<Subcommand>& subcommands() {
    static const std::vector<Subcommand> kSubcommands {
        { "record", addRecordCommand, true },
        { "info", addInfoCommand },
        { "advise", addAdviseCommand },
        { "bench", addBenchCommand, true },
        { "compare", addCompareCommand },
        { "history", addHistoryCommand },
        { "rules", addRulesCommand },
        { "export", addExportCommand },
        { "import", addImportCommand },
    };
    return kSubcommands;
}

const char* const kExitCodes = "Exit codes:\n"
                               "  0     success\n"
                               "  1     a bad input file (missing, not a trace, damaged, too new)\n"
                               "  2     a usage or set-up error (bad option, existing output, no agent): nothing ran;\n"
                               "        or the output could not be written (a full disk, a closed pipe)\n"
                               "  3     tuneup advise --fail-on: a finding at or above that severity\n"
                               "  else  tuneup record returns the recorded command's exit code\n"
                               "        (127: command not found; 128+N: it was ended by signal N)";

} // namespace tuneup::cli
