// Step detection (steps/step_detector.h) on small traces built with the TraceBuilder: each source of
// steps in its order of preference, and the edge cases of ranges (nested, overlapping, zero-length, a
// single step) and of the repeating kernel pattern.

#include "model/trace_builder.h"
#include "steps/step_detector.h"

#include <gtest/gtest.h>
#include <string>
#include <utility>
#include <vector>

using namespace tuneup::analysis;

namespace {

constexpr int64_t kMs = 1'000'000;

class Trace {
public:
    // A range on the training thread, from `startMs` to `endMs`.
    Trace& range(const std::string& name, double startMs, double endMs) {
        Annotation a;
        a.startNs = int64_t(startMs * kMs);
        a.endNs = int64_t(endMs * kMs);
        a.thread = m_thread;
        a.name = m_builder.intern(name);
        m_builder.addAnnotation(a);
        return *this;
    }
    Trace& kernel(const std::string& name, int64_t startNs, int64_t durationNs = 1000) {
        Kernel k;
        k.startNs = startNs;
        k.endNs = startNs + durationNs;
        k.device = 0;
        k.stream = 7;
        k.name = m_builder.intern(name);
        m_builder.addKernel(k);
        return *this;
    }
    // `steps` repetitions of `pattern`, one kernel every 10 us.
    Trace& kernels(const std::vector<std::string>& pattern, int steps) {
        for (int s = 0; s < steps; ++s)
            for (const std::string& name : pattern)
                kernel(name, m_nextKernelNs += 10'000);
        return *this;
    }
    TraceModel model() { return m_builder.finish(); }

private:
    TraceBuilder m_builder { SourceFormat::KinetoJson, "synthetic" };
    ThreadIndex m_thread = m_builder.thread(1, 1);
    int64_t m_nextKernelNs = 0;
};

struct Span {
    int64_t number, startNs, endNs;
    bool operator==(const Span&) const = default;
};
std::ostream& operator<<(std::ostream& out, const Span& s) {
    return out << "#" << s.number << " [" << s.startNs << ", " << s.endNs << ")";
}

std::vector<Span> spans(const StepDetection& d) {
    std::vector<Span> out;
    for (const Step& s : d.steps)
        out.push_back({ s.number, s.startNs, s.endNs });
    return out;
}

TEST(StepDetector, ProfilerStepRangesGiveTheirNumbers) {
    TraceModel m = Trace()
                       .range("ProfilerStep#5", 1, 11)
                       .range("ProfilerStep#6", 11, 23)
                       .range("ProfilerStep#7", 23, 30)
                       .model();
    const StepDetection d = detectSteps(m);
    EXPECT_EQ(d.source, StepSource::ProfilerStep);
    EXPECT_EQ(d.detail, "ProfilerStep");
    EXPECT_EQ(spans(d),
        (std::vector<Span> { { 5, 1 * kMs, 11 * kMs }, { 6, 11 * kMs, 23 * kMs }, { 7, 23 * kMs, 30 * kMs } }));
    for (const Step& s : d.steps) {
        ASSERT_NE(s.annotation, kNoRow);
        EXPECT_EQ(m.annotations.startNs[size_t(s.annotation)], s.startNs);
        EXPECT_EQ(m.str(m.annotations.name[size_t(s.annotation)]), "ProfilerStep#" + std::to_string(s.number));
    }
    EXPECT_EQ(d.steps[1].durationNs(), 12 * kMs);
}

TEST(StepDetector, ASingleStepIsAStep) {
    TraceModel m = Trace().range("ProfilerStep#0", 2, 9).model();
    const StepDetection d = detectSteps(m);
    EXPECT_EQ(d.source, StepSource::ProfilerStep);
    EXPECT_EQ(spans(d), (std::vector<Span> { { 0, 2 * kMs, 9 * kMs } }));
}

TEST(StepDetector, NestedAndOverlappingRangesKeepTheFirstOuterOne) {
    // The profiler's own ProfilerStep#3 holds a user's inner one; #4 starts before #3 ends (a clock
    // glitch or a second thread) and is left out rather than counted twice.
    TraceModel m = Trace()
                       .range("ProfilerStep#3", 0, 10)
                       .range("ProfilerStep#3", 2, 8)
                       .range("ProfilerStep#4", 9, 20)
                       .range("ProfilerStep#5", 20, 30)
                       .model();
    const StepDetection d = detectSteps(m);
    EXPECT_EQ(spans(d), (std::vector<Span> { { 3, 0, 10 * kMs }, { 5, 20 * kMs, 30 * kMs } }));
}

TEST(StepDetector, ZeroLengthRangesAreNoSteps) {
    TraceModel m = Trace().range("ProfilerStep#1", 5, 5).range("ProfilerStep#2", 6, 16).model();
    EXPECT_EQ(spans(detectSteps(m)), (std::vector<Span> { { 2, 6 * kMs, 16 * kMs } }));
    // Only zero-length ranges: no ProfilerStep steps at all, nothing else to find, and a window of no length.
    TraceModel none = Trace().range("ProfilerStep#1", 5, 5).model();
    const StepDetection d = detectSteps(none);
    EXPECT_EQ(d.source, StepSource::None);
    EXPECT_TRUE(d.steps.empty());
    EXPECT_NE(d.detail.find("--step-range"), std::string::npos) << d.detail;
}

TEST(StepDetector, NamesMatchExactlyOrWithAHashSuffix) {
    // "ProfilerStep" alone counts; "ProfilerStepper", "MyProfilerStep#1" do not; a suffix that is no
    // number keeps the step's index.
    TraceModel m = Trace()
                       .range("MyProfilerStep#1", 0, 100)
                       .range("ProfilerStep", 1, 2)
                       .range("ProfilerStepper", 3, 4)
                       .range("ProfilerStep#warmup", 5, 6)
                       .range("ProfilerStep#9", 7, 8)
                       .model();
    EXPECT_EQ(spans(detectSteps(m)),
        (std::vector<Span> { { 0, 1 * kMs, 2 * kMs }, { 1, 5 * kMs, 6 * kMs }, { 9, 7 * kMs, 8 * kMs } }));
}

TEST(StepDetector, AStepNumberTooLongForAnIntegerKeepsTheIndex) {
    TraceModel m = Trace().range("ProfilerStep#99999999999999999999999", 1, 2).range("ProfilerStep#12", 3, 4).model();
    StepDetection d;
    ASSERT_NO_THROW(d = detectSteps(m));
    EXPECT_EQ(spans(d), (std::vector<Span> { { 0, 1 * kMs, 2 * kMs }, { 12, 3 * kMs, 4 * kMs } }));
}

TEST(StepDetector, SourcesInTheirOrderOfPreference) {
    // ProfilerStep#N over the bootstrap's tuneup.step over "step".
    auto trace = [](Trace&& t) -> Trace&& { return std::move(t.range("step#0", 0, 10).range("step#1", 10, 20)); };
    TraceModel plain = trace(Trace()).model();
    EXPECT_EQ(detectSteps(plain).source, StepSource::StepRange);
    EXPECT_EQ(detectSteps(plain).detail, "step#0");

    TraceModel bootstrap = trace(Trace()).range("tuneup.step#4", 0, 9).range("tuneup.step#5", 10, 19).model();
    const StepDetection b = detectSteps(bootstrap);
    EXPECT_EQ(b.source, StepSource::BootstrapRange);
    EXPECT_EQ(spans(b), (std::vector<Span> { { 4, 0, 9 * kMs }, { 5, 10 * kMs, 19 * kMs } }));

    TraceModel profiler = trace(Trace()).range("tuneup.step#4", 0, 9).range("ProfilerStep#1", 1, 8).model();
    EXPECT_EQ(detectSteps(profiler).source, StepSource::ProfilerStep);
    EXPECT_EQ(detectSteps(profiler).steps.size(), 1u);
}

TEST(StepDetector, TheUserRangeWinsAndSaysWhenItIsAbsent) {
    TraceModel m = Trace()
                       .range("ProfilerStep#0", 0, 30)
                       .range("train_iter#3", 1, 9)
                       .range("train_iter#4", 10, 19)
                       .range("train_iter", 20, 29)
                       .model();
    const StepDetection d = detectSteps(m, "train_iter");
    EXPECT_EQ(d.source, StepSource::UserRange);
    EXPECT_EQ(d.detail, "train_iter");
    EXPECT_EQ(spans(d),
        (std::vector<Span> { { 3, 1 * kMs, 9 * kMs }, { 4, 10 * kMs, 19 * kMs }, { 2, 20 * kMs, 29 * kMs } }));

    // A name that is not in the trace: no steps, and no fallback to what would otherwise be found.
    const StepDetection absent = detectSteps(m, "iteration");
    EXPECT_EQ(absent.source, StepSource::UserRange);
    EXPECT_TRUE(absent.steps.empty());
    EXPECT_EQ(absent.detail, "no range named \"iteration\" in the trace");
}

TEST(StepDetector, IterationRangesAsPeopleNameThem) {
    // Whatever the case, the word alone, with '#', or with separators and a number (which numbers the step).
    for (const auto& [name, number] : std::vector<std::pair<std::string, int64_t>> { { "Step", 0 }, { "step 12", 12 },
             { "Step_12", 12 }, { "iteration 7", 7 }, { "Iteration_7", 7 }, { "iteration[7,39)", 7 },
             { "iter 7 - overlap", 7 }, { "train_step", 0 }, { "Training Step 3", 3 }, { "step#warmup", 0 } }) {
        const StepDetection d = detectSteps(Trace().range(name, 1, 2).model());
        EXPECT_EQ(d.source, StepSource::StepRange) << name;
        EXPECT_EQ(d.detail, name);
        EXPECT_EQ(spans(d), (std::vector<Span> { { number, 1 * kMs, 2 * kMs } })) << name;
    }
    // Words that begin like one are not iterations.
    for (const std::string name :
        { "step_size", "stepper", "iterator", "iteration_count", "Optimizer.step", "my_step 3", "steps", "step -" }) {
        EXPECT_EQ(detectSteps(Trace().range(name, 1, 2).model()).source, StepSource::WholeWindow) << name;
    }
    // A micro-batch range inside its iteration: the iteration is the step.
    const StepDetection nested = detectSteps(Trace()
                                                 .range("iteration_0", 0, 10)
                                                 .range("iteration_0_ga_step_0", 1, 4)
                                                 .range("iteration_0_ga_step_1", 5, 9)
                                                 .range("iteration_1", 10, 20)
                                                 .model());
    EXPECT_EQ(spans(nested), (std::vector<Span> { { 0, 0, 10 * kMs }, { 1, 10 * kMs, 20 * kMs } }));
}

TEST(StepDetector, FrameworkRangesMarkIterations) {
    // PyTorch Lightning's profiler wraps each training batch.
    const StepDetection lightning = detectSteps(Trace()
                                                    .range("[pl][profile]run_training_batch", 1, 9)
                                                    .range("[pl][profile]run_training_batch", 10, 19)
                                                    .range("Optimizer.step#SGD.step", 5, 6)
                                                    .model());
    EXPECT_EQ(lightning.source, StepSource::FrameworkRanges);
    EXPECT_EQ(spans(lightning), (std::vector<Span> { { 0, 1 * kMs, 9 * kMs }, { 1, 10 * kMs, 19 * kMs } }));

    // FSDP2's root pre-forward opens each iteration: steps run from one to the next, the last to the end.
    const StepDetection fsdp = detectSteps(Trace()
                                               .range("FSDP::root_pre_forward", 2, 3)
                                               .range("FSDP::pre_forward", 3, 4)
                                               .range("FSDP::root_pre_forward", 12, 13)
                                               .range("FSDP::post_backward", 18, 30)
                                               .model());
    EXPECT_EQ(fsdp.source, StepSource::FrameworkMarks);
    EXPECT_EQ(spans(fsdp), (std::vector<Span> { { 0, 2 * kMs, 12 * kMs }, { 1, 12 * kMs, 30 * kMs } }));
    EXPECT_TRUE(lastStepRunsToTheEnd(fsdp.source));
    EXPECT_FALSE(lastStepRunsToTheEnd(lightning.source));

    // DeepSpeed: ZeRO-3's optimizer step over the engine's forward (a micro-batch with gradient accumulation).
    auto deepspeed = [](bool zero3) {
        Trace t;
        for (int i = 0; i < 3; ++i)
            t.range("DeepSpeedEngine.forward", 10 * i, 10 * i + 3)
                .range("DeepSpeedEngine.backward", 10 * i + 3, 10 * i + 8);
        if (zero3)
            t.range("DeepSpeedZeroOptimizer_Stage3.step", 8, 9).range("DeepSpeedZeroOptimizer_Stage3.step", 28, 29);
        return t.model();
    };
    const StepDetection forward = detectSteps(deepspeed(false));
    EXPECT_EQ(forward.source, StepSource::FrameworkMarks);
    EXPECT_NE(forward.detail.find("micro-batch"), std::string::npos);
    EXPECT_EQ(forward.steps.size(), 3u);
    const StepDetection zero3 = detectSteps(deepspeed(true));
    EXPECT_EQ(spans(zero3), (std::vector<Span> { { 0, 8 * kMs, 28 * kMs }, { 1, 28 * kMs, 29 * kMs } }));

    // The optimizer's own ranges come first: they bound whole iterations.
    const StepDetection optimizer = detectSteps(Trace()
                                                    .range("FSDP::root_pre_forward", 2, 3)
                                                    .range("Optimizer.step#AdamW.step", 8, 9)
                                                    .range("FSDP::root_pre_forward", 12, 13)
                                                    .range("Optimizer.step#AdamW.step", 18, 19)
                                                    .model());
    EXPECT_EQ(optimizer.source, StepSource::OptimizerRanges);
}

TEST(StepDetector, OptimizerRangesBoundStepsUpToTheTracesEnd) {
    // Three zero_grad calls: steps from each to the next, the last to the end of the trace's activity.
    TraceModel m = Trace()
                       .range("forward", 0, 4)
                       .range("Optimizer.zero_grad#SGD.zero_grad", 5, 6)
                       .range("Optimizer.zero_grad#SGD.zero_grad", 15, 16)
                       .range("Optimizer.zero_grad#SGD.zero_grad", 25, 26)
                       .range("Optimizer.step#SGD.step", 12, 14)
                       .range("backward", 27, 40)
                       .model();
    const StepDetection d = detectSteps(m);
    EXPECT_EQ(d.source, StepSource::OptimizerRanges);
    EXPECT_EQ(d.detail, "Optimizer.zero_grad");
    EXPECT_EQ(spans(d),
        (std::vector<Span> { { 0, 5 * kMs, 15 * kMs }, { 1, 15 * kMs, 25 * kMs }, { 2, 25 * kMs, 40 * kMs } }));
}

TEST(StepDetector, OptimizerStepRangesWhenZeroGradOccursOnce) {
    TraceModel m = Trace()
                       .range("Optimizer.zero_grad#Adam.zero_grad", 0, 1)
                       .range("Optimizer.step#Adam.step", 8, 10)
                       .range("Optimizer.step#Adam.step", 18, 20)
                       .model();
    const StepDetection d = detectSteps(m);
    EXPECT_EQ(d.source, StepSource::OptimizerRanges);
    EXPECT_EQ(d.detail, "Optimizer.step");
    EXPECT_EQ(spans(d), (std::vector<Span> { { 0, 8 * kMs, 18 * kMs }, { 1, 18 * kMs, 20 * kMs } }));
}

TEST(StepDetector, OneOptimizerCallIsNoStepPattern) {
    TraceModel m = Trace().range("Optimizer.step#SGD.step", 8, 10).model();
    EXPECT_EQ(detectSteps(m).source, StepSource::WholeWindow);
}

TEST(StepDetector, TheRepeatingKernelPatternMarksEachStep) {
    // Six iterations of forward, backward and optimizer kernels: "gemm" and "relu" recur inside an
    // iteration (at irregular distances); the others come once per iteration, and of those the first,
    // "embedding", marks the steps (whichever order a hash map holds them in).
    const std::vector<std::string> iteration
        = { "embedding", "gemm", "relu", "gemm", "relu", "softmax", "gemm_bwd", "relu_bwd", "sgd" };
    TraceModel m = Trace().kernels(iteration, 6).model();
    const StepDetection d = detectSteps(m);
    ASSERT_EQ(d.source, StepSource::KernelPattern);
    ASSERT_EQ(d.steps.size(), 5u) << "steps run from one marker to the next";
    const int64_t period = int64_t(iteration.size()) * 10'000;
    for (size_t i = 0; i < d.steps.size(); ++i) {
        EXPECT_EQ(d.steps[i].number, int64_t(i));
        EXPECT_EQ(d.steps[i].startNs, 10'000 + int64_t(i) * period);
        EXPECT_EQ(d.steps[i].durationNs(), period);
        EXPECT_EQ(d.steps[i].annotation, kNoRow);
    }
}

TEST(StepDetector, NoKernelPatternInTooFewOrIrregularKernels) {
    // Seven kernels: too few to tell a pattern.
    TraceModel few = Trace().kernels({ "a", "b", "c", "d", "e", "f", "g" }, 1).model();
    EXPECT_EQ(detectSteps(few).source, StepSource::WholeWindow);

    // A name at irregular distances (1, 5, 2, 7, ... kernels apart) is no step marker.
    Trace irregular;
    int64_t t = 0;
    int group = 0;
    for (const int gap : { 1, 5, 2, 7, 3, 6, 4, 8 }) {
        irregular.kernel("marker", t += 10'000);
        for (int i = 0; i < gap; ++i)
            irregular.kernel("once" + std::to_string(group) + "_" + std::to_string(i), t += 10'000);
        ++group;
    }
    TraceModel m = irregular.model();
    EXPECT_EQ(detectSteps(m).source, StepSource::WholeWindow);

    // A period shorter than four kernels is a loop inside a step, not a step.
    TraceModel shortPeriod = Trace().kernels({ "x", "y", "z" }, 6).model();
    EXPECT_EQ(detectSteps(shortPeriod).source, StepSource::WholeWindow);
}

TEST(StepDetector, RangesWinOverTheKernelPattern) {
    const std::vector<std::string> iteration = { "embedding", "gemm", "relu", "gemm", "sgd" };
    TraceModel m = Trace().kernels(iteration, 6).range("step", 0, 1).model();
    EXPECT_EQ(detectSteps(m).source, StepSource::StepRange);
}

TEST(StepDetector, SourceNames) {
    EXPECT_EQ(stepSourceName(StepSource::ProfilerStep), "ProfilerStep#N ranges");
    EXPECT_EQ(stepSourceName(StepSource::KernelPattern), "the repeating kernel pattern");
    EXPECT_EQ(stepSourceName(StepSource::None), "none");
    // Each source has a name of its own: the reports tell them apart by it.
    std::vector<std::string_view> names;
    for (StepSource s : { StepSource::UserRange, StepSource::ProfilerStep, StepSource::BootstrapRange,
             StepSource::StepRange, StepSource::OptimizerRanges, StepSource::KernelPattern, StepSource::None,
             StepSource::WholeWindow, StepSource::FrameworkRanges, StepSource::FrameworkMarks }) {
        for (std::string_view seen : names)
            EXPECT_NE(seen, stepSourceName(s));
        names.push_back(stepSourceName(s));
    }
}

} // namespace
