#pragma once
// One `tuneup bench` of a command (docs/bench.md#method): the first baseline run recorded and advised,
// the candidates chosen (the fixes asked for, the candidate command, or in automatic mode the fixes that
// answer the baseline's findings), every side run in interleaved rounds (baseline first, then the
// candidates, then the same backwards: ABBA...) within --max-time, each run stopped after its warm-up
// and measured steps, and each candidate measured against the baseline's runs.

#include "bench/bench_result.h"
#include "bench_fixes.h"

#include <string>
#include <vector>

namespace tuneup::cli {

struct BenchSettings {
    std::vector<std::string> command; // the baseline
    std::vector<std::vector<FixSpec>> fixCandidates; // one candidate per --fix (its fixes applied together)
    std::vector<std::string> candidateCommand; // --candidate, split into words; empty: none
    size_t steps = 20, warmup = 5, runs = 4;
    double maxTimeSeconds = 600;
    std::string stepRange;
    std::string runsDir; // where the runs' recordings, logs and reports go
    std::string toolVersion;
    bool progressOnTerminal = false; // rewrite one progress line instead of printing a line per run
};

struct BenchOutcome {
    analysis::BenchResult result;
    bool runFailed = false; // some run failed (exit code 1)
    std::string fatal; // the baseline could not be measured: the message, and nothing else to report
};

BenchOutcome runBenchSession(const BenchSettings& settings);

} // namespace tuneup::cli
