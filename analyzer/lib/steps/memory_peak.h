#pragma once
// GPU memory per step, from the trace's memory events (TraceModel::memoryEvents): the peak each step
// reaches, and the steady state's peak beside the device's capacity. Traces with the allocator's totals
// (torch.profiler with profile_memory=True, in newer PyTorch) give levels. Traces with only the
// size of each allocation (older PyTorch; nsys, whose cudaMalloc records are the reserved memory) give
// each step's rise above where it began exactly, but the level only as a lower bound: what was allocated
// before the trace began (weights, optimizer state) is unknown, known only to be at least what the trace
// frees without having seen it allocated. The allocator's own peaks over windows (TraceModel::memoryPeaks, read by
// tuneup's Python bootstrap once per optimizer step) count in the step in which each was read: a level reached
// somewhere in that window, which events between readings would not show.

#include "model/trace_model.h"
#include "steps/breakdown.h"

#include <cstdint>
#include <vector>

namespace tuneup::analysis {

enum class MemorySource : uint8_t {
    None, // no memory events for this total on the device
    Totals, // the allocator's totals: levels are exact
    Deltas, // allocation sizes only: rises are exact, levels lower bounds
};

// One total's level on one device after each of its events, in time order.
struct MemoryCurve {
    MemorySource source = MemorySource::None;
    std::vector<int64_t> timeNs, bytes; // Deltas: the running sum of the sizes plus beforeTraceBytes
    std::vector<RowIndex> rows; // the memory event behind each point
    int64_t startBytes = 0; // the level before the first event
    int64_t beforeTraceBytes = 0; // Deltas: allocated before the trace began, at least (its unseen frees)
    // The level at `t`, before any event at t; startBytes before the first event.
    int64_t levelBefore(int64_t t) const;
};
// Totals when the device's events carry this total, else the running sum of the sizes that change it.
MemoryCurve memoryCurve(const TraceModel& model, int32_t device, MemoryTotal total);

struct StepMemory {
    int64_t peakBytes = -1; // the highest level in the step, the level it began with included; -1 unknown
    int64_t lowBytes = -1; // the lowest level the trace shows (-1 with the allocator's peaks alone)
    int64_t riseBytes = -1; // the peak above the level the step began with (-1 when that is unknown)
};

struct MemoryTotalPeak {
    MemorySource source = MemorySource::None;
    std::vector<StepMemory> perStep; // parallel to the steps
    // Over the steady state's steps (MemoryPeaks::firstSteadyStep on); -1 unknown. Deltas: levels are
    // lower bounds (beforeTraceBytes included), rises exact.
    int64_t peakBytes = -1; // the highest peak
    int64_t baseBytes = -1; // the lowest level: what stays allocated between steps (weights, optimizer state)
    int64_t riseBytes = -1; // the largest rise within one step
    int64_t beforeTraceBytes = 0; // Deltas: allocated before the trace began, at least
    size_t peakStep = 0; // the step with the peak (index into the steps)
    RowIndex peakRow = kNoRow; // the memory event that reached it, kNoRow when the step began at its peak or
                               // the peak is the allocator's (a window's: no event reached it)
    size_t windowPeaks = 0; // steps whose peak is the allocator's peak over a window (memoryPeaks)
    bool exact() const { return source == MemorySource::Totals && peakBytes >= 0; }
};

struct MemoryPeaks {
    // The GPU: the steps' device when it has memory events, else the GPU with the most; -1 when none has.
    int32_t device = -1;
    int64_t capacityBytes = 0; // DeviceInfo::globalMemoryBytes; 0 when the trace does not say
    // The first step of the steady state: the first step is warm-up when there are two or more (the caching
    // allocator grows, optimizer state is created, cuDNN tries algorithms with their workspaces).
    size_t firstSteadyStep = 0;
    size_t steps = 0;
    MemoryTotalPeak allocated, reserved;
    bool any() const { return allocated.source != MemorySource::None || reserved.source != MemorySource::None; }
};

// Over the steps of `steps` (its detection), on the GPU it chose when that has memory events. Without
// steps, the span of the device's memory events is one step.
MemoryPeaks memoryPeaks(const TraceModel& model, const StepAnalysis& steps);

std::string_view memorySourceName(MemorySource s); // "the allocator's totals"

} // namespace tuneup::analysis
