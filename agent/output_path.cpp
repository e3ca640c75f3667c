#include "output_path.h"

#include <cstdlib>

namespace tuneup::agent {

namespace {
std::string stemOf(const std::string& base) {
    return base.size() > 3 && base.ends_with(".db") ? base.substr(0, base.size() - 3) : base;
}
} // namespace

std::optional<int> rankFromEnvironment() {
    for (const char* name : { "RANK", "OMPI_COMM_WORLD_RANK", "PMI_RANK" }) {
        const char* value = getenv(name);
        if (!value || !*value) continue;
        char* end = nullptr;
        const long rank = strtol(value, &end, 10);
        if (*end == '\0' && rank >= 0 && rank < (1 << 24)) return int(rank);
    }
    return std::nullopt;
}

OutputChoice chooseOutput(const Config& config, int pid, bool forkedChild) {
    const std::string stem = stemOf(config.outputBase);
    const std::optional<int> rank = rankFromEnvironment();
    const std::string rankPart = rank ? ".rank" + std::to_string(*rank) : "";
    const std::string pidPart = ".pid" + std::to_string(pid);
    if (forkedChild) return { stem + rankPart + pidPart + ".db", false, "forked-child" };
    if (rank) return { stem + rankPart + ".db", false, "rank" };
    if (config.mainPid == pid) return { stem + ".db", true, "main" };
    if (config.mainPid == 0) // not started by `tuneup record`: the first process to record takes the base name
        return { stem + ".db", false, "main" };
    return { stem + pidPart + ".db", false, "other" };
}

} // namespace tuneup::agent
