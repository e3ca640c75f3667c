#pragma once
// Shared by the importers' fuzz targets: the input as a file (the SQLite readers take paths), the checks
// every imported model must pass whatever the input (links and ids that index their tables, plausible
// times), and what the commands do with it (analysis, reports, export) without a sanitizer report.

#include "advise/advisor.h"
#include "export/chrome_trace_writer.h"
#include "import/import_error.h"
#include "import/tuneup_file.h"
#include "model/trace_model.h"
#include "report/report.h"
#include "steps/memory_peak.h"
#include "utf8.h"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <string>
#include <unistd.h>

namespace tuneup::fuzz {

// The input written to a file of this process (one input at a time: libFuzzer runs inputs in sequence);
// with no data, just the file's path.
inline const std::string& writeInput(const uint8_t* data, size_t size) {
    // Never destroyed, so the exit handler that removes the file can still read it.
    static const std::string& path = *[] {
        const char* tmp = getenv("TMPDIR");
        auto* p = new std::string(
            std::string(tmp && *tmp ? tmp : "/tmp") + "/tuneup-fuzz-" + std::to_string(getpid()) + ".sqlite");
        atexit([] { remove(writeInput(nullptr, 0).c_str()); }); // at the end of a run (a crash keeps it)
        return p;
    }();
    if (!data) return path;
    FILE* f = fopen(path.c_str(), "wb");
    if (!f) abort();
    if (size && fwrite(data, 1, size, f) != size) abort();
    fclose(f);
    return path;
}

#define TUNEUP_FUZZ_CHECK(condition)                                                                                   \
    do {                                                                                                               \
        if (!(condition)) {                                                                                            \
            fprintf(stderr, "model invariant broken: %s (%s:%d)\n", #condition, __FILE__, __LINE__);                   \
            abort();                                                                                                   \
        }                                                                                                              \
    } while (0)

// What rules rely on: every link is kNoRow or a row of its table, every thread and string id exists,
// tables are sorted by start.
inline void checkModel(const analysis::TraceModel& m) {
    using namespace analysis;
    const auto link = [](RowIndex r, size_t rows) { return r == kNoRow || (r >= 0 && size_t(r) < rows); };
    const auto sorted = [](const std::vector<int64_t>& start) {
        for (size_t i = 1; i < start.size(); ++i)
            if (start[i - 1] > start[i]) return false;
        return true;
    };
    TUNEUP_FUZZ_CHECK(sorted(m.kernels.startNs) && sorted(m.memcpys.startNs) && sorted(m.apiCalls.startNs)
        && sorted(m.annotations.startNs) && sorted(m.cpuOps.startNs));
    for (size_t i = 0; i < m.kernels.size(); ++i) {
        TUNEUP_FUZZ_CHECK(link(m.kernels.apiCall[i], m.apiCalls.size()) && link(m.kernels.cpuOp[i], m.cpuOps.size()));
        TUNEUP_FUZZ_CHECK(m.kernels.name[i] < m.strings.size());
    }
    for (size_t i = 0; i < m.memcpys.size(); ++i)
        TUNEUP_FUZZ_CHECK(link(m.memcpys.apiCall[i], m.apiCalls.size()));
    for (size_t i = 0; i < m.syncs.size(); ++i)
        TUNEUP_FUZZ_CHECK(link(m.syncs.apiCall[i], m.apiCalls.size()));
    for (size_t i = 0; i < m.apiCalls.size(); ++i)
        TUNEUP_FUZZ_CHECK(m.apiCalls.thread[i] < m.threads.size() && m.apiCalls.name[i] < m.strings.size()
            && link(m.apiCalls.cpuOp[i], m.cpuOps.size()));
    for (size_t i = 0; i < m.annotations.size(); ++i)
        TUNEUP_FUZZ_CHECK(m.annotations.thread[i] < m.threads.size()
            && link(m.annotations.parent[i], m.annotations.size()) && m.annotations.name[i] < m.strings.size());
    for (size_t i = 0; i < m.cpuOps.size(); ++i)
        TUNEUP_FUZZ_CHECK(m.cpuOps.thread[i] < m.threads.size() && link(m.cpuOps.parent[i], m.cpuOps.size()));
    for (const ThreadInfo& t : m.threads)
        TUNEUP_FUZZ_CHECK(t.name < m.strings.size());
    const MemoryEventTable& mem = m.memoryEvents;
    for (size_t i = 0; i < mem.size(); ++i)
        TUNEUP_FUZZ_CHECK(isPlausibleTime(mem.timeNs[i]) && (i == 0 || mem.timeNs[i - 1] <= mem.timeNs[i])
            && (mem.thread[i] == kNoThread || mem.thread[i] < m.threads.size()));
    const MemoryPeakTable& peaks = m.memoryPeaks;
    for (size_t i = 0; i < peaks.size(); ++i)
        TUNEUP_FUZZ_CHECK((i == 0 || peaks.startNs[i - 1] <= peaks.startNs[i])
            && (peaks.thread[i] == kNoThread || peaks.thread[i] < m.threads.size()) && peaks.allocatedBytes[i] >= -1
            && peaks.reservedBytes[i] >= -1);
    // Times within the clock's range (TraceBuilder leaves out the rest), ends after starts.
    const auto times = [](const auto& table) {
        for (size_t i = 0; i < table.size(); ++i)
            if (!isPlausibleTime(table.startNs[i]) || table.endNs[i] < table.startNs[i]) return false;
        return true;
    };
    TUNEUP_FUZZ_CHECK(times(m.kernels) && times(m.memcpys) && times(m.memsets) && times(m.syncs) && times(m.apiCalls)
        && times(m.cpuOps) && times(m.annotations) && times(m.gemmCalls) && times(m.convCalls) && times(m.memoryPeaks));
}

// What every command does with a model: its steps and breakdown (no time may be negative), the JSON
// report and the Chrome trace export (valid UTF-8 whatever the trace's text). UBSan sees the sums.
inline void checkAnalysis(const analysis::TraceModel& m) {
    using namespace analysis;
    const RankAdvice advice = adviseRank(m, 0, 1, {}, {});
    const StepBreakdown& b = advice.summary.steps.median;
    TUNEUP_FUZZ_CHECK(b.stepNs >= 0 && b.computeNs >= 0 && b.idleNs >= 0 && b.memcpyNs >= 0);
    TUNEUP_FUZZ_CHECK(advice.summary.kernelNs >= 0);
    // GPU memory per step (memory-headroom's facts): levels never below their lowest, rises never negative
    // (unknown, -1, only where the level the step began with is: the allocator's peaks alone).
    const MemoryPeaks peaks = memoryPeaks(m, advice.analysis.steps);
    for (const MemoryTotalPeak* total : { &peaks.allocated, &peaks.reserved })
        for (const StepMemory& s : total->perStep)
            TUNEUP_FUZZ_CHECK(
                s.peakBytes >= s.lowBytes && (s.riseBytes >= 0 || (s.riseBytes == -1 && s.lowBytes == -1)));
    const AdviceReport report = finishAdvice({ advice.summary }, { advice.outcomes }, {});
    std::ostringstream json;
    writeJsonReport(json, report, ReportContext {});
    TUNEUP_FUZZ_CHECK(isValidUtf8(json.str()));
    std::ostringstream trace;
    ChromeTraceMarks marks;
    marks.steps = &advice.analysis.steps.detection;
    writeChromeTrace(trace, m, marks);
    TUNEUP_FUZZ_CHECK(isValidUtf8(trace.str()));
}

} // namespace tuneup::fuzz
