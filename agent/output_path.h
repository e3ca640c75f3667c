#pragma once
// Which file a process writes (common/run_files.h names them), from TUNEUP_OUTPUT (the base, e.g.
// /runs/run.db), the rank in the environment (RANK, OMPI_COMM_WORLD_RANK, PMI_RANK or SLURM_PROCID) and
// how the process came to be (TUNEUP_MAIN_PID, set by `tuneup record`). Only the main process creates its
// file at start; the others do on their first event.

#include "config.h"

#include <optional>
#include <string>

namespace tuneup::agent {

struct OutputChoice {
    std::string path;
    bool eager = false; // create at start, even before any event
    std::string role; // processRoleName(): main, rank, launcher, forked-child, other
};

std::optional<int> rankFromEnvironment();
OutputChoice chooseOutput(const Config& config, int pid, bool forkedChild);

} // namespace tuneup::agent
