#pragma once
// How the files of one recording are named, for the agent that writes them and for everything that
// reads them (tuneup record's summary, the job core, the GUI):
//   run.db               the main process
//   run.rank3.db         rank 3 (RANK, OMPI_COMM_WORLD_RANK or PMI_RANK) under torchrun, mpirun, srun, ...
//   run.rank3.pid12.db   another process of rank 3 (a DataLoader worker, a helper it started)
//   run.pid12.db         any other process that recorded something (launchers, tools)
// The stem ("run", "/runs/run") is the output path without its ".db".

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tuneup {

struct RunFileName {
    std::string stem; // "/runs/run"
    std::optional<int> rank;
    std::optional<int> pid;

    std::string path() const; // stem[.rankR][.pidP].db
    bool isMain() const { return !rank && !pid; }
};

// "/runs/run.db" -> "/runs/run"; a name without ".db" is its own stem.
std::string runStem(std::string_view output);

// The parts of a recording's file name: "/runs/run.rank3.pid12.db" -> {"/runs/run", 3, 12}. Any name
// ending in ".db" parses (a plain "x.db" is the main file of run "x"); nothing for other names.
std::optional<RunFileName> parseRunFileName(std::string_view path);

// The files of run `stem` in its folder (no -wal, -shm or -journal sidecars, no symbolic links): the
// main file, the ranks (each followed by its other processes), then the run's other processes.
std::vector<RunFileName> listRunFiles(const std::string& stem);

// The -wal, -shm and -journal files of run `stem`'s files (even where the file itself is gone), sorted.
std::vector<std::string> listRunSidecars(const std::string& stem);

} // namespace tuneup
