#pragma once
// What a recorded process was to its run. The agent stores the role's name in meta('role') and
// processes.role; the job core decides from it which files are ranks and which are helpers.

#include <optional>
#include <string_view>

namespace tuneup {

enum class ProcessRole {
    Main, // the command `tuneup record` started (run.db)
    Rank, // one rank of a distributed job: RANK (or the MPI equivalents) was set (run.rank3.db)
    DataLoaderWorker, // a PyTorch DataLoader worker (the Python bootstrap says so)
    Launcher, // torchrun, mpirun, python -m torch.distributed.run: starts the ranks, trains nothing
    ForkedChild, // another process forked from a recorded one
    Other, // any other process of the run (a tool the command ran)
};

// The name stored in recordings: "main", "rank", "dataloader-worker", "launcher", "forked-child", "other".
std::string_view processRoleName(ProcessRole role);
// The role a stored name stands for; nothing for a name no version of tuneup wrote.
std::optional<ProcessRole> parseProcessRole(std::string_view name);
// For people: "main process", "rank", "DataLoader worker", "launcher", "forked child", "other process".
std::string_view processRoleLabel(ProcessRole role);

} // namespace tuneup
