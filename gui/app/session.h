#pragma once
// Everything the GUI shows about the files it opened, computed once on the loading thread: the job
// (read and advised by the job core, as `tuneup advise` does), the timeline's tracks and the kernel
// table. Immutable once loaded, so views read it without locks. No Qt, so the load runs (and is
// tested) without a window.

#include "advise/kernel_class.h"
#include "job/job.h"
#include "timeline/timeline_data.h"

#include <atomic>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace tuneup::gui {

struct LoadRequest {
    std::vector<std::string> files; // analysed as one job (one file per rank), like `tuneup advise`
    std::string stepRange; // --step-range
    std::string userRules; // --rules DIR
    // Also show the other processes recorded beside a tuneup file (run.pid<N>.db: DataLoader workers,
    // forked children) and the helpers given with the job on the timeline. They are not part of the advice.
    bool withOtherProcesses = true;
};

struct LoadProgress {
    std::function<void(const std::string& phase, double fraction)> report; // fraction 0..1
    const std::atomic<bool>* cancel = nullptr;
};

/** Thrown by loadSession when LoadProgress::cancel was set. */
class LoadCancelled : public std::runtime_error {
public:
    LoadCancelled()
        : std::runtime_error("loading cancelled") { }
};

/** One kernel name over the job: the kernel table's row. */
struct KernelRow {
    std::string name;
    std::string shortName; // readable (report_helpers.h shortKernelName)
    analysis::KernelClass kernelClass = analysis::KernelClass::Other;
    int64_t count = 0;
    int64_t totalNs = 0;
    int64_t minNs = 0;
    int64_t maxNs = 0;
    int64_t meanNs() const { return count ? totalNs / count : 0; }
};

struct Session {
    std::unique_ptr<analysis::Job> job; // the files, their traces and analyses, and the advice
    std::vector<std::string> inputs; // as the user gave them (LoadRequest::files): what a comparison names
    std::vector<std::string> files; // the ranks' files
    std::vector<std::string> otherFiles; // the other processes' files shown beside them (helpers)
    std::vector<std::string> labels; // per model, ranks first: "run.db", "run.pid77.db (DataLoader worker)"
    TimelineData timeline;
    std::vector<KernelRow> kernels; // by total time, largest first
    int64_t kernelTotalNs = 0;
    double loadSeconds = 0;

    const analysis::AdviceReport& report() const { return job->report; }
    size_t rankCount() const { return job->models.size(); }
    size_t modelCount() const { return job->models.size() + job->helperModels.size(); }
    const analysis::TraceModel& model(size_t i) const {
        return i < job->models.size() ? job->models[i] : job->helperModels[i - job->models.size()];
    }
    // Times are shown from here: the start of the first file's events.
    int64_t originNs() const { return timeline.span.startNs; }
    // The first file's step analysis (the job's rank 0), null when it has no steps.
    const analysis::StepAnalysis* steps() const;
    // A short name for the window title: "run.db", "run.rank0.db +7".
    std::string title() const;
};

// Opens the job (analysis::openJob) and lays it out; throws what openJob throws (ImportError...,
// SqlRuleError for a user rule directory that cannot be loaded), or LoadCancelled.
std::shared_ptr<Session> loadSession(const LoadRequest& request, const LoadProgress& progress = {});

// Kernel rows over several models, by total time, largest first.
std::vector<KernelRow> kernelRows(const std::vector<const analysis::TraceModel*>& models, int64_t* totalNs = nullptr);

} // namespace tuneup::gui
