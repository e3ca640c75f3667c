#pragma once
// How a rank's steps use the GPU between kernels, shared by low-gpu-utilization and gpu-idle so that
// idle time is counted once: when the steps are launch-bound, the short host-caused gaps between
// kernels are low-gpu-utilization's; every other host-caused idle gap is gpu-idle's. (Idle while the
// host waits for data is dataloader-stall's, idle after a synchronisation sync-in-loop's.)
//
// A CUDA graph replay is one launch: its kernels cost the CPU one call (cudaGraphLaunch) between them,
// so they are not small kernels launched one by one, and the GPU's gaps between a replay's own kernels
// are not the host's doing (the breakdown's idle inside graph replays, IdleGap::inGraph: neither rule
// counts them).

#include "advise/rule_context.h"

#include <string>
#include <vector>

namespace tuneup::rules {

// A host-caused gap shorter than this between kernels is launch and Python overhead per op; a longer
// one is the host doing something else (CPU work, logging, pre-processing).
inline constexpr int64_t kLaunchGapNs = 1'000'000;
// Launch-bound: small launches, a GPU busy less than half of the step, and at least this share of
// the step idle in launch gaps.
inline constexpr int64_t kSmallKernelNs = 20'000;
inline constexpr double kMaxBusyShare = 0.5;
inline constexpr double kMinLaunchGapShare = 0.15;
inline constexpr double kMinLaunchesPerStep = 10;

struct LaunchProfile {
    bool launchBound = false;
    std::string why; // the criterion that decided it, with the numbers
    size_t steps = 0;
    // Launches on the step device whose GPU work starts inside a step: kernels launched one by one, and
    // graph replays (each one launch, however many kernels it runs).
    size_t kernels = 0; // launched one by one
    size_t graphReplays = 0;
    size_t graphKernels = 0; // run by those replays
    double launchesPerStep = 0; // (kernels + graphReplays) / steps
    int64_t medianLaunchNs = 0; // GPU time of a launch: a kernel, or a replay's first start to last end
    double smallLaunchTimeShare = 0; // share of that time in launches shorter than kSmallKernelNs
    int64_t medianLaunchCallNs = 0; // CPU time of the kernels' launch calls (not graph launches), 0 unknown
    int64_t medianStepNs = 0;
    int64_t medianBusyNs = 0; // GPU busy (any work) in a step: median over steps
    // Per step (parallel to the steps): host-caused idle in gaps shorter than kLaunchGapNs, the rest
    // of the host-caused idle, and the number of launch gaps; gaps inside a graph replay in neither (their
    // idle per step is graphGapNs).
    std::vector<int64_t> launchGapNs, otherHostNs, graphGapNs;
    std::vector<size_t> launchGapCount;
    int64_t medianLaunchGapNs = 0; // median over steps
    double launchGapShare = 0; // medianLaunchGapNs / medianStepNs
    double busyShare = 0; // medianBusyNs / medianStepNs
    bool usesGraphs() const { return graphReplays > 0; }
    // Host-caused idle per step that gpu-idle owns: all of it, less the launch gaps when launch-bound.
    int64_t unclaimedHostNs(size_t step) const { return otherHostNs[step] + (launchBound ? 0 : launchGapNs[step]); }
    // "26 kernels", or with graphs "3 launches (1 CUDA graph replay of 40 kernels, 2 kernels one by one)".
    std::string launchesText(int decimals) const;
};

LaunchProfile launchProfile(const analysis::RuleContext& context);
int64_t medianOf(std::vector<int64_t> values); // 0 when empty

} // namespace tuneup::rules
