// The Chrome trace (Perfetto) export: what it writes must come back through tuneup's own Kineto reader
// (the events, exactly, with their kinds and links), and the steps and findings must be marked. Real
// traces from ../shared/traces make the round trip too.

#include "advise/advisor.h"
#include "all_rules.h"
#include "export/chrome_trace_writer.h"
#include "import/importer.h"
#include "import/kineto_json.h"
#include "model/trace_builder.h"
#include "shared_traces.h"

#include <filesystem>
#include <gtest/gtest.h>
#include <sstream>

using namespace tuneup::analysis;

namespace {

TraceModel roundTrip(const TraceModel& model, const ChromeTraceMarks& marks = {}) {
    std::ostringstream out;
    writeChromeTrace(out, model, marks);
    return importKinetoJsonBytes(out.str(), "exported.json");
}

// A synthetic trace with one of each kind of event, with odd nanoseconds everywhere.
TraceModel syntheticTrace() {
    TraceBuilder b(SourceFormat::TuneupDb, "synthetic.db");
    const ThreadIndex main = b.thread(4242, 4243);
    b.setThreadName(4242, 4243, "python3");
    DeviceInfo device;
    device.id = 0;
    device.name = "NVIDIA H100 80GB HBM3";
    device.computeMajor = 9;
    device.smCount = 132;
    b.addDevice(device);
    ApiCall launch;
    launch.startNs = 1'000'000'001;
    launch.endNs = 1'000'004'003;
    launch.thread = main;
    launch.name = b.intern("cudaLaunchKernel");
    launch.cbid = 211;
    launch.correlation = 77;
    b.addApiCall(launch);
    Kernel k;
    k.startNs = 1'000'010'007;
    k.endNs = 1'000'510'009;
    k.device = 0;
    k.stream = 7;
    k.correlation = 77;
    k.name = b.intern("ampere_sgemm_128x64_nn");
    k.gridX = 120;
    k.gridY = 2;
    k.gridZ = 1;
    k.blockX = 256;
    k.blockY = 1;
    k.blockZ = 1;
    k.registersPerThread = 126;
    k.sharedMemoryBytes = 49152;
    b.addKernel(k);
    Memcpy c;
    c.startNs = 1'000'600'011;
    c.endNs = 1'000'700'013;
    c.device = 0;
    c.stream = 7;
    c.bytes = 1 << 20;
    c.copyKind = CopyKind::HtoD;
    c.srcKind = MemoryKind::Pageable;
    c.dstKind = MemoryKind::Device;
    b.addMemcpy(c);
    Memset s;
    s.startNs = 1'000'800'015;
    s.endNs = 1'000'801'017;
    s.device = 0;
    s.stream = 7;
    s.bytes = 4096;
    s.memoryKind = MemoryKind::Device;
    b.addMemset(s);
    Annotation step;
    step.startNs = 1'000'000'000;
    step.endNs = 1'001'000'000;
    step.thread = main;
    step.name = b.intern("step");
    b.addAnnotation(step);
    CpuOp op;
    op.startNs = 1'000'000'000;
    op.endNs = 1'000'005'000;
    op.thread = main;
    op.name = b.intern("aten::mm");
    op.inputDims = b.intern("[[30,1001],[1001,30]]");
    op.inputTypes = b.intern("float,float");
    b.addCpuOp(op);
    return b.finish();
}

} // namespace

TEST(ChromeTrace, EveryEventComesBackExactly) {
    const TraceModel original = syntheticTrace();
    const TraceModel back = roundTrip(original);
    ASSERT_EQ(back.kernels.size(), 1u);
    EXPECT_EQ(back.kernels.startNs[0], 1'000'010'007);
    EXPECT_EQ(back.kernels.endNs[0], 1'000'510'009);
    EXPECT_EQ(back.str(back.kernels.name[0]), "ampere_sgemm_128x64_nn");
    EXPECT_EQ(back.kernels.stream[0], 7);
    EXPECT_EQ(back.kernels.gridX[0], 120);
    EXPECT_EQ(back.kernels.gridY[0], 2);
    EXPECT_EQ(back.kernels.blockX[0], 256);
    EXPECT_EQ(back.kernels.registersPerThread[0], 126);
    EXPECT_EQ(back.kernels.sharedMemoryBytes[0], 49152);
    ASSERT_NE(back.kernels.apiCall[0], kNoRow) << "the launch is linked back by correlation";
    EXPECT_EQ(back.str(back.apiCalls.name[size_t(back.kernels.apiCall[0])]), "cudaLaunchKernel");
    EXPECT_EQ(back.apiCalls.startNs[0], 1'000'000'001);
    ASSERT_EQ(back.memcpys.size(), 1u);
    EXPECT_EQ(back.memcpys.copyKind[0], CopyKind::HtoD);
    EXPECT_EQ(back.memcpys.srcKind[0], MemoryKind::Pageable);
    EXPECT_EQ(back.memcpys.dstKind[0], MemoryKind::Device);
    EXPECT_EQ(back.memcpys.bytes[0], 1 << 20);
    EXPECT_EQ(back.memcpys.startNs[0], 1'000'600'011);
    ASSERT_EQ(back.memsets.size(), 1u);
    EXPECT_EQ(back.memsets.bytes[0], 4096);
    EXPECT_EQ(back.memsets.endNs[0], 1'000'801'017);
    ASSERT_EQ(back.cpuOps.size(), 1u);
    EXPECT_EQ(back.str(back.cpuOps.inputDims[0]), "[[30,1001],[1001,30]]");
    EXPECT_EQ(back.str(back.cpuOps.inputTypes[0]), "float,float");
    ASSERT_EQ(back.annotations.size(), 1u);
    EXPECT_EQ(back.str(back.annotations.name[0]), "step");
    EXPECT_EQ(back.flows.size(), 1u); // the launch -> kernel arrow
    ASSERT_EQ(back.devices.size(), 1u);
    EXPECT_EQ(back.devices[0].name, "NVIDIA H100 80GB HBM3");
    EXPECT_EQ(back.devices[0].computeMajor, 9);
    EXPECT_EQ(back.stats.value("skipped_unknown_category"), 0);
}

TEST(ChromeTrace, StepsAndFindingsAreMarked) {
    // A derived step (optimizer ranges) gets a tuneup.step range; a finding one range per evidence span.
    TraceBuilder b(SourceFormat::TuneupDb, "steps.db");
    const ThreadIndex main = b.thread(1, 1);
    for (int i = 0; i < 3; ++i) {
        Annotation zg;
        zg.startNs = 1'000'000 + i * 10'000'000;
        zg.endNs = zg.startNs + 100'000;
        zg.thread = main;
        zg.name = b.intern("Optimizer.zero_grad#SGD.zero_grad");
        b.addAnnotation(zg);
        Annotation st = zg;
        st.startNs = zg.startNs + 9'000'000;
        st.endNs = st.startNs + 100'000;
        st.name = b.intern("Optimizer.step#SGD.step");
        b.addAnnotation(st);
    }
    const TraceModel model = b.finish();
    const StepDetection steps = detectSteps(model);
    ASSERT_EQ(steps.source, StepSource::OptimizerRanges);
    Finding f;
    f.ruleId = "zero-grad-fill";
    f.title = "zero_grad() fills";
    f.evidence.spans = { { 1'000'000, 1'100'000 }, { 11'000'000, 11'100'000 } };
    const std::vector<Finding> findings = { f };
    const TraceModel back = roundTrip(model, { &steps, &findings });
    size_t stepRanges = 0, findingRanges = 0;
    for (size_t i = 0; i < back.annotations.size(); ++i) {
        stepRanges += back.str(back.annotations.name[i]) == "tuneup.step";
        findingRanges += back.str(back.annotations.name[i]) == "tuneup finding: zero-grad-fill";
    }
    EXPECT_EQ(stepRanges, steps.steps.size());
    EXPECT_EQ(findingRanges, 2u);
    // The re-imported trace finds the same steps, from the marked ranges.
    const StepDetection again = detectSteps(back);
    ASSERT_EQ(again.steps.size(), steps.steps.size());
    for (size_t i = 0; i < steps.steps.size(); ++i) {
        EXPECT_EQ(again.steps[i].startNs, steps.steps[i].startNs);
        EXPECT_EQ(again.steps[i].endNs, steps.steps[i].endNs);
    }
}

TEST(ChromeTrace, RealKinetoTraceSurvivesTheRoundTrip) {
    const std::filesystem::path path = std::filesystem::path(TUNEUP_SHARED_TRACES)
        / "hta/tests/data/critical_path/alexnet/benchmark_result_2869224_1695835535_trace.json.gz";
    TUNEUP_REQUIRE_SHARED_TRACES(std::filesystem::path(TUNEUP_SHARED_TRACES));
    const TraceModel original = importTrace(path.string());
    std::vector<TraceModel> job;
    job.push_back(importTrace(path.string()));
    const AdviceReport report = advise(job, tuneup::rules::builtinRules(), {});
    std::vector<Finding> findings;
    for (const Finding* f : report.ranked())
        findings.push_back(*f);
    const TraceModel back = roundTrip(original, { &report.ranks[0].steps.detection, &findings });
    EXPECT_EQ(back.kernels.size(), original.kernels.size());
    EXPECT_EQ(back.memcpys.size(), original.memcpys.size());
    EXPECT_EQ(back.memsets.size(), original.memsets.size());
    EXPECT_EQ(back.syncs.size(), original.syncs.size());
    EXPECT_EQ(back.apiCalls.size(), original.apiCalls.size());
    EXPECT_EQ(back.cpuOps.size(), original.cpuOps.size());
    EXPECT_EQ(back.gpuAnnotations.size(), original.gpuAnnotations.size());
    EXPECT_EQ(back.pythonFunctions.size(), original.pythonFunctions.size());
    size_t marks = 0;
    for (const Finding& f : findings)
        marks += f.evidence.spans.size();
    EXPECT_EQ(back.annotations.size(), original.annotations.size() + marks);
    ASSERT_FALSE(original.kernels.empty());
    for (size_t i : { size_t(0), original.kernels.size() / 2, original.kernels.size() - 1 }) {
        EXPECT_EQ(back.kernels.startNs[i], original.kernels.startNs[i]) << i;
        EXPECT_EQ(back.kernels.endNs[i], original.kernels.endNs[i]) << i;
        EXPECT_EQ(back.str(back.kernels.name[i]), original.str(original.kernels.name[i])) << i;
        EXPECT_EQ(back.kernels.apiCall[i] != kNoRow, original.kernels.apiCall[i] != kNoRow) << i;
    }
    // Same steps, same advice.
    std::vector<TraceModel> again;
    again.push_back(roundTrip(original));
    const AdviceReport reportAgain = advise(again, tuneup::rules::builtinRules(), {});
    EXPECT_EQ(reportAgain.ranks[0].steps.detection.steps.size(), report.ranks[0].steps.detection.steps.size());
    EXPECT_EQ(reportAgain.ranked().size(), report.ranked().size());
}
