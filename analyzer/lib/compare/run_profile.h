#pragma once
// One side of `tuneup compare`: what it keeps of a job opened through the job core (openJob) — the
// steps it measures, where their time goes, its kernels, its findings, its settings and environment.
// Built once per side; the comparison (comparison.h) reads nothing else.

#include "advise/kernel_class.h"
#include "compare/environment.h"
#include "job/job.h"

#include <string>
#include <utility>
#include <vector>

namespace tuneup::analysis {

// One kernel name (normalised: demangled, without its parameter list) over the measured steps.
struct KernelStat {
    std::string name;
    KernelClass kernelClass = KernelClass::Other;
    int64_t calls = 0;
    int64_t totalNs = 0;
    std::vector<double> callUs; // every call's duration, when the events were read (not from summaries)
};

struct FindingRef {
    std::string ruleId;
    Severity severity = Severity::Info;
    std::string title;
    int64_t gainPerStepNs = 0; // 0 when the rule gave no estimate
};

struct RunProfile {
    std::vector<std::string> inputs; // as given
    std::vector<std::string> files; // the rank files (and summaries) the job read
    size_t ranks = 0;
    std::string stepSource; // how the steps were found ("ProfilerStep#N ranges")
    size_t stepsFound = 0; // in the trace (of the rank with the fewest)
    size_t warmupSteps = 0; // leading steps left out as warm-up (bench's detectWarmup)
    bool lastStepDropped = false; // steps found from optimizer ranges: the last one runs to the end
    // The job's time per measured step (ms): per step, its slowest rank (a synchronous job waits for it).
    std::vector<double> stepMs;
    // A side made of several runs (tuneup compare --against-history): each run's steps, `stepMs` their
    // concatenation. Empty for one run.
    std::vector<std::vector<double>> runs;
    // Where a measured step's time goes on its GPU, the mean over measured steps and ranks.
    StepBreakdown perStep;
    bool hasGpuWork = false; // any kernel, copy or memset in the measured steps
    std::vector<KernelStat> kernels; // by total time, largest first
    size_t kernelSteps = 0; // the steps (over ranks) the kernel totals cover: per step = total / kernelSteps
    bool kernelsWholeTrace = false; // from job summaries: the top kernels of the whole trace
    std::vector<FindingRef> findings; // raised, each rule once (its largest gain), by gain
    std::vector<std::pair<std::string, std::string>> settings; // the first rank's recorded settings
    Environment environment;
    std::vector<std::string> notes; // for people: what was left out and why
};

// Everything compare needs of one opened job. `inputs`: the paths given for it on the command line.
RunProfile profileJob(const Job& job, std::vector<std::string> inputs);

// A kernel's name as compare groups it: demangled, without "void " and the parameter list, template
// arguments kept (they tell apart kernels that do different work).
std::string normalisedKernelName(std::string_view name);

} // namespace tuneup::analysis
