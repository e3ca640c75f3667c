// Where kernels came from: CUDA/HIP graph replays and torch.compile regions, on small traces built here
// and on the real traces that have them. Expected counts come from a throw-away Python script over the
// JSON (kernels whose correlation id is a cudaGraphLaunch's; kernels whose launch call lies inside a
// CompiledFunction, CompiledFunctionBackward, Torch-Compiled Region or CompiledFxGraph range of its thread).

#include "advise/kernel_origin.h"
#include "import/importer.h"
#include "model/trace_builder.h"
#include "shared_traces.h"
#include "steps/breakdown.h"

#include <gtest/gtest.h>
#include <numeric>

using namespace tuneup::analysis;

namespace {

const std::filesystem::path kTraces = TUNEUP_SHARED_TRACES;

size_t countOf(const std::vector<char>& flags) {
    return size_t(std::count(flags.begin(), flags.end(), 1));
}

} // namespace

TEST(KernelOrigin, GraphLaunchNamesOfEveryApi) {
    for (const char* name : { "cudaGraphLaunch", "cudaGraphLaunch_v10000", "cudaGraphLaunch_ptsz", "cuGraphLaunch",
             "cuGraphLaunch_ptsz", "hipGraphLaunch", "hipGraphLaunch_spt" })
        EXPECT_TRUE(isGraphLaunch(name)) << name;
    for (const char* name : { "cudaLaunchKernel", "cuLaunchKernel", "cuLaunchKernelEx", "hipLaunchKernel",
             "cudaGraphInstantiate", "cudaGraphExecUpdate", "cudaStreamBeginCapture", "cudaGraphLaunchSomething", "" })
        EXPECT_FALSE(isGraphLaunch(name)) << name;
}

TEST(KernelOrigin, CompiledRegionNamesFromRealTraces) {
    for (const char* name : { "CompiledFunction", "CompiledFunctionBackward", "Torch-Compiled Region: 0/1",
             "## Call CompiledFxGraph fud64jsrxcxliekg7lptyw24yz5k3oa65b73wjfbhz6j2fg6ouu7 ##" })
        EXPECT_TRUE(isCompiledRegion(name)) << name;
    // The engine's range around a compiled backward also holds its eager gradient accumulation.
    for (const char* name : { "autograd::engine::evaluate_function: CompiledFunctionBackward",
             "TorchDynamo Cache Lookup", "aten::add", "ProfilerStep#3" })
        EXPECT_FALSE(isCompiledRegion(name)) << name;
}

TEST(KernelOrigin, SyntheticGraphReplayAndCompiledRegion) {
    // Thread 1: a CompiledFunction range holding a cudaGraphLaunch (correlation 1, two kernels) and a
    // cudaLaunchKernel (correlation 2); after the range, a cudaLaunchKernel (3); a kernel with no call (9).
    TraceBuilder b(SourceFormat::KinetoJson, "synthetic");
    const ThreadIndex thread = b.thread(1, 1);
    CpuOp region;
    region.startNs = 1'000;
    region.endNs = 50'000;
    region.thread = thread;
    region.name = b.intern("CompiledFunction");
    b.addCpuOp(region);
    auto call = [&](int64_t start, const char* name, uint64_t correlation) {
        ApiCall c;
        c.startNs = start;
        c.endNs = start + 5'000;
        c.thread = thread;
        c.name = b.intern(name);
        c.correlation = correlation;
        b.addApiCall(c);
    };
    call(2'000, "cudaGraphLaunch_v10000", 1);
    call(10'000, "cudaLaunchKernel", 2);
    call(60'000, "cudaLaunchKernel", 3);
    auto kernel = [&](int64_t start, uint64_t correlation) {
        Kernel k;
        k.startNs = start;
        k.endNs = start + 1'000;
        k.device = 0;
        k.correlation = correlation;
        k.name = b.intern("triton_poi_fused_add_0");
        b.addKernel(k);
    };
    kernel(100'000, 1);
    kernel(102'000, 1);
    kernel(104'000, 2);
    kernel(106'000, 3);
    kernel(108'000, 9);
    const TraceModel m = b.finish();
    EXPECT_EQ(graphReplayedKernels(m), (std::vector<char> { 1, 1, 0, 0, 0 }));
    EXPECT_EQ(launchedInCompiledRegion(m), (std::vector<char> { 1, 1, 1, 0, 0 }));
    EXPECT_TRUE(isGraphLaunchCall(m, m.kernels.apiCall[0]));
    EXPECT_FALSE(isGraphLaunchCall(m, m.kernels.apiCall[2]));
    EXPECT_FALSE(isGraphLaunchCall(m, kNoRow));
}

TEST(KernelOrigin, GraphReplayedKernelsOfARealTraceAreImportedAndCountAsBusy) {
    // HTA negative_queue rank 0: 70 cudaGraphLaunch calls replay 135 kernels (105.115 ms in all).
    TUNEUP_REQUIRE_SHARED_TRACES(kTraces);
    const TraceModel m
        = importTrace((kTraces / "hta/tests/data/negative_queue_length_values_check/rank0.json.gz").string());
    const std::vector<char> replayed = graphReplayedKernels(m);
    EXPECT_EQ(countOf(replayed), 135u);
    int64_t replayedNs = 0;
    std::vector<TimeSpan> spans;
    for (size_t i = 0; i < replayed.size(); ++i)
        if (replayed[i]) {
            replayedNs += m.kernels.endNs[i] - m.kernels.startNs[i];
            spans.push_back({ m.kernels.startNs[i], m.kernels.endNs[i] });
        }
    EXPECT_EQ(replayedNs, 105'115'000);
    // The breakdown counts them as GPU work: no idle gap of any step overlaps one.
    const StepAnalysis steps = analyzeSteps(m);
    ASSERT_EQ(steps.detection.steps.size(), 5u);
    const auto merged = mergeSpans(std::move(spans));
    int64_t inSteps = 0;
    for (const Step& s : steps.detection.steps)
        inSteps += coveredNs(merged, s.startNs, s.endNs);
    EXPECT_GT(inSteps, 0);
    for (const IdleGap& g : steps.gaps)
        ASSERT_EQ(coveredNs(merged, g.span.startNs, g.span.endNs), 0) << "idle gap at " << g.span.startNs;
}

TEST(KernelOrigin, CompiledRegionsOfRealTraces) {
    // negative_queue: 280 kernels launched inside CompiledFunction(Backward), 75 of them Triton (Inductor);
    // trace_diff/test: 4812, none Triton (a backend that does not fuse); b200: one Triton kernel in a
    // Torch-Compiled Region; resnet_kineto: no compiled region at all.
    TUNEUP_REQUIRE_SHARED_TRACES(kTraces);
    const struct {
        const char* file;
        size_t compiled, triton;
    } cases[] = { { "hta/tests/data/negative_queue_length_values_check/rank0.json.gz", 280, 75 },
        { "hta/tests/data/trace_diff/test/test.json.gz", 4812, 0 },
        { "tracelens/tests/traces/b200/eager_trace.json.gz", 1, 1 },
        { "param/et_replay/tests/inputs/resnet_kineto.json.gz", 0, 0 } };
    for (const auto& c : cases) {
        const TraceModel m = importTrace((kTraces / c.file).string());
        const std::vector<char> compiled = launchedInCompiledRegion(m);
        size_t triton = 0;
        for (size_t i = 0; i < compiled.size(); ++i)
            triton += compiled[i] && m.str(m.kernels.name[i]).find("triton") != std::string_view::npos;
        EXPECT_EQ(countOf(compiled), c.compiled) << c.file;
        EXPECT_EQ(triton, c.triton) << c.file;
    }
}
