// CUDA graph replays in the step breakdown, and the graph id a kernel carries: the GPU idle between the
// nodes of one replay is a part of its own (the host had queued the whole graph), never the host's
// launch overhead, a synchronisation's or the DataLoader's; a kernel that names its graph (tuneup
// recordings, newer Kineto's "graph id") is a replay's node even when its launch call was not recorded.
// Expected numbers on the real HTA trace come from a throw-away Python script over its JSON (decimal
// timestamps): the union of device 0's kernels, copies and sets; each ProfilerStep's gaps; those lying
// inside a replay (from the first to the last node whose correlation id is a cudaGraphLaunch's).

#include "advise/kernel_origin.h"
#include "export/chrome_trace_writer.h"
#include "export/tuneup_writer.h"
#include "import/importer.h"
#include "model/trace_builder.h"
#include "shared_traces.h"
#include "steps/breakdown.h"
#include "temp_dir.h"
#include "trace_fixture.h"

#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>

using namespace tuneup::analysis;
namespace fs = std::filesystem;

namespace {

const fs::path kTraces = TUNEUP_SHARED_TRACES;

std::string kinetoFixture(const std::string& name) {
    return std::string(TUNEUP_KINETO_FIXTURES) + "/" + name;
}

// The parts of a step add up to it, and its idle to the four idle parts.
void expectPartsSumToTheStep(const StepBreakdown& b, size_t step) {
    EXPECT_EQ(b.idleDataNs + b.idleSyncNs + b.idleHostNs + b.idleGraphNs, b.idleNs) << "step " << step;
    EXPECT_EQ(b.computeNs + b.communicationNs + b.memcpyNs + b.memsetNs + b.idleNs, b.stepNs) << "step " << step;
}

Kernel kernelAt(TraceBuilder& b, int64_t start, int64_t durationNs, uint64_t correlation, uint32_t graphId) {
    Kernel k;
    k.startNs = start;
    k.endNs = start + durationNs;
    k.device = 0;
    k.stream = 7;
    k.correlation = correlation;
    k.graphId = graphId;
    k.name = b.intern("triton_poi_fused_add_0");
    return k;
}

ApiCall callAt(
    TraceBuilder& b, ThreadIndex thread, int64_t start, int64_t durationNs, const char* name, uint64_t correlation) {
    ApiCall c;
    c.startNs = start;
    c.endNs = start + durationNs;
    c.thread = thread;
    c.name = b.intern(name);
    c.correlation = correlation;
    return c;
}

using Spans = std::vector<std::pair<int64_t, int64_t>>;
Spans pairs(const std::vector<TimeSpan>& spans) {
    Spans out;
    for (const TimeSpan& s : spans)
        out.emplace_back(s.startNs, s.endNs);
    return out;
}

} // namespace

TEST(GraphReplayBreakdown, AGraphIdMarksAReplayWithoutItsLaunchCall) {
    // Graph 7 replayed twice with no launch call recorded (correlations 11 and 12, two kernels each), a node
    // of it without a correlation id, an eager kernel (cudaLaunchKernel, 13), and a replay of an older
    // trace known only by its cudaGraphLaunch (14, graph id 0).
    TraceBuilder b(SourceFormat::TuneupDb, "synthetic");
    const ThreadIndex thread = b.thread(1, 1);
    b.addApiCall(callAt(b, thread, 1'000, 5'000, "cudaLaunchKernel", 13));
    b.addApiCall(callAt(b, thread, 2'000, 5'000, "cudaGraphLaunch", 14));
    b.addKernel(kernelAt(b, 10'000, 1'000, 11, 7));
    b.addKernel(kernelAt(b, 13'000, 1'000, 11, 7));
    b.addKernel(kernelAt(b, 20'000, 1'000, 12, 7));
    b.addKernel(kernelAt(b, 24'000, 2'000, 12, 7));
    b.addKernel(kernelAt(b, 30'000, 1'000, 0, 7));
    b.addKernel(kernelAt(b, 40'000, 1'000, 13, 0));
    b.addKernel(kernelAt(b, 50'000, 1'000, 14, 0));
    b.addKernel(kernelAt(b, 55'000, 1'000, 14, 0));
    const TraceModel m = b.finish();
    EXPECT_EQ(graphReplayedKernels(m), (std::vector<char> { 1, 1, 1, 1, 1, 0, 1, 1 }));
    // The one without a correlation id is a replay of its own: nothing says which others ran with it.
    EXPECT_EQ(pairs(graphReplays(m, 0)),
        (Spans { { 10'000, 14'000 }, { 20'000, 26'000 }, { 30'000, 31'000 }, { 50'000, 56'000 } }));
    EXPECT_TRUE(graphReplays(m, 1).empty());
}

TEST(GraphReplayBreakdown, IdleInsideAReplayIsTheGraphsWhateverTheHostDid) {
    // One step of 100 us: a replay (correlation 1) of three kernels at 10, 20 and 30 us (2 us each) queued
    // at 2 us; the host enters a stream synchronisation at 5 us and a DataLoader wait at 40 us. The gaps
    // between the nodes (12-20, 22-30) are the graph's; 32-45 and 45-100 are after the sync / the wait;
    // 0-10 is before anything ran: the host's.
    TraceBuilder b(SourceFormat::KinetoJson, "synthetic");
    const ThreadIndex thread = b.thread(1, 1);
    Annotation step;
    step.startNs = 0;
    step.endNs = 100'000;
    step.thread = thread;
    step.name = b.intern("ProfilerStep#1");
    b.addAnnotation(step);
    Annotation wait = step;
    wait.startNs = 40'000;
    wait.name = b.intern("enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__");
    b.addAnnotation(wait);
    b.addApiCall(callAt(b, thread, 2'000, 2'000, "cudaGraphLaunch", 1));
    b.addApiCall(callAt(b, thread, 5'000, 40'000, "cudaStreamSynchronize", 2));
    for (int64_t start : { 10'000, 20'000, 30'000 })
        b.addKernel(kernelAt(b, start, 2'000, 1, 0));
    const StepAnalysis steps = analyzeSteps(b.finish());
    ASSERT_EQ(steps.perStep.size(), 1u);
    const StepBreakdown& s = steps.perStep[0];
    EXPECT_EQ(s.computeNs, 6'000);
    EXPECT_EQ(s.idleGraphNs, 16'000);
    EXPECT_EQ(s.idleHostNs, 10'000);
    EXPECT_EQ(s.idleSyncNs, 8'000); // 32-40 us: after the sync, before the wait
    EXPECT_EQ(s.idleDataNs, 60'000);
    expectPartsSumToTheStep(s, 0);
    ASSERT_EQ(steps.gaps.size(), 4u);
    EXPECT_EQ(std::vector<bool>(
                  { steps.gaps[0].inGraph, steps.gaps[1].inGraph, steps.gaps[2].inGraph, steps.gaps[3].inGraph }),
        std::vector<bool>({ false, true, true, false }));
    EXPECT_EQ(steps.gaps[1].hostNs() + steps.gaps[1].syncNs() + steps.gaps[1].dataNs, 0);
    EXPECT_EQ(describeIdleGap(steps.gaps[1], {}, "x86_64"), "inside a CUDA graph replay (queued already)");
}

TEST(GraphReplayBreakdown, KinetoFixtureHasItsReplaysGapsApart) {
    // tests/fixtures/kineto/cuda_graph_replay.json: each 1 ms step replays a graph (a memset node, then 40
    // kernels of 4 us 2 us apart, 3 us after the memset) and launches 3 kernels one by one.
    const StepAnalysis steps = analyzeSteps(importTrace(kinetoFixture("cuda_graph_replay.json")));
    ASSERT_EQ(steps.perStep.size(), 4u);
    for (size_t i = 0; i < steps.perStep.size(); ++i) {
        const StepBreakdown& s = steps.perStep[i];
        EXPECT_EQ(s.idleGraphNs, 3'000 + 39 * 2'000) << i;
        EXPECT_EQ(s.idleHostNs, 742'000) << i; // the launch gaps around and between the eager kernels
        expectPartsSumToTheStep(s, i);
    }
    EXPECT_EQ(std::count_if(steps.gaps.begin(), steps.gaps.end(), [](const IdleGap& g) { return g.inGraph; }), 160);
}

TEST(GraphReplayBreakdown, RealTraceIdlesInsideItsReplaysAsCountedInPython) {
    // HTA negative_queue rank 0: 70 cudaGraphLaunch replays, queued about 150 ms before they run.
    TUNEUP_REQUIRE_SHARED_TRACES(kTraces);
    const StepAnalysis steps = analyzeSteps(
        importTrace((kTraces / "hta/tests/data/negative_queue_length_values_check/rank0.json.gz").string()));
    ASSERT_EQ(steps.perStep.size(), 5u);
    const int64_t graphNs[] = { 29'462'000, 46'655'000, 51'837'000, 46'511'000, 51'895'000 };
    const size_t graphGaps[] = { 43, 90, 83, 86, 91 };
    const int64_t idleNs[] = { 137'309'000, 136'221'000, 142'037'000, 135'339'000, 141'696'000 };
    for (size_t i = 0; i < 5; ++i) {
        const StepBreakdown& s = steps.perStep[i];
        EXPECT_EQ(s.idleGraphNs, graphNs[i]) << i;
        EXPECT_EQ(s.idleNs, idleNs[i]) << i;
        EXPECT_EQ(size_t(std::count_if(steps.gaps.begin(), steps.gaps.end(),
                      [&](const IdleGap& g) { return g.inGraph && size_t(g.step) == i; })),
            graphGaps[i])
            << i;
        expectPartsSumToTheStep(s, i);
    }
    // The median step (216.1 ms) idles 51.8 ms inside its replays: none of it is the host's any more.
    EXPECT_EQ(steps.median.idleGraphNs, 51'837'000);
}

TEST(GraphReplayBreakdown, TuneupRecordingsGiveEachKernelItsGraphId) {
    // The agent's file (the real schema): kernels 0 and 2 of five were replayed by graph 42; no launch call
    // is recorded for any of them.
    tuneup::test::TempDir dir { "graph_replay_breakdown_test" };
    const std::string file = dir.path() + "/run.db";
    tuneup::test::TraceSpec spec;
    spec.kernels = 5;
    spec.apiCalls = 0;
    tuneup::test::writeTrace(file, spec);
    {
        sqlite3* db = nullptr;
        ASSERT_EQ(sqlite3_open(file.c_str(), &db), SQLITE_OK);
        tuneup::test::exec(db, "UPDATE kernels SET graph_id = CASE WHEN correlation_id IN (0, 2) THEN 42 ELSE 0 END");
        sqlite3_close(db);
    }
    const TraceModel m = importTrace(file);
    ASSERT_EQ(m.kernels.size(), 5u);
    EXPECT_EQ(m.kernels.graphId, (std::vector<uint32_t> { 42, 0, 42, 0, 0 }));
    EXPECT_EQ(graphReplayedKernels(m), (std::vector<char> { 1, 0, 1, 0, 0 }));

    // Written again as a tuneup file and as a Kineto trace, the ids come back.
    writeTuneupFile(m, dir.path() + "/copy.db");
    EXPECT_EQ(importTrace(dir.path() + "/copy.db").kernels.graphId, m.kernels.graphId);
    {
        std::ofstream out(dir.path() + "/copy.json");
        writeChromeTrace(out, m);
    }
    EXPECT_EQ(importTrace(dir.path() + "/copy.json").kernels.graphId, m.kernels.graphId);
}

TEST(GraphReplayBreakdown, KinetoGraphIdArgsAreRead) {
    // Kineto built against CUDA 12 or later writes "graph id" and "graph node id" in every kernel's args
    // (kineto#1276), 0 for a kernel launched alone. This trace holds no runtime call at all.
    tuneup::test::TempDir dir { "graph_replay_breakdown_test" };
    const std::string file = dir.path() + "/trace.json";
    std::ofstream(file) << R"({"traceEvents": [
      {"ph": "X", "cat": "kernel", "name": "triton_poi_0", "pid": 0, "tid": 7, "ts": 10, "dur": 2,
       "args": {"device": 0, "stream": 7, "correlation": 5, "graph id": 3, "graph node id": 1}},
      {"ph": "X", "cat": "kernel", "name": "triton_poi_1", "pid": 0, "tid": 7, "ts": 20, "dur": 2,
       "args": {"device": 0, "stream": 7, "correlation": 5, "graph id": 3, "graph node id": 2}},
      {"ph": "X", "cat": "kernel", "name": "eager", "pid": 0, "tid": 7, "ts": 30, "dur": 2,
       "args": {"device": 0, "stream": 7, "correlation": 6, "graph id": 0, "graph node id": 0}}]})";
    const TraceModel m = importTrace(file);
    ASSERT_EQ(m.kernels.size(), 3u);
    EXPECT_EQ(m.kernels.graphId, (std::vector<uint32_t> { 3, 3, 0 }));
    EXPECT_EQ(graphReplayedKernels(m), (std::vector<char> { 1, 1, 0 }));
    EXPECT_EQ(pairs(graphReplays(m, 0)), (Spans { { 10'000, 22'000 } }));
}
