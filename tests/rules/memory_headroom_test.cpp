// memory-headroom on built training traces (an A100 80GB, four steps with an optimizer step each and the
// caching allocator's totals in memory events), on tuneup recordings (written to a tuneup file and read back:
// the Python bootstrap's readings and peaks after each optimizer step, CUPTI's cudaMalloc calls and device) and
// on a real inference trace with memory events.

#include "export/tuneup_writer.h"
#include "import/importer.h"
#include "rule_test_support.h"
#include "temp_dir.h"

using namespace tuneup;
using namespace tuneup::analysis;

namespace {

constexpr int64_t kGB = 1'000'000'000;
constexpr int64_t kStepNs = 10'000'000;

struct Memory {
    int64_t keptBytes = 4 * kGB; // allocated between steps (weights, optimizer state)
    int64_t peakBytes = 12 * kGB; // allocated at each step's peak
    int64_t reservedBytes = 14 * kGB;
    int64_t capacityBytes = 80 * kGB;
    bool totals = true; // false: sizes only, as PyTorch before 1.10 writes them
    bool training = true; // an optimizer step in every step
    bool operators = true; // CPU operators (a tuneup copy of a Kineto trace, an nsys export: none)
    std::string kernel = "ampere_bf16_s16816gemm_bf16_128x128_ldg8_f2f_tn";
};

// Four steps on GPU 0; in each, the allocated memory rises from keptBytes to peakBytes and falls back.
TraceModel trainingTrace(const Memory& mem) {
    TraceBuilder b = ruletest::syntheticTrace(4, kStepNs);
    DeviceInfo gpu;
    gpu.id = 0;
    gpu.name = "NVIDIA A100-SXM4-80GB";
    gpu.computeMajor = 8;
    gpu.globalMemoryBytes = mem.capacityBytes;
    b.addDevice(gpu);
    const ThreadIndex thread = b.thread(1, 1);
    auto memory = [&](int64_t t, int64_t allocated, int64_t delta) {
        MemoryEvent e;
        e.timeNs = t;
        e.device = 0;
        e.deltaBytes = delta;
        e.thread = thread;
        if (mem.totals) {
            e.allocatedBytes = allocated;
            e.reservedBytes = mem.reservedBytes;
        }
        b.addMemoryEvent(e);
    };
    memory(500'000, mem.keptBytes, mem.keptBytes); // the model and optimizer state, before the first step
    for (int s = 0; s < 4; ++s) {
        const int64_t t0 = 1'000'000 + s * kStepNs;
        Kernel k;
        k.startNs = t0 + 1'000'000;
        k.endNs = t0 + 8'000'000;
        k.device = 0;
        k.stream = 7;
        k.name = b.intern(mem.kernel);
        b.addKernel(k);
        if (mem.operators) {
            CpuOp op;
            op.startNs = t0 + 900'000;
            op.endNs = t0 + 1'100'000;
            op.thread = thread;
            op.name = b.intern("aten::mm");
            b.addCpuOp(op);
        }
        memory(t0 + 2'000'000, mem.peakBytes, mem.peakBytes - mem.keptBytes); // activations
        memory(t0 + 7'000'000, mem.keptBytes, mem.keptBytes - mem.peakBytes);
        if (mem.training) {
            Annotation opt;
            opt.startNs = t0 + 8'000'000;
            opt.endNs = t0 + 9'000'000;
            opt.thread = thread;
            opt.name = b.intern("Optimizer.step#SGD.step");
            b.addAnnotation(opt);
        }
    }
    return b.finish();
}

ruletest::RuleRun run(TraceModel model) {
    std::vector<TraceModel> models;
    models.push_back(std::move(model));
    return ruletest::runRuleOnModels("memory-headroom", std::move(models));
}

} // namespace

TEST(MemoryHeadroom, FiresWithTheBatchThatFitsWhenTheBatchSizeIsKnown) {
    // 14 GB reserved of 80 GB (17.5%): 4 GB kept, 8 GB more at each peak, the allocator holding 14/12 of
    // what it allocated. Filling 85% of the GPU: (68 GB / (14/12) - 4 GB) / 8 GB = 6.79x the batch,
    // 32 * 6.79 = 217, rounded down to a multiple of 8: 216.
    TraceModel model = trainingTrace({});
    ruletest::addProgramFact(model, "tuneup.dataloader.batch_size", 32);
    const auto r = run(std::move(model));
    ASSERT_EQ(r.outcome.status, RuleStatus::Raised) << r.outcome.reason;
    const Finding& f = r.outcome.findings.at(0);
    EXPECT_NE(f.title.find("GPU memory peaks at 14 GB of 80 GB (18%) per step"), std::string::npos) << f.title;
    EXPECT_NE(f.title.find("batch 32 -> about 216 would fit"), std::string::npos) << f.title;
    EXPECT_EQ(f.severity, Severity::Info);
    EXPECT_FALSE(f.gain); // throughput, not step time: no estimate to judge
    EXPECT_EQ(ruletest::evidenceFact(f, "allocated between steps (weights, optimizer state...)"), "4 GB");
    EXPECT_EQ(ruletest::evidenceFact(f, "grows within a step (activations, temporaries)"), "8 GB");
    EXPECT_EQ(ruletest::evidenceFact(f, "memory per sample"), "250 MB");
    EXPECT_NE(ruletest::evidenceFact(f, "estimate").find("6.8x the batch: 216"), std::string::npos);
    EXPECT_NE(ruletest::evidenceFact(f, "steps").find("3 in the steady state (the first left out as warm-up)"),
        std::string::npos)
        << ruletest::evidenceFact(f, "steps");
    // The allocation that reached the peak, in the first steady step (the second), for the GUI.
    ASSERT_EQ(f.evidence.events.size(), 1u);
    EXPECT_EQ(f.evidence.events[0].table, EventTable::MemoryEvent);
    const auto& peak = r.models[0].memoryEvents;
    EXPECT_EQ(peak.allocatedBytes[size_t(f.evidence.events[0].row)], 12 * kGB);
    EXPECT_EQ(peak.timeNs[size_t(f.evidence.events[0].row)], 1'000'000 + kStepNs + 2'000'000);
    ASSERT_EQ(f.evidence.spans.size(), 1u);
    EXPECT_EQ(f.evidence.spans[0].startNs, 1'000'000 + kStepNs);
    EXPECT_EQ(f.evidence.spans[0].durationNs(), kStepNs);
    // The advice: scale the learning rate, warm up, large-batch optimizers; the batch in the fix.
    EXPECT_NE(f.detail.find("scale the learning rate"), std::string::npos);
    EXPECT_NE(f.detail.find("LARS"), std::string::npos);
    EXPECT_NE(f.fixPython.find("base_batch, base_lr = 32, 0.1"), std::string::npos) << f.fixPython;
    EXPECT_NE(f.fixPython.find("batch = 216"), std::string::npos) << f.fixPython;
    EXPECT_NE(f.fixPython.find("LinearLR"), std::string::npos);
    EXPECT_NE(f.fixCpp.find("batch = 216"), std::string::npos) << f.fixCpp;
}

TEST(MemoryHeadroom, FiresWithAFactorWhenTheBatchSizeIsUnknown) {
    const auto r = run(trainingTrace({}));
    ASSERT_EQ(r.outcome.status, RuleStatus::Raised) << r.outcome.reason;
    const Finding& f = r.outcome.findings.at(0);
    EXPECT_NE(f.title.find("about 6.8x the batch would fit"), std::string::npos) << f.title;
    EXPECT_EQ(ruletest::evidenceFact(f, "batch size"), "not recorded in the trace");
    EXPECT_EQ(ruletest::evidenceFact(f, "memory per sample"), "");
    EXPECT_NE(f.fixPython.find("batch = int(base_batch * 6.8)"), std::string::npos) << f.fixPython;
}

TEST(MemoryHeadroom, QuietWhenMemoryIsNearFull) {
    Memory mem;
    mem.keptBytes = 30 * kGB;
    mem.peakBytes = 66 * kGB;
    mem.reservedBytes = 70 * kGB; // 87.5% of the GPU
    const auto r = run(trainingTrace(mem));
    EXPECT_EQ(r.outcome.status, RuleStatus::Clean);
    EXPECT_NE(r.outcome.reason.find("70 GB of 80 GB (88%, reserved), above the 50%"), std::string::npos)
        << r.outcome.reason;
    // Just over the threshold is quiet too.
    mem.reservedBytes = 41 * kGB;
    mem.peakBytes = 40 * kGB;
    EXPECT_EQ(run(trainingTrace(mem)).outcome.status, RuleStatus::Clean);
}

TEST(MemoryHeadroom, NotEvaluatedWhenTheCapacityIsUnknown) {
    Memory mem;
    mem.capacityBytes = 0;
    const auto r = run(trainingTrace(mem));
    EXPECT_EQ(r.outcome.status, RuleStatus::NotEvaluated);
    EXPECT_NE(r.outcome.reason.find("needs the GPU's memory capacity"), std::string::npos) << r.outcome.reason;
}

TEST(MemoryHeadroom, NotEvaluatedWhenThePeakIsUnknown) {
    // Sizes only: each step rises 8 GB, but what was allocated before the trace began is unknown.
    Memory mem;
    mem.totals = false;
    const auto sizes = run(trainingTrace(mem));
    EXPECT_EQ(sizes.outcome.status, RuleStatus::NotEvaluated);
    EXPECT_NE(sizes.outcome.reason.find("needs the allocator's totals"), std::string::npos) << sizes.outcome.reason;
    EXPECT_NE(sizes.outcome.reason.find("up to 8 GB here"), std::string::npos) << sizes.outcome.reason;
    // No memory events at all (the steps' trace as recorded without profile_memory).
    TraceBuilder b = ruletest::syntheticTrace(4, kStepNs);
    const auto none = run(b.finish());
    EXPECT_EQ(none.outcome.status, RuleStatus::NotEvaluated);
    EXPECT_NE(none.outcome.reason.find("GPU memory events"), std::string::npos) << none.outcome.reason;
}

TEST(MemoryHeadroom, QuietWhenNothingGrowsWithinAStep) {
    Memory mem;
    mem.peakBytes = mem.keptBytes; // static buffers: nothing to scale
    const auto r = run(trainingTrace(mem));
    EXPECT_EQ(r.outcome.status, RuleStatus::Clean);
    EXPECT_NE(r.outcome.reason.find("cannot be told"), std::string::npos) << r.outcome.reason;
}

TEST(MemoryHeadroom, InferenceTracesAreNotTraining) {
    // Built: operators but no backward pass and no optimizer step.
    Memory mem;
    mem.training = false;
    const auto built = run(trainingTrace(mem));
    EXPECT_EQ(built.outcome.status, RuleStatus::NotApplicable) << built.outcome.reason;
    EXPECT_NE(built.outcome.reason.find("no backward pass or optimizer step"), std::string::npos);
    // TraceLens BERT-small fill-mask inference on an H100 80GB with profile_memory: Python over its
    // [memory] events: Total Reserved peaks at 121634816 bytes of totalGlobalMem 85018279936.
    TUNEUP_REQUIRE_SHARED_TRACE(path, "tracelens/tests/traces/h100/gaunernst_bert-small-uncased__1016001.json.gz");
    const auto r = ruletest::runRule("memory-headroom", { path });
    EXPECT_EQ(r.outcome.status, RuleStatus::NotApplicable) << r.outcome.reason;
    EXPECT_NE(r.outcome.reason.find("inference"), std::string::npos) << r.outcome.reason;
    EXPECT_NE(r.outcome.reason.find("122 MB of 85 GB (0.1%, reserved)"), std::string::npos) << r.outcome.reason;
}

TEST(MemoryHeadroom, NotEvaluatedWhenTrainingCannotBeTold) {
    // No operators, no optimizer range, no bootstrap fact: a tuneup copy of an inference trace, or an nsys export.
    Memory mem;
    mem.training = false;
    mem.operators = false;
    const auto unknown = run(trainingTrace(mem));
    EXPECT_EQ(unknown.outcome.status, RuleStatus::NotEvaluated) << unknown.outcome.reason;
    EXPECT_NE(unknown.outcome.reason.find("whether this is training cannot be told"), std::string::npos);
    // A backward convolution's kernel says it is.
    mem.kernel = "sm80_xmma_dgrad_implicit_gemm_indexed_f16f16_f16f32_f32_nhwckrsc_nchw_tilesize128x128x32";
    EXPECT_EQ(run(trainingTrace(mem)).findings(), 1u);
}

// ---- tuneup recordings --------------------------------------------------------------------------------

namespace {

// What `tuneup record -- python train.py` writes on an H100 80GB: five iterations of zero_grad, forward and
// backward, then Optimizer.step, after which the bootstrap reads the caching allocator (its totals then, its
// peaks since the previous reading) and resets the peaks; CUPTI's cudaMalloc calls as the cache grows in the
// first iteration; the device CUPTI describes. Written as a tuneup file and read back, as advise reads it.
struct Recording {
    int64_t keptBytes = 2 * kGB; // allocated after each optimizer step: weights, gradients, optimizer state
    int64_t peakBytes = 10 * kGB; // each iteration's allocated peak (activations), never at a reading
    int64_t reservedBytes = 12 * kGB;
    int64_t capacityBytes = 85'020'000'000; // H100 80GB HBM3's totalGlobalMem
    bool device = true; // CUPTI described the GPU (not on a machine without one)
};

ruletest::RuleRun runRecording(const Recording& rec, const tuneup::test::TempDir& dir) {
    TraceBuilder b(SourceFormat::TuneupDb, "run.db");
    if (rec.device) {
        DeviceInfo gpu;
        gpu.id = 0;
        gpu.name = "NVIDIA H100 80GB HBM3";
        gpu.computeMajor = 9;
        gpu.smCount = 132;
        gpu.globalMemoryBytes = rec.capacityBytes;
        b.addDevice(gpu);
    }
    const ThreadIndex main = b.thread(4242, 4242);
    const auto range = [&](int64_t start, int64_t end, const std::string& name) {
        Annotation a;
        a.startNs = start, a.endNs = end, a.thread = main, a.name = b.intern(name);
        b.addAnnotation(a);
    };
    MemoryEvent cudaMalloc; // CUPTI: the cache growing in the first iteration, 6 GB at a time
    cudaMalloc.device = 0, cudaMalloc.deltaOf = MemoryTotal::Reserved, cudaMalloc.deltaBytes = rec.reservedBytes / 2;
    int64_t since = 500'000;
    for (int s = 0; s < 5; ++s) {
        const int64_t t0 = 1'000'000 + s * kStepNs;
        range(t0, t0 + 100'000, "Optimizer.zero_grad#SGD.zero_grad");
        range(t0 + 200'000, t0 + 3'000'000, "tuneup.forward#ResNet");
        range(t0 + 3'100'000, t0 + 8'000'000, "tuneup.backward");
        if (s == 0)
            for (int64_t at : { t0 + 1'000'000, t0 + 4'000'000 }) {
                cudaMalloc.timeNs = at;
                cudaMalloc.address = uint64_t(at);
                b.addMemoryEvent(cudaMalloc);
            }
        Kernel k;
        k.startNs = t0 + 300'000, k.endNs = t0 + 8'500'000, k.device = 0, k.stream = 7;
        k.name = b.intern("sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1");
        b.addKernel(k);
        range(t0 + 8'000'000, t0 + 9'000'000, "Optimizer.step#SGD.step");
        const int64_t read = t0 + 9'000'100;
        MemoryEvent totals; // the reading's levels: no size
        totals.timeNs = read, totals.device = 0, totals.allocatedBytes = rec.keptBytes;
        totals.reservedBytes = rec.reservedBytes, totals.thread = main;
        b.addMemoryEvent(totals);
        MemoryPeak peak;
        peak.startNs = since, peak.endNs = read, peak.device = 0, peak.thread = main;
        peak.allocatedBytes = rec.peakBytes, peak.reservedBytes = rec.reservedBytes;
        b.addMemoryPeak(peak);
        since = read + 2'000;
    }
    const std::string file = dir.path() + "/run" + std::to_string(rec.reservedBytes) + ".db";
    writeTuneupFile(b.finish(), file);
    return ruletest::runRule("memory-headroom", { file });
}

} // namespace

TEST(MemoryHeadroom, FiresOnARecordingWithItsPeaksWellUnderTheCapacity) {
    const tuneup::test::TempDir dir("memory_headroom_recording");
    const auto r = runRecording({}, dir);
    ASSERT_EQ(r.outcome.status, RuleStatus::Raised) << r.outcome.reason;
    ASSERT_EQ(r.models.size(), 1u);
    EXPECT_EQ(r.models[0].info.format, SourceFormat::TuneupDb);
    EXPECT_EQ(r.models[0].memoryPeaks.size(), 5u);
    const Finding& f = r.outcome.findings.at(0);
    // 12 GB reserved of 85 GB (14%): 2 GB kept, 8 GB more at each peak (read only as the allocator's peak),
    // the allocator holding 12/10 of its peak: (0.85 * 85.02 GB / 1.2 - 2 GB) / 8 GB = 7.28x the batch.
    EXPECT_NE(f.title.find("GPU memory peaks at 12 GB of 85 GB (14%) per step: about 7.3x the batch would fit"),
        std::string::npos)
        << f.title;
    EXPECT_EQ(ruletest::evidenceFact(f, "steady-state peak allocated"), "10 GB");
    EXPECT_EQ(ruletest::evidenceFact(f, "allocated between steps (weights, optimizer state...)"), "2 GB");
    EXPECT_EQ(ruletest::evidenceFact(f, "grows within a step (activations, temporaries)"), "8 GB");
    EXPECT_NE(ruletest::evidenceFact(f, "read from").find("max_memory_allocated"), std::string::npos);
    EXPECT_NE(ruletest::evidenceFact(f, "steps").find("4 in the steady state"), std::string::npos)
        << ruletest::evidenceFact(f, "steps");
    EXPECT_NE(f.detail.find("peaks, read after each optimizer step, reach 12 GB of 85 GB"), std::string::npos)
        << f.detail;
    EXPECT_TRUE(f.evidence.events.empty()) << "a peak the allocator kept is no event of the trace";
    ASSERT_EQ(f.evidence.spans.size(), 1u);

    // With the DataLoader's batch size (the bootstrap's fact): the batch that fits.
    TraceModel model = importTrace(dir.path() + "/run12000000000.db");
    ruletest::addProgramFact(model, "tuneup.dataloader.batch_size", 64);
    const auto batch = run(std::move(model));
    ASSERT_EQ(batch.outcome.status, RuleStatus::Raised) << batch.outcome.reason;
    EXPECT_NE(batch.outcome.findings.at(0).title.find("batch 64 -> about 464 would fit"), std::string::npos)
        << batch.outcome.findings.at(0).title;
}

TEST(MemoryHeadroom, QuietOnARecordingNearlyFull) {
    const tuneup::test::TempDir dir("memory_headroom_recording_full");
    Recording rec;
    rec.keptBytes = 20 * kGB;
    rec.peakBytes = 70 * kGB;
    rec.reservedBytes = 76 * kGB; // 89% of the GPU
    const auto r = runRecording(rec, dir);
    EXPECT_EQ(r.outcome.status, RuleStatus::Clean) << r.outcome.reason;
    EXPECT_NE(r.outcome.reason.find("76 GB of 85 GB (89%, reserved), above the 50%"), std::string::npos)
        << r.outcome.reason;
}

TEST(MemoryHeadroom, NotEvaluatedOnARecordingWithoutTheGpusCapacity) {
    // The bootstrap's readings without CUPTI's device record: the peak is known, the headroom is not.
    const tuneup::test::TempDir dir("memory_headroom_recording_nodevice");
    Recording rec;
    rec.device = false;
    const auto r = runRecording(rec, dir);
    EXPECT_EQ(r.outcome.status, RuleStatus::NotEvaluated);
    EXPECT_NE(r.outcome.reason.find("needs the GPU's memory capacity"), std::string::npos) << r.outcome.reason;
}
