// sync-in-loop on real traces and synthetic ones. Expected figures were derived with a Python script
// over the JSON, independently of the importer: GPU idle gaps (kernels, copies and sets of the busiest
// device) inside ProfilerStep ranges that open while the host is inside a blocking call
// (cuda*Synchronize or cudaMemcpy; merged; 2 us of clock slack), less DataLoader-wait overlap.

#include "rule_test_support.h"

using namespace tuneup;
using namespace tuneup::analysis;

namespace {

std::string factStartingWith(const Finding& f, const std::string& prefix) {
    for (const auto& [k, v] : f.evidence.facts)
        if (k.starts_with(prefix)) return k + ": " + v;
    return {};
}

} // namespace

TEST(SyncInLoop, FiresOnDlrmBlockingCopies) {
    // Python, per rank (one step each): 10 cudaStreamSynchronize in the step, all under aten::to >
    // aten::_to_copy > aten::copy_; GPU idle after them 441, 443, 414, 427, 453, 476, 398, 413 us.
    struct Case {
        const char* file;
        int64_t idleNs;
    };
    for (const Case& c :
        { Case { "worker0_step_12.1694128201545", 441'000 }, Case { "worker1_step_12.1694128201556", 443'000 },
            Case { "worker2_step_12.1694128201554", 414'000 }, Case { "worker7_step_12.1694128201553", 413'000 } }) {
        TUNEUP_REQUIRE_SHARED_TRACE(
            path, std::string("param/et_replay/tests/inputs/dlrm_kineto/") + c.file + ".pt.trace.json");
        const auto run = ruletest::runRule("sync-in-loop", { path });
        ASSERT_EQ(run.outcome.status, RuleStatus::Raised) << c.file << ": " << run.outcome.reason;
        const Finding& f = run.outcome.findings[0];
        EXPECT_EQ(f.evidence.eventsTotal, 10u) << c.file;
        ASSERT_TRUE(f.gain);
        EXPECT_NEAR(double(f.gain->perStepNs), double(c.idleNs), 1'000) << c.file;
        EXPECT_EQ(f.severity, Severity::Warning);
        EXPECT_NE(f.title.find("10.0 host-GPU synchronisations per step"), std::string::npos) << f.title;
        EXPECT_NE(f.title.find("aten::to (blocking copy to the GPU)"), std::string::npos) << f.title;
        EXPECT_NE(f.fixPython.find("non_blocking=True"), std::string::npos);
        EXPECT_NE(f.fixPython.find("set_sync_debug_mode"), std::string::npos);
        // Each cause with the host's time blocked per step.
        const std::string cause = factStartingWith(f, "aten::to (blocking copy to the GPU)");
        EXPECT_NE(cause.find(" per step); per step the host blocked "), std::string::npos) << cause;
        EXPECT_NE(cause.find(" and the GPU idled after them "), std::string::npos) << cause;
    }
}

TEST(SyncInLoop, FiresOnEventSyncTraceAndIgnoresEventQuery) {
    // Python: in ProfilerStep#100, cudaStreamSynchronize (inside aten::is_nonzero > aten::item),
    // cudaEventSynchronize and cudaDeviceSynchronize; one idle gap of 81 us opens in the event sync.
    // Its second "Event Sync" record belongs to cudaEventQuery, which does not block.
    TUNEUP_REQUIRE_SHARED_TRACE(path, "hta/tests/data/critical_path/cuda_event_sync/event_sync_trace.json.gz");
    const auto run = ruletest::runRule("sync-in-loop", { path });
    ASSERT_EQ(run.outcome.status, RuleStatus::Raised) << run.outcome.reason;
    const Finding& f = run.outcome.findings[0];
    EXPECT_EQ(f.evidence.eventsTotal, 3u);
    ASSERT_TRUE(f.gain);
    EXPECT_EQ(f.gain->perStepNs, 81'000);
    EXPECT_NE(f.title.find("cudaEventSynchronize"), std::string::npos) << f.title;
    EXPECT_NE(factStartingWith(f, "aten::is_nonzero").find("1 x"), std::string::npos);
}

TEST(SyncInLoop, QuietOnRecommendationModelCopiesDuringItsGraphReplays) {
    // negative_queue_length rank0: Python finds 29.3 ms of GPU idle opening while the host sits in a
    // synchronisation (blocking aten::to copies) over 5 steps, 29.1 ms of it between the nodes of CUDA graph
    // replays the host had queued before: the graph's own gaps, not the copies' doing. The 249 us left are
    // 49.8 us per step, far under the threshold.
    TUNEUP_REQUIRE_SHARED_TRACE(path, "hta/tests/data/negative_queue_length_values_check/rank0.json.gz");
    const auto run = ruletest::runRule("sync-in-loop", { path });
    EXPECT_EQ(run.outcome.status, RuleStatus::Clean) << run.outcome.reason;
    EXPECT_NE(run.outcome.reason.find("75 synchronisations inside 5 steps"), std::string::npos) << run.outcome.reason;
    EXPECT_NE(run.outcome.reason.find("the GPU idles after them for 49.8 us per step"), std::string::npos)
        << run.outcome.reason;
}

TEST(SyncInLoop, QuietWhenSynchronisationsCostNothing) {
    // Python: ResNet-50 DDP rank 0 has 3 cudaStreamSynchronize (loss.item()) in its 4 steps and no GPU
    // idle opens in them; trace_diff/test 60 in 6 steps, 0.01 ms; nccl_data 24 cudaEventSynchronize
    // inside DistributedDataParallel.forward while the GPU is already idle.
    for (const char* file :
        { "kineto-tbplugin-testdata/tb_plugin/test/data/tracing/resnet50_newAPI_ddp/worker0_span1.pt.trace.json.gz",
            "hta/tests/data/trace_diff/test/test.json.gz", "hta/tests/data/nccl_parser_config/nccl_data.json.gz" }) {
        TUNEUP_REQUIRE_SHARED_TRACE(path, file);
        const auto run = ruletest::runRule("sync-in-loop", { path });
        EXPECT_EQ(run.outcome.status, RuleStatus::Clean) << file << ": " << run.outcome.reason;
    }
    TUNEUP_REQUIRE_SHARED_TRACE(nccl, "hta/tests/data/nccl_parser_config/nccl_data.json.gz");
    const auto run = ruletest::runRule("sync-in-loop", { nccl });
    EXPECT_NE(run.outcome.reason.find("24 synchronisations inside 3 steps"), std::string::npos) << run.outcome.reason;
}

TEST(SyncInLoop, WithoutStepsTheWholeWindowIsEvaluated) {
    // No step ranges: the 19.9 ms window is one span; its one synchronisation idles the GPU 13 us.
    TUNEUP_REQUIRE_SHARED_TRACE(
        path, "hta/tests/data/critical_path/cuda_event_sync_multi_stream/event_sync_trace.json.gz");
    const auto run = ruletest::runRule("sync-in-loop", { path });
    EXPECT_EQ(run.report.ranks[0].steps.detection.source, StepSource::WholeWindow);
    EXPECT_EQ(run.outcome.status, RuleStatus::Clean) << run.outcome.reason;
    EXPECT_NE(run.outcome.reason.find("1 synchronisations inside 1 steps"), std::string::npos) << run.outcome.reason;
}

namespace {

// Synthetic: 4 steps of 10 ms on thread 1. Each step: a forward kernel [0.1, 4 ms); the host calls
// aten::item at `itemAtNs` (cudaMemcpyAsync DtoH of 4 bytes + cudaStreamSynchronize until the kernel
// ends), then launches the next kernel, which starts at 5 ms and runs to 9.5 ms.
TraceModel syntheticItem(int64_t itemAtNs, bool withSync = true) {
    auto b = ruletest::syntheticTrace(4, 10'000'000);
    const ThreadIndex thread = b.thread(1, 1);
    uint64_t correlation = 1, external = 1;
    for (int s = 0; s < 4; ++s) {
        const int64_t t0 = 1'000'000 + s * 10'000'000;
        Kernel fwd;
        fwd.startNs = t0 + 100'000;
        fwd.endNs = t0 + 4'000'000;
        fwd.device = 0;
        fwd.name = b.intern("volta_sgemm_128x64_nn");
        b.addKernel(fwd);
        CpuOp item;
        item.startNs = t0 + itemAtNs;
        item.endNs = std::max(t0 + 4'010'000, item.startNs + 20'000);
        item.thread = thread;
        item.name = b.intern("aten::item");
        item.externalId = external;
        b.addCpuOp(item);
        CpuOp dense = item;
        dense.startNs += 1'000;
        dense.endNs -= 1'000;
        dense.name = b.intern("aten::_local_scalar_dense");
        dense.externalId = external + 1;
        b.addCpuOp(dense);
        ApiCall copy;
        copy.startNs = dense.startNs + 1'000;
        copy.endNs = copy.startNs + 5'000;
        copy.thread = thread;
        copy.name = b.intern("cudaMemcpyAsync");
        copy.correlation = correlation++;
        copy.externalId = dense.externalId;
        b.addApiCall(copy);
        Memcpy m;
        m.startNs = std::max(fwd.endNs, copy.startNs + 2'000); // after the kernel it reads
        m.endNs = m.startNs + 1'000;
        m.device = 0;
        m.bytes = 4;
        m.copyKind = CopyKind::DtoH;
        m.srcKind = MemoryKind::Device;
        m.dstKind = MemoryKind::Pageable;
        m.correlation = copy.correlation;
        m.externalId = dense.externalId;
        b.addMemcpy(m);
        if (withSync) {
            ApiCall sync;
            sync.startNs = copy.endNs;
            sync.endNs = std::max(t0 + 4'003'000, sync.startNs + 2'000);
            sync.thread = thread;
            sync.name = b.intern("cudaStreamSynchronize");
            sync.correlation = correlation++;
            sync.externalId = dense.externalId;
            b.addApiCall(sync);
        }
        Kernel next;
        next.startNs = t0 + 5'000'000;
        next.endNs = t0 + 9'500'000;
        next.device = 0;
        next.name = b.intern("volta_sgemm_128x64_nn");
        b.addKernel(next);
        external += 2;
    }
    return b.finish();
}

} // namespace

TEST(SyncInLoop, SyntheticItemEveryStepFires) {
    // .item() called at 1 ms: the host waits until the kernel ends at 4 ms (plus the 1 us copy); the
    // GPU then idles from 4.001 ms to 5 ms: 999 us per step, 10%.
    std::vector<TraceModel> models;
    models.push_back(syntheticItem(1'000'000));
    const auto run = ruletest::runRuleOnModels("sync-in-loop", std::move(models));
    ASSERT_EQ(run.findings(), 1u) << run.outcome.reason;
    const Finding& f = run.outcome.findings[0];
    ASSERT_TRUE(f.gain);
    EXPECT_EQ(f.gain->perStepNs, 999'000);
    EXPECT_EQ(f.evidence.eventsTotal, 4u);
    EXPECT_NE(f.title.find("1.0 host-GPU synchronisations per step"), std::string::npos) << f.title;
    EXPECT_NE(f.title.find("aten::item (reads a GPU scalar"), std::string::npos) << f.title;
    EXPECT_NE(f.fixPython.find("running_loss += loss.detach()"), std::string::npos);
    EXPECT_NE(f.fixCpp.find("item<float>()"), std::string::npos);
}

TEST(SyncInLoop, SyntheticSyncStartingInsideAnOpenGapIsNotItsCause) {
    // .item() called at 4.5 ms, when the GPU has been idle since 4 ms: the gap was not caused by it.
    std::vector<TraceModel> models;
    models.push_back(syntheticItem(4'500'000));
    const auto run = ruletest::runRuleOnModels("sync-in-loop", std::move(models));
    EXPECT_EQ(run.outcome.status, RuleStatus::Clean) << run.outcome.reason;
    EXPECT_NE(run.outcome.reason.find("4 synchronisations inside 4 steps"), std::string::npos) << run.outcome.reason;
}

TEST(SyncInLoop, SyntheticNotEvaluatedWithoutApiCallsOrSyncRecords) {
    auto b = ruletest::syntheticTrace(3, 10'000'000);
    for (int s = 0; s < 3; ++s) {
        Kernel k;
        k.startNs = 1'000'000 + s * 10'000'000;
        k.endNs = k.startNs + 1'000'000;
        k.device = 0;
        k.name = b.intern("volta_sgemm_128x64_nn");
        b.addKernel(k);
    }
    std::vector<TraceModel> models;
    models.push_back(b.finish());
    const auto run = ruletest::runRuleOnModels("sync-in-loop", std::move(models));
    EXPECT_EQ(run.outcome.status, RuleStatus::NotEvaluated);
    EXPECT_NE(run.outcome.reason.find("API calls or synchronization records"), std::string::npos) << run.outcome.reason;
}
