#pragma once
// Everything the GUI shows about the files it opened, computed once on the loading thread: the
// models, the advice over the job, the timeline's tracks and the kernel table. Immutable once
// loaded, so views read it without locks. No Qt, so the load runs (and is tested) without a window.

#include "advise/advisor.h"
#include "advise/kernel_class.h"
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
    // forked children) on the timeline. They are not part of the job's advice.
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
    std::vector<std::string> files; // the job's files, as given
    std::vector<std::string> otherFiles; // other processes found beside them
    std::vector<analysis::TraceModel> job; // one per file; the report points into it, so it never moves
    std::vector<analysis::TraceModel> others;
    std::vector<std::string> labels; // per model, the job's first: "run.db", "run.pid77.db (DataLoader worker)"
    analysis::AdviceReport report;
    TimelineData timeline;
    std::vector<KernelRow> kernels; // by total time, largest first
    int64_t kernelTotalNs = 0;
    double loadSeconds = 0;

    size_t modelCount() const { return job.size() + others.size(); }
    const analysis::TraceModel& model(size_t i) const { return i < job.size() ? job[i] : others[i - job.size()]; }
    // Times are shown from here: the start of the first file's events.
    int64_t originNs() const { return timeline.span.startNs; }
    // The first file's step analysis (the job's rank 0), null when it has no steps.
    const analysis::StepAnalysis* steps() const;
    // A short name for the window title: "run.db", "run.rank0.db +7".
    std::string title() const;
};

// Imports, advises and lays out; throws what the importers throw (ImportError...), LoadCancelled, or
// std::runtime_error for a user rule directory that cannot be loaded.
std::shared_ptr<Session> loadSession(const LoadRequest& request, const LoadProgress& progress = {});

// Files recorded beside `file` by other processes of the same run: for run.db, run.pid<N>.db; for
// run.rank3.db, run.rank3.pid<N>.db. Sorted by name; empty for files that are not tuneup recordings.
std::vector<std::string> otherProcessFiles(const std::string& file);

// Kernel rows over several models, by total time, largest first.
std::vector<KernelRow> kernelRows(const std::vector<const analysis::TraceModel*>& models, int64_t* totalNs = nullptr);

} // namespace tuneup::gui
