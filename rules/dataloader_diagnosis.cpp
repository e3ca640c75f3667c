#include "dataloader_diagnosis.h"

#include "units.h"

namespace tuneup::rules {

using namespace analysis;

namespace {

enum class Level { None, Low, Middle, High };

Level level(const std::optional<double>& share, double highAtLeast, double lowBelow) {
    if (!share) return Level::None;
    return *share >= highAtLeast ? Level::High : *share < lowBelow ? Level::Low : Level::Middle;
}

std::string workersText(const LoaderDiagnosis& d) {
    return "the " + (d.workers == 1 ? std::string("worker was") : std::to_string(d.workers) + " workers were")
        + " making a batch " + formatPercent(*d.workersFetching) + " of the time";
}

} // namespace

std::string_view loaderSideName(LoaderSide side) {
    switch (side) {
    case LoaderSide::Workers:
        return "the workers";
    case LoaderSide::Receiving:
        return "the main process, receiving batches";
    case LoaderSide::Unclear:
        return "unclear";
    case LoaderSide::Unknown:
        break;
    }
    return "not recorded";
}

std::string describeDiagnosis(const LoaderDiagnosis& d) {
    std::string numbers;
    if (d.mainRunning) numbers = "main thread running " + formatPercent(*d.mainRunning) + " of its sampled wait time";
    if (d.workersFetching)
        numbers += (numbers.empty() ? "" : "; ") + std::to_string(d.workers) + (d.workers == 1 ? " worker" : " workers")
            + " making a batch " + formatPercent(*d.workersFetching)
            + (d.mainRunning ? " of theirs" : " of their time during the waits");
    if (numbers.empty()) numbers = "no samples of the main thread, no recordings of the workers";
    return std::string(loaderSideName(d.side)) + " (" + numbers + ")";
}

LoaderDiagnosis diagnoseLoader(const HostTime& main, const LoaderWorkersDuring& workers, bool processes) {
    LoaderDiagnosis d;
    int64_t total = 0;
    for (int64_t ns : main)
        total += ns;
    const int64_t sampled = total - main[size_t(HostActivity::Unknown)];
    if (sampled >= kMinSampledWaitNs && sampled * 2 >= total)
        d.mainRunning = double(main[size_t(HostActivity::Running)]) / double(sampled);
    d.workers = workers.workers;
    if (workers.workers > 0 && workers.aliveNs > 0) d.workersFetching = workers.fetchingShare();

    // The main thread's state decides where it can: running through the wait is the main process's own
    // work, whatever the workers do. Blocked, it waits for the workers unless they had nothing to make.
    const Level running = level(d.mainRunning, kMainRunningAtLeast, kMainRunningAtMost);
    const Level busy = level(d.workersFetching, kWorkersBusyAtLeast, kWorkersIdleBelow);
    const bool mainWaits = d.mainRunning && *d.mainRunning <= kMainRunningAtMost;
    if (running == Level::High)
        d.side = LoaderSide::Receiving;
    else if (busy == Level::Low)
        d.side = LoaderSide::Receiving;
    else if (busy == Level::High || (mainWaits && busy != Level::Low))
        d.side = LoaderSide::Workers;
    else
        d.side = running == Level::None && busy == Level::None ? LoaderSide::Unknown : LoaderSide::Unclear;

    // Said by its larger part: "running 80%", or "blocked 95%" (in a system call: waiting).
    const std::string mainText = !d.mainRunning ? std::string()
        : *d.mainRunning >= 0.5
        ? "the main thread was running " + formatPercent(*d.mainRunning) + " of its sampled time"
        : "the main thread was blocked " + formatPercent(1.0 - *d.mainRunning) + " of its sampled time";
    const std::string both = !mainText.empty() && d.workersFetching ? mainText + " and " + workersText(d)
        : !mainText.empty()                                         ? mainText
        : d.workersFetching                                         ? workersText(d)
                                                                    : std::string();
    switch (d.side) {
    case LoaderSide::Receiving:
        d.why = "During the waits " + both
            + (running != Level::High ? ": the batches were made, and the wait was for them to cross into the main "
                                        "process (pickled through a pipe, each tensor's shared memory through a "
                                        "socket)"
                    : processes       ? ": the main process spent the wait on its own work, receiving what the workers "
                                        "sent (unpickling each Python object, rebuilding tensors from shared memory) or "
                                        "collating"
                                      : ": the wait is the main thread's own work (the workers are threads that hand a "
                                        "batch over without copying it), not the workers'")
            + ". More workers will not help.";
        break;
    case LoaderSide::Workers:
        d.why = "During the waits " + both + ": the workers make batches more slowly than the loop takes them.";
        break;
    case LoaderSide::Unclear:
        d.why = "During the waits " + both
            + ": neither the workers' work nor the main process's clearly holds "
              "the loop up.";
        break;
    case LoaderSide::Unknown:
        d.why = "What the main thread and the workers did during the waits was not recorded (tuneup record samples "
                "the main thread and records each worker beside it), so whether the workers are too slow or the "
                "main process is busy receiving their batches cannot be told.";
        break;
    }
    return d;
}

} // namespace tuneup::rules
