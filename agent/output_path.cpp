#include "output_path.h"

#include "process_role.h"
#include "run_files.h"

#include <cstdlib>

namespace tuneup::agent {

std::optional<int> rankFromEnvironment() {
    for (const char* name : { "RANK", "OMPI_COMM_WORLD_RANK", "PMI_RANK", "SLURM_PROCID" }) {
        const char* value = getenv(name);
        if (!value || !*value) continue;
        char* end = nullptr;
        const long rank = strtol(value, &end, 10);
        if (*end == '\0' && rank >= 0 && rank < (1 << 24)) return int(rank);
    }
    return std::nullopt;
}

OutputChoice chooseOutput(const Config& config, int pid, bool forkedChild) {
    RunFileName name { runStem(config.outputBase), rankFromEnvironment(), std::nullopt };
    auto choice = [&](std::optional<int> filePid, bool eager, ProcessRole role) {
        name.pid = filePid;
        return OutputChoice { name.path(), eager, std::string(processRoleName(role)) };
    };
    if (forkedChild) return choice(pid, false, ProcessRole::ForkedChild);
    if (name.rank) return choice(std::nullopt, false, ProcessRole::Rank);
    if (config.mainPid == pid) return choice(std::nullopt, true, ProcessRole::Main);
    // Not started by `tuneup record`: the first process to record takes the base name.
    if (config.mainPid == 0) return choice(std::nullopt, false, ProcessRole::Main);
    if (config.launcherPid == pid) return choice(pid, false, ProcessRole::Launcher);
    return choice(pid, false, ProcessRole::Other);
}

} // namespace tuneup::agent
