// data-parallel: quiet on every real DDP trace (one GPU per process); no real nn.DataParallel trace
// exists, so the positive cases are synthetic.

#include "rule_test_support.h"

using namespace tuneup;
using namespace tuneup::analysis;

namespace {

constexpr int kSteps = 3;
constexpr int64_t kStepNs = 20'000'000;
const char* const kForwardKernels[] = { "volta_sgemm_128x64_nn", "vectorized_elementwise_kernel<relu>",
    "volta_sgemm_64x64_nt", "reduce_kernel<sum>", "vectorized_elementwise_kernel<add>" };

void addKernel(TraceBuilder& b, int32_t device, int64_t start, int64_t duration, std::string_view name) {
    Kernel k;
    k.startNs = start;
    k.endNs = start + duration;
    k.device = device;
    k.stream = 7;
    k.name = b.intern(name);
    b.addKernel(k);
}

// `devices` GPUs; each step every GPU runs the same 5 forward/backward kernels 4 times (a replica),
// GPU 0 also the loss and the optimizer (2 ms). With `markers`, the step has a DataParallel.forward
// range, BroadcastBackward / ReduceAddCoalescedBackward nodes, an NCCL broadcast and peer copies on GPU 0.
TraceModel dataParallelTrace(int devices, bool markers, bool sameKernels = true) {
    auto b = ruletest::syntheticTrace(kSteps, kStepNs);
    const ThreadIndex thread = b.thread(1, 1);
    for (int s = 0; s < kSteps; ++s) {
        const int64_t t0 = 1'000'000 + s * kStepNs;
        if (markers) {
            Annotation fwd;
            fwd.startNs = t0 + 100'000;
            fwd.endNs = t0 + 8'000'000;
            fwd.thread = thread;
            fwd.name = b.intern("DataParallel.forward");
            b.addAnnotation(fwd);
            for (const char* node :
                { "BroadcastBackward", "autograd::engine::evaluate_function: ReduceAddCoalescedBackward" }) {
                CpuOp op;
                op.startNs = t0 + 12'000'000;
                op.endNs = op.startNs + 300'000;
                op.thread = thread;
                op.name = b.intern(node);
                b.addCpuOp(op);
            }
            addKernel(b, 0, t0 + 200'000, 400'000, "ncclKernel_Broadcast_RING_LL_Sum_int8_t(ncclWorkElem)");
            Memcpy peer;
            peer.startNs = t0 + 700'000;
            peer.endNs = peer.startNs + 300'000;
            peer.device = 0;
            peer.bytes = 4'000'000;
            peer.copyKind = CopyKind::PtoP;
            peer.srcKind = MemoryKind::Device;
            peer.dstKind = MemoryKind::Device;
            b.addMemcpy(peer);
        }
        for (int d = 0; d < devices; ++d) {
            int64_t t = t0 + 1'000'000;
            for (int rep = 0; rep < 4; ++rep)
                for (const char* name : kForwardKernels) {
                    const std::string n
                        = sameKernels ? std::string(name) : std::string(name) + "_stage" + std::to_string(d);
                    addKernel(b, d, t, 500'000, n);
                    t += 550'000;
                }
            if (d == 0) addKernel(b, 0, t, 2'000'000, "multi_tensor_apply_kernel<SGD>");
        }
    }
    return b.finish();
}

ruletest::RuleRun run(TraceModel model) {
    std::vector<TraceModel> models;
    models.push_back(std::move(model));
    return ruletest::runRuleOnModels("data-parallel", std::move(models));
}

} // namespace

TEST(DataParallel, QuietOnEveryRealDdpTrace) {
    // MANIFEST.md: every DDP trace must stay silent (one process per GPU, DistributedDataParallel).
    const std::vector<std::vector<std::string>> jobs = {
        { "hta/tests/data/ns_resolution_trace/rank-0.Apr_03_18_51_38.1102.pt.trace.json.gz" },
        { "hta/tests/data/nccl_parser_config/nccl_data.json.gz" },
        { "hta/tests/data/trace_diff/control/control.json.gz" },
        { "hta/tests/data/trace_diff/test/test.json.gz" },
        { "kineto-tbplugin-testdata/tb_plugin/test/data/tracing/bert_newAPI_fp16_ddp_4dataloader/"
          "worker0_round1.pt.trace.json.gz",
            "kineto-tbplugin-testdata/tb_plugin/test/data/tracing/bert_newAPI_fp16_ddp_4dataloader/"
            "worker1_round1.pt.trace.json.gz" },
        { "kineto-tbplugin-testdata/tb_plugin/test/data/tracing/resnet50_newAPI_ddp/worker0_span1.pt.trace.json.gz",
            "kineto-tbplugin-testdata/tb_plugin/test/data/tracing/resnet50_newAPI_ddp/worker1_span1.pt.trace.json.gz" },
        { "param/et_replay/tests/inputs/dlrm_kineto/worker0_step_12.1694128201545.pt.trace.json",
            "param/et_replay/tests/inputs/dlrm_kineto/worker1_step_12.1694128201556.pt.trace.json",
            "param/et_replay/tests/inputs/dlrm_kineto/worker2_step_12.1694128201554.pt.trace.json",
            "param/et_replay/tests/inputs/dlrm_kineto/worker3_step_12.1694128201557.pt.trace.json",
            "param/et_replay/tests/inputs/dlrm_kineto/worker4_step_12.1694128201547.pt.trace.json",
            "param/et_replay/tests/inputs/dlrm_kineto/worker5_step_12.1694128201549.pt.trace.json",
            "param/et_replay/tests/inputs/dlrm_kineto/worker6_step_12.1694128201553.pt.trace.json",
            "param/et_replay/tests/inputs/dlrm_kineto/worker7_step_12.1694128201553.pt.trace.json" },
    };
    for (const auto& job : jobs) {
        std::vector<std::string> paths;
        for (const auto& relative : job) {
            TUNEUP_REQUIRE_SHARED_TRACE(path, relative);
            paths.push_back(path);
        }
        const auto r = ruletest::runRule("data-parallel", paths);
        ASSERT_EQ(r.report.outcomes.size(), paths.size());
        for (const RuleOutcome& o : r.report.outcomes)
            EXPECT_EQ(o.status, RuleStatus::Clean) << job.front() << ": " << o.reason;
    }
}

TEST(DataParallel, SyntheticFiresOnOneProcessDrivingFourGpus) {
    const auto r = run(dataParallelTrace(4, true));
    ASSERT_EQ(r.outcome.status, RuleStatus::Raised) << r.outcome.reason;
    ASSERT_EQ(r.findings(), 1u);
    const Finding& f = r.outcome.findings[0];
    EXPECT_NE(f.title.find("4 GPUs"), std::string::npos) << f.title;
    EXPECT_NE(f.title.find("torchrun --nproc-per-node 4"), std::string::npos) << f.title;
    EXPECT_NE(f.fixPython.find("torchrun --nproc-per-node 4 train.py"), std::string::npos);
    EXPECT_NE(f.fixPython.find("DDP(model.to(local_rank), device_ids=[local_rank])"), std::string::npos);
    EXPECT_NE(f.fixCpp.find("ProcessGroupNCCL"), std::string::npos);
    EXPECT_GE(f.severity, Severity::Warning);
    EXPECT_EQ(f.evidence.eventsTotal, 3u * kSteps); // DataParallel.forward + 2 replication nodes per step
    ASSERT_TRUE(f.gain);
    // Per step on GPU 0: 400 us broadcast + 300 us peer copy, plus half of its 2.4 ms extra busy time
    // (2 ms optimizer + 0.4 ms broadcast over the others' 10 ms of kernels).
    EXPECT_EQ(f.gain->perStepNs, 700'000 + 1'200'000);
    EXPECT_EQ(f.gain->confidence, "low");
}

TEST(DataParallel, SyntheticRecordedWrappingIsEvidence) {
    const std::string label = "model wrapped in torch.nn.DataParallel (recorded)";
    EXPECT_EQ(ruletest::evidenceFact(run(dataParallelTrace(4, true)).outcome.findings.at(0), label), "");
    TraceModel model = dataParallelTrace(4, true);
    ruletest::addProgramFact(model, "tuneup.wrap.data_parallel", 1);
    const auto r = run(std::move(model));
    ASSERT_EQ(r.findings(), 1u) << r.outcome.reason;
    EXPECT_EQ(ruletest::evidenceFact(r.outcome.findings[0], label), "yes");
}

TEST(DataParallel, SyntheticReplicasWithoutMarkersFire) {
    // A kernel-only recording: no ranges, but GPU 1 runs a replica of GPU 0's kernels.
    const auto r = run(dataParallelTrace(2, false));
    ASSERT_EQ(r.outcome.status, RuleStatus::Raised) << r.outcome.reason;
    EXPECT_NE(r.outcome.findings[0].fixPython.find("torchrun --nproc-per-node 2 train.py"), std::string::npos);
}

TEST(DataParallel, SyntheticModelParallelIsQuiet) {
    // Two GPUs with different kernels and no DataParallel markers: model parallelism.
    const auto r = run(dataParallelTrace(2, false, false));
    EXPECT_EQ(r.outcome.status, RuleStatus::Clean);
    EXPECT_NE(r.outcome.reason.find("model parallelism"), std::string::npos) << r.outcome.reason;
}

TEST(DataParallel, SyntheticSingleGpuWrapperIsQuiet) {
    // nn.DataParallel around a model on one GPU costs little: no finding, but the reason says so.
    const auto r = run(dataParallelTrace(1, true));
    EXPECT_EQ(r.outcome.status, RuleStatus::Clean);
    EXPECT_NE(r.outcome.reason.find("only one GPU"), std::string::npos) << r.outcome.reason;
}

TEST(DataParallel, NotEvaluatedWithoutKernels) {
    auto b = ruletest::syntheticTrace(2, kStepNs);
    const auto r = run(b.finish());
    EXPECT_EQ(r.outcome.status, RuleStatus::NotEvaluated);
}
