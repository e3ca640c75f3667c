#pragma once
// One run of `tuneup bench`: the command recorded with `tuneup record`'s own machinery (runRecord), told
// through the environment which fixes to apply and after how many steps to stop, its output kept in a
// log file, then opened through the job core (openJob) for its steps; plus what the program reported
// (the fixes applied or not and why, where it stopped, its losses).

#include "bench/bench_result.h"
#include "bench_fixes.h"
#include "job/job.h"

#include <map>
#include <memory>
#include <string>
#include <vector>

namespace tuneup::cli {

struct BenchRunSpec {
    std::vector<std::string> command;
    std::vector<FixSpec> fixes; // applied in the program (TUNEUP_FIX)
    std::string recording; // the run's main file: <dir>/<label>.db
    std::string log; // the program's stdout and stderr (and record's lines)
    std::string report; // the JSON lines the bootstrap or the agent write (TUNEUP_BENCH_REPORT)
    size_t stopAfter = 0; // TUNEUP_BENCH_STOP_AFTER; 0: run to the end
    std::string stepRange; // --step-range: the steps, and what the agent counts in LibTorch programs
    bool advise = false; // run the rules (the first baseline run)
};

struct BenchRunResult {
    bool started = false; // the command ran (it was found and executed)
    int exitCode = 0;
    double seconds = 0;
    bool stopped = false; // bench ended it after stopAfter steps
    bool python = false; // the Python bootstrap ran in it
    std::vector<double> stepMs; // the recording's steps, the cut last one left out
    std::string stepSource;
    std::vector<double> losses;
    std::vector<analysis::BenchFixOutcome> fixes; // as the program reported them
    std::map<std::string, std::string> program; // python, torch, cuda, device, device_name
    std::string problem; // why the run cannot be used; empty when it can
    std::unique_ptr<analysis::Job> job; // with spec.advise: the opened, advised job
    bool usable() const { return problem.empty(); }
};

// Runs, waits and reads the run back. Never throws for the program's failures: they are in `problem`
// (with the log's last lines).
BenchRunResult runBenchRun(const BenchRunSpec& spec);

// The last `lines` lines of a run's log, each on a new line prefixed with "    " (for a failure's
// message); record's lines about the file it wrote are left out.
std::string tailOf(const std::string& path, size_t lines);

} // namespace tuneup::cli
