// GPU memory per step (steps/memory_peak.h): exact levels from the allocator's totals, rises and lower
// bounds from allocation sizes alone, which GPU is read, and a real trace (TraceLens BERT-small on an H100,
// its peak computed with Python from the JSON).

#include "import/importer.h"
#include "model/trace_builder.h"
#include "shared_traces.h"
#include "steps/memory_peak.h"

#include <filesystem>
#include <gtest/gtest.h>

using namespace tuneup::analysis;

namespace {

constexpr int64_t kMs = 1'000'000;
constexpr int64_t kGB = 1'000'000'000;
constexpr int64_t kT0 = 1'000 * kMs;

// Three 10 ms steps (ProfilerStep#0..2) with a kernel each on GPU `kernelDevice`.
TraceBuilder threeSteps(int32_t kernelDevice = 0) {
    TraceBuilder b(SourceFormat::KinetoJson, "memory.json");
    DeviceInfo gpu;
    gpu.id = 0;
    gpu.name = "NVIDIA A100-SXM4-80GB";
    gpu.computeMajor = 8;
    gpu.globalMemoryBytes = 80 * kGB;
    b.addDevice(gpu);
    const ThreadIndex t = b.thread(1, 1);
    for (int s = 0; s < 3; ++s) {
        Annotation step;
        step.startNs = kT0 + s * 10 * kMs;
        step.endNs = step.startNs + 10 * kMs;
        step.thread = t;
        step.name = b.intern("ProfilerStep#" + std::to_string(s));
        b.addAnnotation(step);
        Kernel k;
        k.startNs = step.startNs + kMs;
        k.endNs = k.startNs + 5 * kMs;
        k.device = kernelDevice;
        k.stream = 7;
        k.name = b.intern("kernel");
        b.addKernel(k);
    }
    return b;
}

void totals(TraceBuilder& b, int64_t t, int64_t allocated, int64_t reserved, int64_t delta, int32_t device = 0) {
    MemoryEvent e;
    e.timeNs = t;
    e.device = device;
    e.allocatedBytes = allocated;
    e.reservedBytes = reserved;
    e.deltaBytes = delta;
    b.addMemoryEvent(e);
}

void size(TraceBuilder& b, int64_t t, int64_t delta, MemoryTotal of = MemoryTotal::Allocated) {
    MemoryEvent e;
    e.timeNs = t;
    e.device = 0;
    e.deltaBytes = delta;
    e.deltaOf = of;
    b.addMemoryEvent(e);
}

MemoryPeaks peaksOf(const TraceModel& m) {
    return memoryPeaks(m, analyzeSteps(m));
}

} // namespace

TEST(MemoryPeak, TotalsGiveEachStepsPeakAndTheSteadyState) {
    TraceBuilder b = threeSteps();
    totals(b, kT0 - kMs, 1 * kGB, 2 * kGB, 1 * kGB); // weights, before the first step
    totals(b, kT0 + 2 * kMs, 6 * kGB, 8 * kGB, 5 * kGB); // warm-up step: a large first peak
    totals(b, kT0 + 8 * kMs, 1 * kGB, 8 * kGB, -5 * kGB);
    totals(b, kT0 + 12 * kMs, 3 * kGB, 8 * kGB, 2 * kGB); // step 1: 1 GB -> 3 -> 4 -> 1
    totals(b, kT0 + 13 * kMs, 4 * kGB, 8 * kGB, 1 * kGB);
    totals(b, kT0 + 18 * kMs, 1 * kGB, 8 * kGB, -3 * kGB);
    totals(b, kT0 + 22 * kMs, 3 * kGB, 8 * kGB, 2 * kGB); // step 2: 1 GB -> 3 -> 1.5
    totals(b, kT0 + 28 * kMs, kGB + kGB / 2, 8 * kGB, -kGB - kGB / 2);
    totals(b, kT0 + 15 * kMs, 512, 1024, 512, kHostMemory); // host memory is not the GPU's
    const TraceModel m = b.finish();
    const MemoryPeaks p = peaksOf(m);
    EXPECT_EQ(p.device, 0);
    EXPECT_EQ(p.capacityBytes, 80 * kGB);
    EXPECT_EQ(p.steps, 3u);
    EXPECT_EQ(p.firstSteadyStep, 1u);
    const MemoryTotalPeak& a = p.allocated;
    ASSERT_EQ(a.source, MemorySource::Totals);
    ASSERT_EQ(a.perStep.size(), 3u);
    EXPECT_EQ(a.perStep[0].peakBytes, 6 * kGB);
    EXPECT_EQ(a.perStep[1].peakBytes, 4 * kGB);
    EXPECT_EQ(a.perStep[1].lowBytes, 1 * kGB);
    EXPECT_EQ(a.perStep[1].riseBytes, 3 * kGB);
    EXPECT_EQ(a.perStep[2].peakBytes, 3 * kGB);
    EXPECT_EQ(a.perStep[2].riseBytes, 2 * kGB);
    // The steady state leaves the warm-up step out.
    EXPECT_TRUE(a.exact());
    EXPECT_EQ(a.peakBytes, 4 * kGB);
    EXPECT_EQ(a.peakStep, 1u);
    ASSERT_NE(a.peakRow, kNoRow);
    EXPECT_EQ(m.memoryEvents.timeNs[size_t(a.peakRow)], kT0 + 13 * kMs);
    EXPECT_EQ(a.baseBytes, 1 * kGB);
    EXPECT_EQ(a.riseBytes, 3 * kGB);
    const MemoryTotalPeak& r = p.reserved;
    ASSERT_EQ(r.source, MemorySource::Totals);
    EXPECT_EQ(r.peakBytes, 8 * kGB);
    EXPECT_EQ(r.perStep[0].riseBytes, 6 * kGB); // 2 GB before the first step, 8 GB in it
}

TEST(MemoryPeak, LevelBeforeTheFirstEventIsItsTotalWithoutItsOwnChange) {
    TraceBuilder b = threeSteps();
    totals(b, kT0 + 15 * kMs, 3 * kGB, 4 * kGB, 2 * kGB); // the first event: 1 GB before it
    const MemoryPeaks p = peaksOf(b.finish());
    EXPECT_EQ(p.allocated.perStep[0].peakBytes, 1 * kGB);
    EXPECT_EQ(p.allocated.perStep[1].peakBytes, 3 * kGB);
    EXPECT_EQ(p.allocated.perStep[1].riseBytes, 2 * kGB);
    EXPECT_EQ(p.allocated.perStep[2].peakBytes, 3 * kGB); // held since
    EXPECT_EQ(p.allocated.baseBytes, 1 * kGB);
    EXPECT_EQ(p.reserved.perStep[0].peakBytes, 4 * kGB); // no change of its own: the first total
}

TEST(MemoryPeak, SizesOnlyGiveExactRisesAndALowerBoundOnTheLevel) {
    // Running sum 100, 0 | -50, 250, -50 | 150, -50: it falls to -50, so at least 50 bytes were allocated
    // before the trace began; levels are lower bounds (the sum plus 50), rises exact.
    TraceBuilder b = threeSteps();
    size(b, kT0 + 1 * kMs, 100);
    size(b, kT0 + 2 * kMs, -100);
    size(b, kT0 + 11 * kMs, -50);
    size(b, kT0 + 12 * kMs, 300);
    size(b, kT0 + 13 * kMs, -300);
    size(b, kT0 + 21 * kMs, 200);
    size(b, kT0 + 22 * kMs, -200);
    const MemoryPeaks p = peaksOf(b.finish());
    const MemoryTotalPeak& a = p.allocated;
    ASSERT_EQ(a.source, MemorySource::Deltas);
    EXPECT_FALSE(a.exact());
    EXPECT_EQ(a.beforeTraceBytes, 50);
    EXPECT_EQ(a.perStep[0].peakBytes, 150);
    EXPECT_EQ(a.perStep[1].peakBytes, 300);
    EXPECT_EQ(a.perStep[1].riseBytes, 250); // from 50 at the step's start
    EXPECT_EQ(a.perStep[2].riseBytes, 200);
    EXPECT_EQ(a.riseBytes, 250);
    EXPECT_EQ(a.peakBytes, 300);
    EXPECT_EQ(p.reserved.source, MemorySource::None);
    EXPECT_FALSE(p.reserved.exact());
}

TEST(MemoryPeak, DriverAllocationsAreTheReservedMemory) {
    // nsys: cudaMalloc/cudaFree sizes, the caching allocator's segments.
    TraceBuilder b = threeSteps();
    size(b, kT0 + 1 * kMs, 2 * kGB, MemoryTotal::Reserved);
    size(b, kT0 + 12 * kMs, 1 * kGB, MemoryTotal::Reserved);
    const MemoryPeaks p = peaksOf(b.finish());
    EXPECT_EQ(p.allocated.source, MemorySource::None);
    ASSERT_EQ(p.reserved.source, MemorySource::Deltas);
    EXPECT_EQ(p.reserved.peakBytes, 3 * kGB);
    EXPECT_EQ(p.reserved.perStep[1].riseBytes, 1 * kGB);
}

TEST(MemoryPeak, TheStepsGpuElseTheOneWithTheMostEvents) {
    {
        TraceBuilder b = threeSteps(0);
        totals(b, kT0, 1, 1, 1, 1); // GPU 1 only: read although the kernels ran on GPU 0
        const MemoryPeaks p = peaksOf(b.finish());
        EXPECT_EQ(p.device, 1);
        EXPECT_EQ(p.capacityBytes, 0); // not described
        EXPECT_TRUE(p.any());
    }
    {
        TraceBuilder b = threeSteps(0);
        totals(b, kT0, 1, 1, 1, kHostMemory);
        const MemoryPeaks p = peaksOf(b.finish());
        EXPECT_EQ(p.device, -1);
        EXPECT_FALSE(p.any());
    }
}

TEST(MemoryPeak, RealTraceBertSmallOnH100) {
    const std::filesystem::path traces = TUNEUP_SHARED_TRACES;
    TUNEUP_REQUIRE_SHARED_TRACES(traces);
    const TraceModel m
        = importTrace((traces / "tracelens/tests/traces/h100/gaunernst_bert-small-uncased__1016001.json.gz").string());
    const StepAnalysis steps = analyzeSteps(m);
    ASSERT_EQ(steps.detection.steps.size(), 1u);
    const MemoryPeaks p = memoryPeaks(m, steps);
    EXPECT_EQ(p.device, 0);
    EXPECT_EQ(p.capacityBytes, 85018279936);
    EXPECT_EQ(p.firstSteadyStep, 0u); // one step: it is the steady state
    // Python, over the GPU's 218 [memory] events, all inside ProfilerStep#6 (user_annotation,
    // 1419247332972.313 us for 4426.114 us): the first one's total less its own size is the level before.
    ASSERT_TRUE(p.allocated.exact());
    EXPECT_EQ(p.allocated.peakBytes, 101305344);
    EXPECT_EQ(p.allocated.baseBytes, 91360768);
    ASSERT_TRUE(p.reserved.exact());
    EXPECT_EQ(p.reserved.peakBytes, 121634816);
}

namespace {

// The caching allocator as tuneup's Python bootstrap reads it after each optimizer step: its totals then
// (a memory event with no size) and its peaks since the previous reading.
void reading(TraceBuilder& b, int64_t since, int64_t t, int64_t allocated, int64_t reserved, int64_t peakAllocated,
    int64_t peakReserved, int32_t device = 0) {
    totals(b, t, allocated, reserved, 0, device);
    MemoryPeak p;
    p.startNs = since;
    p.endNs = t;
    p.device = device;
    p.allocatedBytes = peakAllocated;
    p.reservedBytes = peakReserved;
    b.addMemoryPeak(p);
}

} // namespace

TEST(MemoryPeak, TheAllocatorsPeaksCountInTheStepTheyWereReadIn) {
    TraceBuilder b = threeSteps();
    // Read at the end of each step: 1 GB stays allocated between steps, 10 GB reserved; each step's peak is
    // nowhere in the readings, only in the peaks (step 0 is the warm-up: 9 GB; then 5 and 6 GB).
    reading(b, kT0 - 100 * kMs, kT0 + 9 * kMs, 1 * kGB, 10 * kGB, 9 * kGB, 10 * kGB);
    reading(b, kT0 + 9 * kMs, kT0 + 19 * kMs, 1 * kGB, 10 * kGB, 5 * kGB, 10 * kGB);
    reading(b, kT0 + 19 * kMs, kT0 + 29 * kMs, 1 * kGB, 10 * kGB, 6 * kGB, 10 * kGB);
    const MemoryPeaks p = peaksOf(b.finish());
    EXPECT_EQ(p.device, 0);
    EXPECT_EQ(p.capacityBytes, 80 * kGB);
    ASSERT_TRUE(p.allocated.exact());
    ASSERT_EQ(p.allocated.perStep.size(), 3u);
    EXPECT_EQ(p.allocated.perStep[0].peakBytes, 9 * kGB);
    EXPECT_EQ(p.allocated.perStep[1].peakBytes, 5 * kGB);
    EXPECT_EQ(p.allocated.perStep[2].peakBytes, 6 * kGB);
    EXPECT_EQ(p.allocated.peakBytes, 6 * kGB); // the steady state: steps 1 and 2
    EXPECT_EQ(p.allocated.peakStep, 2u);
    EXPECT_EQ(p.allocated.peakRow, kNoRow) << "no event reached it: the allocator's peak";
    EXPECT_EQ(p.allocated.windowPeaks, 3u);
    EXPECT_EQ(p.allocated.baseBytes, 1 * kGB) << "the readings' levels: what stays allocated";
    EXPECT_EQ(p.allocated.perStep[1].riseBytes, 4 * kGB);
    EXPECT_EQ(p.reserved.peakBytes, 10 * kGB);
    EXPECT_TRUE(p.reserved.exact());
}

TEST(MemoryPeak, PeaksAloneAreExactButLeaveTheBaseUnknown) {
    // Peaks with no reading of the totals (reserved not read), and a cudaMalloc CUPTI saw: the peak is a level
    // the allocator reached, where the sizes alone are a lower bound.
    TraceBuilder b = threeSteps();
    size(b, kT0 + 11 * kMs, 2 * kGB, MemoryTotal::Reserved);
    for (int s = 0; s < 3; ++s) {
        MemoryPeak p;
        p.startNs = kT0 + s * 10 * kMs;
        p.endNs = p.startNs + 9 * kMs;
        p.reservedBytes = (3 + s) * kGB;
        b.addMemoryPeak(p);
    }
    const MemoryPeaks p = peaksOf(b.finish());
    EXPECT_EQ(p.allocated.source, MemorySource::None);
    ASSERT_TRUE(p.reserved.exact());
    EXPECT_EQ(p.reserved.peakBytes, 5 * kGB);
    EXPECT_EQ(p.reserved.baseBytes, -1);
    EXPECT_EQ(p.reserved.riseBytes, -1);
    EXPECT_EQ(p.reserved.beforeTraceBytes, 0);
}

TEST(MemoryPeak, PeaksReadOutsideEveryStepOrOnAnotherGpuDoNotCount) {
    TraceBuilder b = threeSteps();
    reading(b, kT0 - 20 * kMs, kT0 - 10 * kMs, 1 * kGB, 2 * kGB, 70 * kGB, 70 * kGB); // before the first step
    reading(b, kT0 + 9 * kMs, kT0 + 19 * kMs, 1 * kGB, 2 * kGB, 3 * kGB, 4 * kGB);
    reading(b, kT0 + 19 * kMs, kT0 + 29 * kMs, 1 * kGB, 2 * kGB, 60 * kGB, 60 * kGB, 1); // GPU 1
    reading(b, kT0 + 29 * kMs, kT0 + 31 * kMs, 1 * kGB, 2 * kGB, 50 * kGB, 50 * kGB); // after the last step
    const MemoryPeaks p = peaksOf(b.finish());
    EXPECT_EQ(p.device, 0);
    EXPECT_EQ(p.allocated.peakBytes, 3 * kGB);
    EXPECT_EQ(p.reserved.peakBytes, 4 * kGB);
    EXPECT_EQ(p.allocated.windowPeaks, 1u);
}
