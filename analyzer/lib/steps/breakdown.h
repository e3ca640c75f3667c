#pragma once
// Where each step's time goes on its GPU: compute, communication, copies, sets, and idle time split
// by what the host was doing (waiting for the DataLoader, waiting in a synchronisation, or neither:
// launch and Python overhead), except idle between the nodes of a CUDA graph replay, which the host
// had queued already: that is the graph's own. Overlapping work counts once, in that order of precedence.

#include "advise/kernel_class.h"
#include "model/trace_model.h"
#include "steps/host_state.h"
#include "steps/step_detector.h"

#include <string_view>
#include <vector>

namespace tuneup::analysis {

struct StepBreakdown {
    int64_t stepNs = 0;
    int64_t computeNs = 0; // kernels other than communication
    int64_t communicationNs = 0; // NCCL kernels not overlapped by compute
    int64_t memcpyNs = 0; // copies not overlapped by kernels
    int64_t memsetNs = 0; // sets not overlapped by the above
    int64_t idleNs = 0; // no GPU work at all
    int64_t idleDataNs = 0; // ... while the host waited for the DataLoader
    int64_t idleSyncNs = 0; // ... after the host synchronised with the GPU
    int64_t idleHostNs = 0; // ... otherwise: launch, Python and framework overhead
    // ... between the nodes of one CUDA graph replay (dependencies, scheduling, host nodes inside the
    // graph): the host had queued all of it, so none of the above applies. idleNs is the sum of the four.
    int64_t idleGraphNs = 0;
};

// Every field of StepBreakdown in order, with the name files give it (JSON reports add "_ns"): one list
// for everything that writes, reads, sums or averages breakdowns.
struct StepBreakdownField {
    std::string_view name;
    int64_t StepBreakdown::*field;
};
inline constexpr StepBreakdownField kStepBreakdownFields[] = { { "step", &StepBreakdown::stepNs },
    { "compute", &StepBreakdown::computeNs }, { "communication", &StepBreakdown::communicationNs },
    { "memcpy", &StepBreakdown::memcpyNs }, { "memset", &StepBreakdown::memsetNs }, { "idle", &StepBreakdown::idleNs },
    { "idle_data", &StepBreakdown::idleDataNs }, { "idle_sync", &StepBreakdown::idleSyncNs },
    { "idle_host", &StepBreakdown::idleHostNs }, { "idle_graph", &StepBreakdown::idleGraphNs } };

// A stretch of a step with no GPU work on the step's device, and what the host did meanwhile.
// The idle fields of StepBreakdown are the sums of these over the step's gaps. 32 bytes: a trace of
// millions of back-to-back kernels has millions of gaps.
struct IdleGap {
    TimeSpan span;
    int64_t dataNs = 0; // covered by DataLoader waits (0 inside a graph replay)
    int32_t step = 0; // index in StepAnalysis::perStep
    bool afterSync = false; // the host sat in a synchronisation as the GPU ran dry
    // Between the nodes of one CUDA graph replay: all of it is the graph's, whatever the host did meanwhile.
    bool inGraph = false;
    // The rest of the gap: after a synchronisation, or else launch, Python and framework overhead.
    int64_t syncNs() const { return afterSync && !inGraph ? span.durationNs() - dataNs : 0; }
    int64_t hostNs() const { return afterSync || inGraph ? 0 : span.durationNs() - dataNs; }
    int64_t graphNs() const { return inGraph ? span.durationNs() : 0; }
};
static_assert(sizeof(IdleGap) == 32, "one per gap of millions of kernels");

struct StepAnalysis {
    StepDetection detection;
    // The GPU the breakdown is for: most kernel time, else (no kernels) most copy and set time; -1 when
    // the trace has no GPU activity at all.
    int32_t device = -1;
    std::vector<StepBreakdown> perStep; // parallel to detection.steps
    StepBreakdown median; // the breakdown of the median step (its parts add up)
    std::vector<IdleGap> gaps; // every idle gap of every step, in time order
    // The main thread's sampled states; empty for traces without them (all but tuneup recordings).
    HostStateTimeline hostStates;
    // What the main thread did during a gap: the state covering most of it (Unknown without samples).
    HostState hostStateDuring(size_t gap) const {
        return gap < gaps.size() ? hostStates.dominant(gaps[gap].span) : HostState {};
    }
    int64_t medianStepNs() const { return median.stepNs; }
    // Whether the trace recorded any GPU work (kernels, copies, sets). Without it (a CPU-only run, or a
    // recording without GPU capture) nothing idled on a GPU: the breakdown's idle parts are the host's
    // time, waiting for data (idleDataNs) or not (idleHostNs), and front ends say "CPU only".
    bool gpuActivity() const { return device >= 0; }
};

// `kernelClasses`: classifyKernels(model), when the caller has it already (classifying is a string search per
// kernel name); else computed here.
StepAnalysis analyzeSteps(
    const TraceModel& model, std::string_view userRange = {}, const std::vector<KernelClass>* kernelClasses = nullptr);

// Why a gap's GPU idled, in a few words, from its largest part and what the main thread did: "main thread
// waiting (futex) for the DataLoader", "after a synchronisation with the GPU", "launch and Python overhead
// (main thread running)", "inside a CUDA graph replay". `machine` names the system calls (TraceInfo::machine).
std::string describeIdleGap(const IdleGap& gap, const HostState& mainThread, std::string_view machine);

// A range in which the training loop waits for its next batch: PyTorch's
// `enumerate(DataLoader)#<Iter>.__next__` (torch.profiler, tuneup's Python bootstrap), or a range named
// `DataLoader.next` (how C++ programs mark it, docs/agent.md).
bool isDataLoaderWait(std::string_view annotationName);

// Host intervals: DataLoader waits (isDataLoaderWait ranges) and synchronisations
// (cuda*Synchronize and synchronous cudaMemcpy calls, and sync records other than those of
// cudaStreamWaitEvent and cudaEventQuery, which block no host thread), each sorted and merged.
std::vector<TimeSpan> dataLoaderWaits(const TraceModel& model);
std::vector<TimeSpan> hostSynchronisations(const TraceModel& model);

// Sorts and merges overlapping spans.
std::vector<TimeSpan> mergeSpans(std::vector<TimeSpan> spans);
// Total length of merged spans clipped to [start, end).
int64_t coveredNs(const std::vector<TimeSpan>& merged, int64_t start, int64_t end);

} // namespace tuneup::analysis
