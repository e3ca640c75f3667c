#pragma once
// Which file a process writes, from TUNEUP_OUTPUT (the base, e.g. /runs/run.db), the rank in the
// environment and how the process came to be:
//   run.db               the main process (TUNEUP_MAIN_PID, set by `tuneup record`)
//   run.rank3.db         rank 3 (RANK, OMPI_COMM_WORLD_RANK or PMI_RANK) under torchrun, mpirun, …
//   run.rank3.pid12.db   another process of rank 3 (a DataLoader worker, a helper it started)
//   run.pid12.db         any other process that records something (launchers, tools)
// Only the main process creates its file at start; the others do on their first event.

#include "config.h"

#include <optional>
#include <string>

namespace tuneup::agent {

struct OutputChoice {
    std::string path;
    bool eager = false; // create at start, even before any event
    std::string role; // main, rank, forked-child, other
};

std::optional<int> rankFromEnvironment();
OutputChoice chooseOutput(const Config& config, int pid, bool forkedChild);

} // namespace tuneup::agent
