#pragma once
// Which side of a DataLoader with worker processes makes the training loop wait (dataloader-stall.md):
// workers that cannot keep up — the main thread sits blocked waiting for them while they make batches —
// or the main process itself, busy receiving batches that are ready (unpickling many small objects,
// rebuilding tensors sent through shared memory, collating). The advice differs: more workers help
// only the first.

#include "steps/host_state.h"
#include "steps/loader_workers.h"

#include <cstdint>
#include <optional>
#include <string>

namespace tuneup::rules {

// The main thread running at least this share of its sampled time during the waits: it is busy
// receiving. At most kMainWaitingAtMost running (so mostly blocked): it waits for something.
inline constexpr double kMainRunningAtLeast = 0.60;
inline constexpr double kMainRunningAtMost = 0.40;
// The workers making a batch at least this share of their time during the waits: they cannot keep up.
// Under kWorkersIdleBelow: the batches were made, and the wait is on the main process's side.
inline constexpr double kWorkersBusyAtLeast = 0.60;
inline constexpr double kWorkersIdleBelow = 0.40;
// Less sampled waiting than this (ten samples at the agent's 10 ms) does not tell the main thread's state.
inline constexpr int64_t kMinSampledWaitNs = 100'000'000;

enum class LoaderSide {
    Unknown, // nothing recorded tells (no samples, no workers' recordings)
    Workers, // the workers cannot keep up
    Receiving, // the main process is busy receiving ready batches
    Unclear, // what was recorded points both ways
};

struct LoaderDiagnosis {
    LoaderSide side = LoaderSide::Unknown;
    std::optional<double> mainRunning; // share of the main thread's sampled wait time it ran, when sampled enough
    std::optional<double> workersFetching; // share of the workers' time they made a batch, when recorded
    size_t workers = 0; // workers' recordings alive during the waits
    std::string why; // a sentence with the numbers: what was measured and what it means
};

// `main`: the main thread's sampled states over the waits; `workers`: the workers over the same waits;
// `processes`: the workers are processes (Python's DataLoader), not threads (LibTorch's): what receiving costs.
LoaderDiagnosis diagnoseLoader(
    const analysis::HostTime& main, const analysis::LoaderWorkersDuring& workers, bool processes);

// "the main process, receiving batches"; "the workers"; "unclear"; "not recorded".
std::string_view loaderSideName(LoaderSide side);
// The side with the numbers that decided it: "the workers (main thread running 5% of its sampled wait
// time; 2 workers making a batch 98% of theirs)".
std::string describeDiagnosis(const LoaderDiagnosis& diagnosis);

} // namespace tuneup::rules
