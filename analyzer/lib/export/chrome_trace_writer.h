#pragma once
// Writes a TraceModel as Chrome trace JSON (the Kineto flavour of it), which Perfetto UI
// (ui.perfetto.dev) and chrome://tracing open, and which tuneup's own Kineto importer reads back.
//
// GPU work goes on one track per (device, stream) — pid = device, tid = stream, as Kineto does — CPU
// work on its (pid, tid); categories and args are Kineto's (kernel, gpu_memcpy, cuda_runtime, cpu_op,
// user_annotation, ...), launches are joined to their kernels by ac2g flow arrows, memory events are
// "[memory]" instants as profile_memory writes them. Times are exact:
// nanoseconds written as microseconds with three decimals. Steps and findings get a track of their own
// in a "tuneup" process: one range per step, one per finding's evidence span (named after the rule,
// with the title, gain and fix in args).

#include "advise/finding.h"
#include "model/trace_model.h"
#include "steps/step_detector.h"

#include <ostream>
#include <vector>

namespace tuneup::analysis {

struct ChromeTraceMarks {
    const StepDetection* steps = nullptr; // none: no step track
    const std::vector<Finding>* findings = nullptr; // none: no findings track
};

// Writes the whole trace to `out`. Throws std::runtime_error when the stream fails (disk full).
void writeChromeTrace(std::ostream& out, const TraceModel& model, const ChromeTraceMarks& marks = {});

// The pid of the "tuneup" process that holds the step and finding tracks.
inline constexpr int64_t kTuneupMarksPid = 2'000'000'000;

} // namespace tuneup::analysis
