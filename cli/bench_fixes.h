#pragma once
// The fixes `tuneup bench` applies from outside the program (docs/bench.md#fixes): their names, what
// exactly each changes, where it can be applied (Python programs through the bootstrap, LibTorch
// programs through the agent's at::Context switches), and which finding each answers in automatic mode.

#include "advise/finding.h"
#include "advise/rank_summary.h"

#include <string>
#include <string_view>
#include <vector>

namespace tuneup::cli {

struct BenchFix {
    std::string_view name; // "dataloader-workers"
    std::string_view value; // what =VALUE is ("N", a number of workers), or empty: the fix takes none
    bool python = false; // applied in Python programs (python/tuneup_bench.py)
    bool libtorch = false; // applied in LibTorch C++ programs (agent/bench_control.cpp)
    bool precision = false; // changes the arithmetic: the losses are compared (loss_delta)
    std::string_view changes; // exactly what it changes, one sentence
    std::string_view unused; // why it did not apply when the program never reached it
};

const std::vector<BenchFix>& benchFixes();
const BenchFix* findBenchFix(std::string_view name);

// One fix as given: "dataloader-workers=4".
struct FixSpec {
    std::string name, value;
    std::string text() const { return value.empty() ? name : name + "=" + value; }
};

// "NAME[=VALUE][,NAME[=VALUE]...]": fixes applied together as one candidate. Empty and an error message
// (what is wrong and what is known) when the list is bad.
std::vector<FixSpec> parseFixList(const std::string& text, std::string& error);

// Automatic mode: the fixes that answer a finding from outside the program, or why none can.
struct FindingFix {
    std::vector<FixSpec> fixes;
    std::string whyNot;
};
// `python`: the program runs the Python bootstrap (else LibTorch C++); `cpus`: this machine's cores;
// `computeMajor`: the GPU's compute capability (0 unknown): bfloat16 from 8 (Ampere) on.
FindingFix fixForFinding(
    const analysis::Finding& finding, const analysis::RankSummary& rank, bool python, unsigned cpus, int computeMajor);

// The finding a candidate's fixes answer among the raised ones, and its estimated speed-up
// (1 / (1 - step share)); empty when none.
const analysis::Finding* findingForFixes(const std::vector<FixSpec>& fixes,
    const std::vector<const analysis::Finding*>& findings, const analysis::RankSummary& rank, bool python,
    unsigned cpus, int computeMajor);

} // namespace tuneup::cli
