// sync-batchnorm-missing and sync-batchnorm-unneeded on real traces (none of the shared ones runs SyncBatchNorm
// or a small per-GPU batch: they are the negative cases) and on synthetic ones shaped as PyTorch's profiler
// records BatchNorm and SyncBatchNorm (torch/nn/modules/_functions.py: batch_norm_stats, an all-gather,
// batch_norm_gather_stats_with_counts, batch_norm_elemt; backward: an all-reduce). Expected counts of the real
// traces were read from the JSON with a Python script: aten::batch_norm events and their first input dims.

#include "import/importer.h"
#include "rule_test_support.h"

using namespace tuneup;
using namespace tuneup::analysis;

namespace {

const char* kResnet50 = "kineto-tbplugin-testdata/tb_plugin/test/data/tracing/resnet50_newAPI_ddp/";

bool has(const std::string& text, const std::string& part) {
    return text.find(part) != std::string::npos;
}

const Finding& only(const ruletest::RuleRun& run) {
    EXPECT_EQ(run.outcome.status, RuleStatus::Raised) << run.outcome.reason;
    EXPECT_EQ(run.findings(), 1u);
    static const Finding none;
    return run.findings() ? run.outcome.findings[0] : none;
}

constexpr const char* kCudnnForward = "void cudnn::bn_fw_tr_1C11_singleread<float, 512, true, 1, 2, 0>"
                                      "(cudnn::bn_fw_tr_1C11_args<float>)";
constexpr const char* kStatistics
    = "void at::native::batch_norm_collect_statistics_kernel<InvStd, float, float, float, int>";
constexpr const char* kReduce = "void at::native::batch_norm_reduce_statistics_kernel<float, float, int>";
constexpr const char* kTransform = "void at::native::batch_norm_transform_input_kernel<float, float, float, int>";
constexpr const char* kAllGather = "ncclDevKernel_AllGather_RING_LL(ncclDevComm*, unsigned long, ncclWork*)";
constexpr const char* kAllReduce = "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevComm*, unsigned long, ncclWork*)";

struct Shape {
    int steps = 4;
    int layers = 4;
    int64_t batch = 8;
    bool sync = false;
    bool ops = true; // framework operators (else kernels only)
    bool shapes = true;
    bool kernels = true;
    std::optional<int> world = 4; // the trace's distributed info
    bool instanceNorm = false; // the plain BatchNorm ops inside aten::instance_norm, as InstanceNorm runs them
};

// Steps of 10 ms (ProfilerStep#N on thread 1). Each step: per layer, plain BatchNorm (aten::batch_norm >
// aten::cudnn_batch_norm, a cuDNN forward kernel of 20 us) or SyncBatchNorm (SyncBatchNorm > batch_norm_stats
// (10 us), nccl:all_gather (50 us), batch_norm_gather_stats_with_counts (5 us), batch_norm_elemt (10 us); in
// backward on thread 2, SyncBatchNormBackward > nccl:all_reduce (40 us)); then DDP's gradient all-reduce
// (1 ms), which is not SyncBatchNorm's.
TraceModel bnTrace(const Shape& s) {
    auto b = ruletest::syntheticTrace(s.steps, 10'000'000);
    if (s.world) b.info().worldSize = *s.world;
    const ThreadIndex main = b.thread(1, 1), autograd = b.thread(1, 2);
    uint64_t external = 1;
    const std::string input = "[[" + std::to_string(s.batch) + ",64,28,28],[64],[64],[64],[64],[],[],[],[]]";
    auto op = [&](ThreadIndex thread, const std::string& name, int64_t start, int64_t end, bool dims) {
        CpuOp o;
        o.startNs = start;
        o.endNs = end;
        o.thread = thread;
        o.name = b.intern(name);
        o.externalId = external++;
        if (dims && s.shapes) o.inputDims = b.intern(input);
        if (s.ops) b.addCpuOp(o);
        return o.externalId;
    };
    auto kernel = [&](const char* name, uint64_t externalId, int64_t start, int64_t ns) {
        if (!s.kernels) return;
        Kernel k;
        k.startNs = start;
        k.endNs = start + ns;
        k.device = 0;
        k.stream = 7;
        k.externalId = s.ops ? externalId : 0;
        k.name = b.intern(name);
        b.addKernel(k);
    };
    for (int step = 0; step < s.steps; ++step) {
        const int64_t t0 = 1'000'000 + int64_t(step) * 10'000'000;
        for (int layer = 0; layer < s.layers; ++layer) {
            const int64_t t = t0 + 100'000 + int64_t(layer) * 500'000;
            if (!s.sync) {
                if (s.instanceNorm) op(main, "aten::instance_norm", t - 5'000, t + 105'000, true);
                op(main, "aten::batch_norm", t, t + 100'000, true);
                kernel(kCudnnForward, op(main, "aten::cudnn_batch_norm", t + 10'000, t + 90'000, true), t + 20'000,
                    20'000);
                continue;
            }
            op(main, "SyncBatchNorm", t, t + 400'000, false);
            kernel(kStatistics, op(main, "aten::batch_norm_stats", t + 10'000, t + 50'000, true), t + 20'000, 10'000);
            kernel(kAllGather, op(main, "nccl:all_gather", t + 60'000, t + 150'000, false), t + 70'000, 50'000);
            kernel(kReduce, op(main, "aten::batch_norm_gather_stats_with_counts", t + 160'000, t + 200'000, false),
                t + 170'000, 5'000);
            kernel(kTransform, op(main, "aten::batch_norm_elemt", t + 210'000, t + 300'000, true), t + 220'000, 10'000);
            const int64_t back = t0 + 6'000'000 + int64_t(layer) * 500'000;
            op(autograd, "SyncBatchNormBackward", back, back + 300'000, false);
            kernel(kAllReduce, op(autograd, "nccl:all_reduce", back + 10'000, back + 100'000, false), back + 20'000,
                40'000);
        }
        kernel(kAllReduce, op(autograd, "nccl:all_reduce", t0 + 8'500'000, t0 + 9'000'000, false), t0 + 8'600'000,
            1'000'000);
    }
    return b.finish();
}

ruletest::RuleRun runOn(
    const std::string& rule, TraceModel model, const std::vector<std::pair<const char*, int64_t>>& facts = {}) {
    for (const auto& [name, value] : facts)
        ruletest::addProgramFact(model, name, value);
    std::vector<TraceModel> models;
    models.push_back(std::move(model));
    return ruletest::runRuleOnModels(rule, std::move(models));
}

} // namespace

// --- sync-batchnorm-missing ---------------------------------------------------------------------------------

TEST(SyncBatchnormMissing, FiresOnPlainBatchNormWithASmallPerGpuBatch) {
    const auto run = runOn("sync-batchnorm-missing", bnTrace({ .batch = 8 }));
    const Finding& f = only(run);
    EXPECT_EQ(f.kind, FindingKind::Correctness);
    EXPECT_EQ(f.severity, Severity::Warning);
    EXPECT_FALSE(f.gain) << "a model-quality finding claims no time";
    EXPECT_EQ(f.title,
        "16 BatchNorm calls normalise over a per-GPU batch of 8 on each of 4 processes, without "
        "SyncBatchNorm");
    EXPECT_EQ(ruletest::evidenceFact(f, "processes"), "4 (the trace's distributed info)");
    EXPECT_EQ(ruletest::evidenceFact(f, "per-GPU batch"), "8 (the input shape of BatchNorm's ops (16 of 16))");
    EXPECT_EQ(ruletest::evidenceFact(f, "SyncBatchNorm"), "none");
    EXPECT_EQ(f.evidence.eventsTotal, 16u); // aten::batch_norm, not the cudnn_batch_norm inside it
    for (const EventRef& e : f.evidence.events)
        EXPECT_EQ(run.models[0].str(run.models[0].cpuOps.name[size_t(e.row)]), "aten::batch_norm");
    EXPECT_TRUE(has(f.fixPython, "convert_sync_batchnorm(model)")) << f.fixPython;
    EXPECT_TRUE(has(f.fixCpp, "GroupNorm")) << f.fixCpp;
    EXPECT_EQ(f.sourceCalls, std::vector<std::string> { "DataLoader" });
}

TEST(SyncBatchnormMissing, ThresholdIsSixteenPerGpu) {
    EXPECT_EQ(runOn("sync-batchnorm-missing", bnTrace({ .batch = 15 })).findings(), 1u);
    const auto run = runOn("sync-batchnorm-missing", bnTrace({ .batch = 16 }));
    EXPECT_EQ(run.outcome.status, RuleStatus::Clean) << run.outcome.reason;
    EXPECT_TRUE(has(run.outcome.reason, "per-GPU batch 16")) << run.outcome.reason;
}

TEST(SyncBatchnormMissing, QuietOnResnet50DdpWithThirtyTwoPerGpu) {
    // Python: 212 aten::batch_norm per rank (53 layers x 4 steps), every input [32, C, H, W]; two rank files.
    TUNEUP_REQUIRE_SHARED_TRACE(rank0, std::string(kResnet50) + "worker0_span1.pt.trace.json.gz");
    const std::string rank1 = ruletest::sharedTrace(std::string(kResnet50) + "worker1_span1.pt.trace.json.gz");
    const auto run = ruletest::runRule("sync-batchnorm-missing", { rank0, rank1 });
    EXPECT_EQ(run.outcome.status, RuleStatus::Clean) << run.outcome.reason;
    EXPECT_EQ(run.outcome.reason,
        "per-GPU batch 32 (the input shape of BatchNorm's ops (212 of 212)), at least 16: enough samples for "
        "BatchNorm's statistics on each of 2 processes");
}

TEST(SyncBatchnormMissing, NotEvaluatedWithoutThePerGpuBatch) {
    // HTA's nccl_data: rank 0 of 2, 159 BatchNorm calls recorded without shapes.
    TUNEUP_REQUIRE_SHARED_TRACE(path, "hta/tests/data/nccl_parser_config/nccl_data.json.gz");
    const auto run = ruletest::runRule("sync-batchnorm-missing", { path });
    EXPECT_EQ(run.outcome.status, RuleStatus::NotEvaluated) << run.outcome.reason;
    EXPECT_TRUE(has(run.outcome.reason, "needs the per-GPU batch")) << run.outcome.reason;
    // The same trace with the bootstrap's batch size: a per-GPU batch of 4 fires.
    auto model = importTrace(path);
    const auto fired = runOn("sync-batchnorm-missing", std::move(model), { { "tuneup.dataloader.batch_size", 4 } });
    const Finding& f = only(fired);
    EXPECT_EQ(ruletest::evidenceFact(f, "per-GPU batch"),
        "4 (the DataLoader's batch_size (recorded by tuneup's Python bootstrap))");
    EXPECT_EQ(ruletest::evidenceFact(f, "BatchNorm"), "159 BatchNorm calls");
}

TEST(SyncBatchnormMissing, NeverOnOneProcess) {
    // HTA's ns_resolution: a DDP wrapper with world size 1, 265 BatchNorm calls.
    TUNEUP_REQUIRE_SHARED_TRACE(
        path, "hta/tests/data/ns_resolution_trace/rank-0.Apr_03_18_51_38.1102.pt.trace.json.gz");
    const auto run = ruletest::runRule("sync-batchnorm-missing", { path });
    EXPECT_EQ(run.outcome.status, RuleStatus::NotApplicable) << run.outcome.reason;
    EXPECT_TRUE(has(run.outcome.reason, "one process (the trace's distributed info)")) << run.outcome.reason;
    const auto single = runOn("sync-batchnorm-missing", bnTrace({ .batch = 2, .world = 1 }));
    EXPECT_EQ(single.outcome.status, RuleStatus::NotApplicable) << single.outcome.reason;
    // Nothing says how many: not evaluated, not guessed.
    const auto unknown = runOn("sync-batchnorm-missing", bnTrace({ .batch = 2, .world = std::nullopt }));
    EXPECT_EQ(unknown.outcome.status, RuleStatus::NotEvaluated) << unknown.outcome.reason;
    EXPECT_TRUE(has(unknown.outcome.reason, "needs the number of processes")) << unknown.outcome.reason;
}

TEST(SyncBatchnormMissing, QuietWithoutBatchNorm) {
    // TraceLens' BERT-small: LayerNorm only.
    TUNEUP_REQUIRE_SHARED_TRACE(path, "tracelens/tests/traces/h100/gaunernst_bert-small-uncased__1016001.json.gz");
    for (const char* rule : { "sync-batchnorm-missing", "sync-batchnorm-unneeded" }) {
        const auto run = ruletest::runRule(rule, { path });
        EXPECT_EQ(run.outcome.status, RuleStatus::Clean) << rule << ": " << run.outcome.reason;
        EXPECT_EQ(run.findings(), 0u) << rule;
    }
    // InstanceNorm runs aten::batch_norm over a batch of 1 (its N x C channels): not BatchNorm's statistics.
    const auto instance = runOn("sync-batchnorm-missing", bnTrace({ .batch = 1, .instanceNorm = true }));
    EXPECT_EQ(instance.outcome.status, RuleStatus::Clean) << instance.outcome.reason;
    EXPECT_EQ(instance.outcome.reason, "no BatchNorm ops or training-mode BatchNorm kernels in the trace");
}

TEST(SyncBatchnormMissing, QuietWithSyncBatchNorm) {
    const auto run = runOn("sync-batchnorm-missing", bnTrace({ .batch = 4, .sync = true }));
    EXPECT_EQ(run.outcome.status, RuleStatus::Clean) << run.outcome.reason;
    EXPECT_EQ(run.outcome.reason, "the model uses SyncBatchNorm (16 SyncBatchNorm calls)");
}

TEST(SyncBatchnormMissing, FromTheBootstrapsFacts) {
    // A tuneup recording on the CPU: no operators, no kernels; the facts of the DDP model and the DataLoader.
    const std::vector<std::pair<const char*, int64_t>> broken { { "tuneup.ddp.world_size", 2 },
        { "tuneup.ddp.batchnorm_layers", 5 }, { "tuneup.ddp.sync_batchnorm_layers", 0 },
        { "tuneup.dataloader.batch_size", 4 } };
    const auto run = runOn("sync-batchnorm-missing", ruletest::syntheticTrace(4, 10'000'000).finish(), broken);
    const Finding& f = only(run);
    EXPECT_EQ(f.title,
        "5 BatchNorm layers (recorded) normalise over a per-GPU batch of 4 on each of 2 processes, "
        "without SyncBatchNorm");
    EXPECT_EQ(ruletest::evidenceFact(f, "processes"),
        "2 (the world size DistributedDataParallel ran with (recorded by tuneup's Python bootstrap))");
    // Converted: the same program with SyncBatchNorm layers.
    const auto fixed = runOn("sync-batchnorm-missing", ruletest::syntheticTrace(4, 10'000'000).finish(),
        { { "tuneup.ddp.world_size", 2 }, { "tuneup.ddp.batchnorm_layers", 0 },
            { "tuneup.ddp.sync_batchnorm_layers", 5 }, { "tuneup.dataloader.batch_size", 4 } });
    EXPECT_EQ(fixed.outcome.status, RuleStatus::Clean) << fixed.outcome.reason;
    EXPECT_EQ(fixed.outcome.reason, "the model uses SyncBatchNorm (5 SyncBatchNorm layers (recorded))");
    // Nothing to read at all.
    const auto empty = runOn("sync-batchnorm-missing", ruletest::syntheticTrace(4, 10'000'000).finish());
    EXPECT_EQ(empty.outcome.status, RuleStatus::NotEvaluated) << empty.outcome.reason;
}

TEST(SyncBatchnormMissing, FromKernelsWithoutOperators) {
    // An nsys capture: cuDNN's training-mode forward kernels, the world size, the bootstrap's batch size.
    const auto run = runOn("sync-batchnorm-missing", bnTrace({ .batch = 8, .ops = false, .world = 2 }),
        { { "tuneup.dataloader.batch_size", 8 } });
    EXPECT_EQ(only(run).title,
        "16 training-mode BatchNorm kernels normalise over a per-GPU batch of 8 on each of 2 "
        "processes, without SyncBatchNorm");
}

// --- sync-batchnorm-unneeded --------------------------------------------------------------------------------

TEST(SyncBatchnormUnneeded, FiresOnSyncBatchNormWithALargePerGpuBatch) {
    const auto run = runOn("sync-batchnorm-unneeded", bnTrace({ .batch = 64, .sync = true }));
    const Finding& f = only(run);
    EXPECT_EQ(f.kind, FindingKind::Performance);
    EXPECT_EQ(f.title, "16 SyncBatchNorm calls share statistics across 4 processes while each GPU's batch is 64");
    EXPECT_EQ(ruletest::evidenceFact(f, "per-GPU batch"), "64 (the input shape of SyncBatchNorm's ops (16 of 16))");
    // Per step, 4 layers: the gather kernel (5 us), the all-gather (50 us) and the backward all-reduce (40 us);
    // DDP's gradient all-reduce (1 ms) is not SyncBatchNorm's.
    ASSERT_TRUE(f.gain);
    EXPECT_EQ(f.gain->perStepNs, 4 * (5'000 + 50'000 + 40'000));
    EXPECT_EQ(f.gain->confidence, "medium");
    EXPECT_EQ(f.severity, Severity::Warning); // 3.8 % of a 10 ms step
    EXPECT_EQ(ruletest::evidenceFact(f, "statistics gather kernels"), "16, 20 us per step");
    EXPECT_EQ(ruletest::evidenceFact(f, "communication kernels launched by SyncBatchNorm"), "32, 360 us per step");
    EXPECT_EQ(f.evidence.eventsTotal, 16u);
    EXPECT_TRUE(has(f.fixPython, "convert_sync_batchnorm(model)   <- remove")) << f.fixPython;
    EXPECT_TRUE(has(f.fixCpp, "LibTorch has no SyncBatchNorm")) << f.fixCpp;
}

TEST(SyncBatchnormUnneeded, ThresholdIsThirtyTwoPerGpu) {
    EXPECT_EQ(runOn("sync-batchnorm-unneeded", bnTrace({ .batch = 32, .sync = true })).findings(), 1u);
    const auto run = runOn("sync-batchnorm-unneeded", bnTrace({ .batch = 31, .sync = true }));
    EXPECT_EQ(run.outcome.status, RuleStatus::Clean) << run.outcome.reason;
    EXPECT_TRUE(has(run.outcome.reason, "per-GPU batch 31")) << run.outcome.reason;
}

TEST(SyncBatchnormUnneeded, QuietOnPlainBatchNorm) {
    TUNEUP_REQUIRE_SHARED_TRACE(rank0, std::string(kResnet50) + "worker0_span1.pt.trace.json.gz");
    const auto run = ruletest::runRule("sync-batchnorm-unneeded", { rank0 });
    EXPECT_EQ(run.outcome.status, RuleStatus::Clean) << run.outcome.reason;
    EXPECT_EQ(run.outcome.reason, "no SyncBatchNorm in the trace");
}

TEST(SyncBatchnormUnneeded, KernelsOnlyGiveALowerBound) {
    // Without operators the all-gather and all-reduce cannot be told from DDP's: the gather kernels only.
    const auto run = runOn("sync-batchnorm-unneeded", bnTrace({ .sync = true, .ops = false, .world = 2 }),
        { { "tuneup.dataloader.batch_size", 48 } });
    const Finding& f = only(run);
    ASSERT_TRUE(f.gain);
    EXPECT_EQ(f.gain->perStepNs, 4 * 5'000);
    EXPECT_EQ(f.gain->confidence, "low");
    EXPECT_EQ(f.severity, Severity::Info);
    EXPECT_EQ(ruletest::evidenceFact(f, "communication kernels launched by SyncBatchNorm"), "");
}

TEST(SyncBatchnormUnneeded, FromTheBootstrapsFactsTheTimeIsNotMeasured) {
    const std::vector<std::pair<const char*, int64_t>> facts { { "tuneup.ddp.world_size", 2 },
        { "tuneup.ddp.batchnorm_layers", 0 }, { "tuneup.ddp.sync_batchnorm_layers", 3 },
        { "tuneup.dataloader.batch_size", 64 } };
    const auto run = runOn("sync-batchnorm-unneeded", ruletest::syntheticTrace(4, 10'000'000).finish(), facts);
    const Finding& f = only(run);
    EXPECT_FALSE(f.gain);
    EXPECT_EQ(f.severity, Severity::Info);
    EXPECT_EQ(ruletest::evidenceFact(f, "time"), "not measured (no GPU kernels)");
    EXPECT_TRUE(has(f.detail, "not measured")) << f.detail;
    // One process: SyncBatchNorm runs as BatchNorm.
    const auto single = runOn("sync-batchnorm-unneeded", ruletest::syntheticTrace(4, 10'000'000).finish(),
        { { "tuneup.ddp.world_size", 1 }, { "tuneup.ddp.sync_batchnorm_layers", 3 },
            { "tuneup.dataloader.batch_size", 64 } });
    EXPECT_EQ(single.outcome.status, RuleStatus::NotApplicable) << single.outcome.reason;
    // A small batch: SyncBatchNorm is the right call.
    const auto small = runOn("sync-batchnorm-unneeded", ruletest::syntheticTrace(4, 10'000'000).finish(),
        { { "tuneup.ddp.world_size", 2 }, { "tuneup.ddp.sync_batchnorm_layers", 3 },
            { "tuneup.dataloader.batch_size", 8 } });
    EXPECT_EQ(small.outcome.status, RuleStatus::Clean) << small.outcome.reason;
}

TEST(SyncBatchnormUnneeded, NotEvaluatedWithoutAnything) {
    const auto run = runOn("sync-batchnorm-unneeded", ruletest::syntheticTrace(4, 10'000'000).finish());
    EXPECT_EQ(run.outcome.status, RuleStatus::NotEvaluated) << run.outcome.reason;
    EXPECT_TRUE(has(run.outcome.reason, "needs framework operators")) << run.outcome.reason;
}
