#include "steps/loader_workers.h"

#include "saturating.h"
#include "steps/breakdown.h"

#include <algorithm>
#include <charconv>
#include <optional>

namespace tuneup::analysis {

namespace {

constexpr std::string_view kFetchRange = "tuneup.dataloader.fetch"; // agent/python/sitecustomize.py

std::optional<int64_t> metaInteger(const TraceModel& model, std::string_view key) {
    const std::string text = model.info.metadataValue(key);
    int64_t value = 0;
    const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (text.empty() || error != std::errc() || end != text.data() + text.size()) return std::nullopt;
    return value;
}

} // namespace

LoaderWorker loaderWorkerActivity(const TraceModel& worker) {
    LoaderWorker w;
    w.pid = metaInteger(worker, "pid").value_or(worker.processes.empty() ? 0 : worker.processes.front().pid);
    w.parentPid = metaInteger(worker, "parent_pid").value_or(0);
    const AnnotationTable& a = worker.annotations;
    for (size_t i = 0; i < a.size(); ++i)
        if (worker.str(a.name[i]) == kFetchRange) w.fetching.push_back({ a.startNs[i], a.endNs[i] });
    w.fetching = mergeSpans(std::move(w.fetching));
    w.states = HostStateTimeline(worker);
    // The recorded start and end; a worker killed before it wrote its end lived until its last event.
    w.life = worker.span().value_or(TimeSpan {});
    const auto start = metaInteger(worker, "start_ns"), end = metaInteger(worker, "end_ns");
    if (start && isPlausibleTime(*start)) w.life.startNs = *start;
    if (end && isPlausibleTime(*end)) w.life.endNs = *end;
    if (w.life.endNs < w.life.startNs) w.life.endNs = w.life.startNs;
    return w;
}

LoaderWorkersDuring loaderWorkersDuring(const std::vector<LoaderWorker>& workers, const std::vector<TimeSpan>& spans) {
    LoaderWorkersDuring during;
    for (const LoaderWorker& w : workers) {
        if (w.fetching.empty()) continue; // its recording does not say when it made batches
        std::vector<TimeSpan> alive;
        for (const TimeSpan& s : spans) {
            const TimeSpan piece { std::max(s.startNs, w.life.startNs), std::min(s.endNs, w.life.endNs) };
            if (piece.endNs > piece.startNs) alive.push_back(piece);
        }
        if (alive.empty()) continue;
        ++during.workers;
        for (const TimeSpan& piece : alive) {
            during.aliveNs = saturatingAdd(during.aliveNs, piece.durationNs());
            during.fetchingNs = saturatingAdd(during.fetchingNs, coveredNs(w.fetching, piece.startNs, piece.endNs));
        }
        const HostTime states = w.states.timeIn(alive);
        for (size_t i = 0; i < states.size(); ++i)
            during.states[i] = saturatingAdd(during.states[i], states[i]);
    }
    return during;
}

} // namespace tuneup::analysis
