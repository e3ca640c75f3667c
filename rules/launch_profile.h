#pragma once
// How a rank's steps use the GPU between kernels, shared by low-gpu-utilization and gpu-idle so that
// idle time is counted once: when the steps are launch-bound, the short host-caused gaps between
// kernels are low-gpu-utilization's; every other host-caused idle gap is gpu-idle's. (Idle while the
// host waits for data is dataloader-stall's, idle after a synchronisation sync-in-loop's.)

#include "advise/rule_context.h"

#include <string>
#include <vector>

namespace tuneup::rules {

// A host-caused gap shorter than this between kernels is launch and Python overhead per op; a longer
// one is the host doing something else (CPU work, logging, pre-processing).
inline constexpr int64_t kLaunchGapNs = 1'000'000;
// Launch-bound: small kernels, a GPU busy less than half of the step, and at least this share of
// the step idle in launch gaps.
inline constexpr int64_t kSmallKernelNs = 20'000;
inline constexpr double kMaxBusyShare = 0.5;
inline constexpr double kMinLaunchGapShare = 0.15;
inline constexpr double kMinKernelsPerStep = 10;

struct LaunchProfile {
    bool launchBound = false;
    std::string why; // the criterion that decided it, with the numbers
    size_t steps = 0;
    size_t kernels = 0; // on the step device, starting inside a step
    double kernelsPerStep = 0;
    int64_t medianKernelNs = 0;
    double smallKernelTimeShare = 0; // share of kernel time in kernels shorter than kSmallKernelNs
    int64_t medianLaunchCallNs = 0; // of the launch API calls of those kernels, 0 when unknown
    int64_t medianStepNs = 0;
    int64_t medianBusyNs = 0; // GPU busy (any work) in a step: median over steps
    // Per step (parallel to the steps): host-caused idle in gaps shorter than kLaunchGapNs, the rest
    // of the host-caused idle, and the number of launch gaps.
    std::vector<int64_t> launchGapNs, otherHostNs;
    std::vector<size_t> launchGapCount;
    int64_t medianLaunchGapNs = 0; // median over steps
    double launchGapShare = 0; // medianLaunchGapNs / medianStepNs
    double busyShare = 0; // medianBusyNs / medianStepNs
    // Host-caused idle per step that gpu-idle owns: all of it, less the launch gaps when launch-bound.
    int64_t unclaimedHostNs(size_t step) const { return otherHostNs[step] + (launchBound ? 0 : launchGapNs[step]); }
};

LaunchProfile launchProfile(const analysis::RuleContext& context);
int64_t medianOf(std::vector<int64_t> values); // 0 when empty

} // namespace tuneup::rules
