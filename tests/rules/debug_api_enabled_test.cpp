// debug-api-enabled: quiet on real traces (none was recorded with a debugging API on; counts checked
// with a JSON script), positive cases on synthetic traces for each API and each kind of evidence.

#include "rule_test_support.h"

using namespace tuneup;
using namespace tuneup::analysis;

namespace {

constexpr int kSteps = 2;
constexpr int64_t kStepNs = 20'000'000;

ruletest::RuleRun run(TraceBuilder& b) {
    std::vector<TraceModel> models;
    models.push_back(b.finish());
    return ruletest::runRuleOnModels("debug-api-enabled", std::move(models));
}

CpuOp op(TraceBuilder& b, ThreadIndex thread, std::string_view name, int64_t start, int64_t duration) {
    CpuOp o;
    o.startNs = start;
    o.endNs = start + duration;
    o.thread = thread;
    o.name = b.intern(name);
    return o;
}

// Backward passes on the autograd thread: `nodes` nodes per step, each in an evaluate_function range
// (or, `legacy`, a top-level node as in traces before PyTorch 1.10), the first `checked` of them
// followed by anomaly mode's NaN check: isnan (20 us), _is_any_true (10 us), item (50 us).
TraceBuilder backwardTrace(int nodes, int checked, bool legacy = false) {
    auto b = ruletest::syntheticTrace(kSteps, kStepNs);
    const ThreadIndex autograd = b.thread(1, 2);
    for (int s = 0; s < kSteps; ++s) {
        int64_t t = 1'000'000 + s * kStepNs + 5'000'000;
        for (int n = 0; n < nodes; ++n) {
            const int64_t rangeStart = t;
            if (!legacy) t += 5'000;
            b.addCpuOp(op(b, autograd, "MulBackward0", t, 100'000));
            t += 110'000;
            if (n < checked) {
                b.addCpuOp(op(b, autograd, "aten::isnan", t, 20'000));
                b.addCpuOp(op(b, autograd, "aten::_is_any_true", t + 20'000, 10'000));
                b.addCpuOp(op(b, autograd, "aten::item", t + 30'000, 50'000));
                b.addCpuOp(op(b, autograd, "aten::_local_scalar_dense", t + 35'000, 40'000));
                t += 80'000;
            }
            if (!legacy)
                b.addCpuOp(op(b, autograd, "autograd::engine::evaluate_function: MulBackward0", rangeStart,
                    t + 5'000 - rangeStart));
            t += 10'000;
        }
    }
    return b;
}

void addFlag(TraceBuilder& b, std::string_view name, int64_t value) {
    FrameworkFlag f;
    f.timeNs = 1'500'000;
    f.name = b.intern(name);
    f.value = value;
    b.addFrameworkFlag(f);
}

void addFrames(TraceBuilder& b, std::string_view name, int count, int64_t start, int64_t duration) {
    const ThreadIndex thread = b.thread(1, 1);
    for (int i = 0; i < count; ++i) {
        PythonFunction f;
        f.startNs = start + i * (duration + 1'000);
        f.endNs = f.startNs + duration;
        f.thread = thread;
        f.name = b.intern(name);
        b.addPythonFunction(f);
    }
}

} // namespace

TEST(DebugApiEnabled, QuietOnRealTraces) {
    // resnet_kineto: 4020 "autograd::engine::evaluate_function: ..." ranges, no aten::isnan, 90
    // user_annotation ranges (counted with a JSON script over the file).
    TUNEUP_REQUIRE_SHARED_TRACE(resnet, "param/et_replay/tests/inputs/resnet_kineto.json.gz");
    const auto a = ruletest::runRule("debug-api-enabled", { resnet });
    EXPECT_EQ(a.outcome.status, RuleStatus::Clean) << a.outcome.reason;
    EXPECT_NE(a.outcome.reason.find("4020 backward nodes without anomaly-mode NaN checks"), std::string::npos)
        << a.outcome.reason;
    EXPECT_NE(a.outcome.reason.find("torch settings not recorded"), std::string::npos) << a.outcome.reason;

    // H100 BERT with_stack: 1385 python_function frames, 21 of them the profiler's own (torch/profiler,
    // torch/autograd/profiler.py), none of anomaly_mode or gradcheck: the trace's profiler is not a finding.
    TUNEUP_REQUIRE_SHARED_TRACE(bert, "tracelens/tests/traces/h100/gaunernst_bert-small-uncased__1016001.json.gz");
    const auto b = ruletest::runRule("debug-api-enabled", { bert });
    EXPECT_EQ(b.outcome.status, RuleStatus::Clean) << b.outcome.reason;
    EXPECT_NE(b.outcome.reason.find("1385 Python frames, no gradcheck"), std::string::npos) << b.outcome.reason;

    // DDP traces of 2020 (backward nodes at the top level) and 2023 (evaluate_function ranges).
    for (const char* relative :
        { "kineto-tbplugin-testdata/tb_plugin/test/data/tracing/resnet50_newAPI_ddp/worker0_span1.pt.trace.json.gz",
            "hta/tests/data/trace_diff/control/control.json.gz",
            "hta/tests/data/negative_queue_length_values_check/rank0.json.gz" }) {
        TUNEUP_REQUIRE_SHARED_TRACE(path, relative);
        const auto r = ruletest::runRule("debug-api-enabled", { path });
        EXPECT_EQ(r.outcome.status, RuleStatus::Clean) << relative << ": " << r.outcome.reason;
    }
}

TEST(DebugApiEnabled, SyntheticAnomalyNanChecksFire) {
    auto b = backwardTrace(50, 50);
    const auto r = run(b);
    ASSERT_EQ(r.outcome.status, RuleStatus::Raised) << r.outcome.reason;
    ASSERT_EQ(r.findings(), 1u);
    const Finding& f = r.outcome.findings[0];
    EXPECT_EQ(f.evidence.eventsTotal, 100u);
    ASSERT_TRUE(f.gain);
    EXPECT_EQ(f.gain->perStepNs, 50 * 80'000); // 50 checks of 80 us (isnan .. end of item) per step
    EXPECT_EQ(f.gain->confidence, "medium");
    EXPECT_GE(f.severity, Severity::Warning);
    EXPECT_NE(f.title.find("50 NaN checks per step"), std::string::npos) << f.title;
    EXPECT_NE(f.fixPython.find("set_detect_anomaly(False)"), std::string::npos);
    EXPECT_NE(f.fixCpp.find("AnomalyMode::set_enabled(false)"), std::string::npos);
}

TEST(DebugApiEnabled, SyntheticLegacyAnomalyNanChecksFire) {
    // A 2020-style trace: no evaluate_function ranges, the checks follow top-level backward nodes.
    auto b = backwardTrace(40, 40, true);
    const auto r = run(b);
    ASSERT_EQ(r.findings(), 1u) << r.outcome.reason;
    EXPECT_EQ(r.outcome.findings[0].evidence.eventsTotal, 80u);
}

TEST(DebugApiEnabled, SyntheticIsnanInOneCustomBackwardIsQuiet) {
    // 2 of 50 nodes call isnan (a custom backward, not the engine checking every node).
    auto b = backwardTrace(50, 2);
    const auto r = run(b);
    EXPECT_EQ(r.outcome.status, RuleStatus::Clean) << r.outcome.reason;
}

TEST(DebugApiEnabled, SyntheticFlagsFire) {
    // Torch settings from a tuneup recording: anomaly on and the profiler on.
    auto b = ruletest::syntheticTrace(kSteps, kStepNs);
    b.info().format = SourceFormat::TuneupDb;
    addFlag(b, "autograd.anomaly", 1);
    addFlag(b, "profiler.enabled", 1);
    const auto r = run(b);
    ASSERT_EQ(r.findings(), 2u) << r.outcome.reason;
    EXPECT_NE(r.outcome.findings[0].title.find("anomaly detection"), std::string::npos);
    EXPECT_FALSE(r.outcome.findings[0].gain); // not measured from the setting alone
    EXPECT_NE(r.outcome.findings[1].title.find("profiler"), std::string::npos);
    EXPECT_EQ(r.outcome.findings[1].severity, Severity::Warning);

    // Settings off: clean, and the reason says they were read.
    auto off = ruletest::syntheticTrace(kSteps, kStepNs);
    off.info().format = SourceFormat::TuneupDb;
    addFlag(off, "autograd.anomaly", 0);
    addFlag(off, "profiler.enabled", 0);
    const auto c = run(off);
    EXPECT_EQ(c.outcome.status, RuleStatus::Clean);
    EXPECT_NE(c.outcome.reason.find("profiler.enabled off"), std::string::npos) << c.outcome.reason;
}

TEST(DebugApiEnabled, SyntheticProfilerFlagInKinetoTraceIsNotAFinding) {
    // A Kineto trace exists because the profiler ran: that is no finding about the script.
    auto b = ruletest::syntheticTrace(kSteps, kStepNs);
    addFlag(b, "profiler.enabled", 1);
    EXPECT_EQ(run(b).outcome.status, RuleStatus::Clean);
}

TEST(DebugApiEnabled, SyntheticEmitNvtxRangesFire) {
    auto b = ruletest::syntheticTrace(kSteps, kStepNs);
    const ThreadIndex thread = b.thread(1, 1);
    for (int i = 0; i < 300; ++i) {
        Annotation a;
        a.startNs = 1'000'000 + i * 100'000;
        a.endNs = a.startNs + 50'000;
        a.thread = thread;
        a.name = b.intern(i % 2 ? "aten::mm, seq = " + std::to_string(i) + ", sizes = [[64, 128], [128, 256]]"
                                : "aten::relu, op_id = " + std::to_string(i));
        b.addAnnotation(a);
    }
    const auto r = run(b);
    ASSERT_EQ(r.findings(), 1u) << r.outcome.reason;
    const Finding& f = r.outcome.findings[0];
    EXPECT_EQ(f.evidence.eventsTotal, 300u);
    ASSERT_TRUE(f.gain);
    EXPECT_EQ(f.gain->perStepNs, 150 * 1'000); // 150 ranges per step, ~1 us each
    EXPECT_NE(f.title.find("emit_nvtx"), std::string::npos);
}

TEST(DebugApiEnabled, SyntheticPythonStacks) {
    // gradcheck frames: the time inside them is the gain.
    auto g = ruletest::syntheticTrace(kSteps, kStepNs);
    addFrames(g, "torch/autograd/gradcheck.py(1890): gradcheck", 2, 2'000'000, 3'000'000);
    const auto a = run(g);
    ASSERT_EQ(a.findings(), 1u) << a.outcome.reason;
    ASSERT_TRUE(a.outcome.findings[0].gain);
    EXPECT_EQ(a.outcome.findings[0].gain->perStepNs, 3'000'000); // 2 calls of 3 ms over 2 steps
    EXPECT_EQ(a.outcome.findings[0].gain->confidence, "high");

    // anomaly_mode.py alone may be set_detect_anomaly(False): quiet.
    auto alone = ruletest::syntheticTrace(kSteps, kStepNs);
    addFrames(alone, "torch/autograd/anomaly_mode.py(110): __init__", 1, 2'000'000, 10'000);
    EXPECT_EQ(run(alone).outcome.status, RuleStatus::Clean);

    // ... with a stack capture per autograd node: anomaly mode is on.
    auto on = ruletest::syntheticTrace(kSteps, kStepNs);
    addFrames(on, "torch/autograd/anomaly_mode.py(110): __init__", 1, 2'000'000, 10'000);
    addFrames(on, "torch/fx/traceback.py(60): format_stack", 40, 3'000'000, 20'000);
    const auto c = run(on);
    ASSERT_EQ(c.findings(), 1u) << c.outcome.reason;
    EXPECT_NE(c.outcome.findings[0].title.find("anomaly detection is on"), std::string::npos);
}

TEST(DebugApiEnabled, NotEvaluatedWithoutAnyEvidenceSource) {
    // Kernels only: no settings, operators, ranges or Python stacks to look at.
    TraceBuilder b(SourceFormat::KinetoJson, "synthetic");
    Kernel k;
    k.startNs = 1'000;
    k.endNs = 2'000;
    k.device = 0;
    k.name = b.intern("volta_sgemm_128x64_nn");
    b.addKernel(k);
    const auto r = run(b);
    EXPECT_EQ(r.outcome.status, RuleStatus::NotEvaluated);
    EXPECT_NE(r.outcome.reason.find("needs torch settings"), std::string::npos) << r.outcome.reason;
}
