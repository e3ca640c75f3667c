#pragma once
// What a DataLoader's worker processes did, from their own recordings (run.pid<N>.db beside the
// main process's file, docs/agent.md): when each was making a batch (the Python bootstrap's
// `tuneup.dataloader.fetch` ranges: the dataset's items and the collate) and what its thread did
// (sampled). While the training loop waits for a batch, workers still making one cannot keep up;
// workers with nothing to make mean the batch was ready and the wait is the main process's own.

#include "model/trace_model.h"
#include "steps/host_state.h"

#include <vector>

namespace tuneup::analysis {

struct LoaderWorker {
    int64_t pid = 0;
    int64_t parentPid = 0; // the process it made batches for; 0 when the recording does not say
    TimeSpan life; // its start and end as recorded (meta start_ns, end_ns), else its first and last event
    std::vector<TimeSpan> fetching; // making a batch, sorted and merged
    HostStateTimeline states; // its thread's sampled states; empty when not sampled
};

// The worker's activity from its recording (a TraceModel of a `dataloader-worker` file).
LoaderWorker loaderWorkerActivity(const TraceModel& worker);

// The workers over some spans of the main process (its DataLoader waits), each worker counted only
// while it was alive; one whose recording has no batch at all (made without the Python bootstrap) says
// nothing and is not counted.
struct LoaderWorkersDuring {
    size_t workers = 0; // workers alive during some of the spans
    int64_t aliveNs = 0; // the spans' time, summed over the workers alive in it
    int64_t fetchingNs = 0; // of that, making a batch
    HostTime states {}; // their sampled states over the same time
    // The share of the workers' time spent making a batch, 0..1 (0 when none was alive).
    double fetchingShare() const { return aliveNs > 0 ? double(fetchingNs) / double(aliveNs) : 0.0; }
};
LoaderWorkersDuring loaderWorkersDuring(const std::vector<LoaderWorker>& workers, const std::vector<TimeSpan>& spans);

} // namespace tuneup::analysis
