// low-gpu-utilization: small kernels and launch-bound steps: the GPU idles between kernels while the
// CPU launches the next one. See low-gpu-utilization.md.

#include "all_rules.h"
#include "launch_profile.h"

#include <algorithm>
#include <cstdio>

namespace tuneup::rules {

using namespace analysis;

namespace {

class LowGpuUtilization final : public Rule {
public:
    const RuleInfo& info() const override {
        static const RuleInfo info { "low-gpu-utilization", "Launch-bound steps: small kernels, idle GPU",
            "Small kernels and a GPU that idles between them while the CPU launches the next one.",
            { Input::GpuKernels, Input::Steps } };
        return info;
    }

    void evaluate(const RuleContext& context, RuleOutcome& outcome) const override {
        const LaunchProfile p = launchProfile(context);
        if (!p.launchBound) {
            outcome.reason = "not launch-bound: " + p.why;
            return;
        }
        const TraceModel& m = context.model();
        const StepAnalysis& steps = context.steps();

        // Evidence: the launch gaps of the median step (the step whose breakdown is the median one).
        size_t medianStep = 0;
        for (size_t i = 0; i < steps.perStep.size(); ++i)
            if (steps.perStep[i].stepNs == steps.median.stepNs) {
                medianStep = i;
                break;
            }
        Evidence evidence;
        const Step& step = steps.detection.steps[medianStep];
        evidence.spans.push_back({ step.startNs, step.endNs });
        for (size_t i = 0; i < m.kernels.size() && evidence.events.size() < 50; ++i)
            if (m.kernels.device[i] == steps.device && m.kernels.startNs[i] >= step.startNs
                && m.kernels.startNs[i] < step.endNs)
                evidence.events.push_back({ EventTable::Kernel, RowIndex(i) });
        evidence.eventsTotal = size_t(p.kernelsPerStep + 0.5);
        std::vector<size_t> counts = p.launchGapCount;
        std::sort(counts.begin(), counts.end());
        const size_t gapsPerStep = counts[counts.size() / 2];
        char perStep[32];
        snprintf(perStep, sizeof perStep, "%.0f", p.kernelsPerStep);
        evidence.facts = { { "kernels per step", std::string(perStep) },
            { "median kernel", formatDuration(p.medianKernelNs) },
            { "kernel time in kernels < " + formatDuration(kSmallKernelNs), formatPercent(p.smallKernelTimeShare) },
            { "GPU busy",
                formatDuration(p.medianBusyNs) + " of a " + formatDuration(p.medianStepNs) + " step ("
                    + formatPercent(p.busyShare) + ")" },
            { "idle in gaps < " + formatDuration(kLaunchGapNs) + " between kernels",
                formatDuration(p.medianLaunchGapNs) + " per step (" + formatPercent(p.launchGapShare) + ", "
                    + std::to_string(gapsPerStep) + " gaps)" } };
        if (p.medianLaunchCallNs > 0)
            evidence.facts.push_back({ "median launch call (CPU)", formatDuration(p.medianLaunchCallNs) });

        Finding f;
        f.gain = context.gain(p.medianLaunchGapNs,
            "a CUDA graph replays the step's kernels back to back without CPU launch work: the short idle gaps "
            "between kernels (median step) would mostly go; larger batches and fused kernels shrink them too",
            "low");
        f.severity = p.launchGapShare >= 0.5 ? Severity::Error : Severity::Warning;
        f.title = "launch-bound: the GPU is busy " + formatPercent(p.busyShare) + " of the step; " + perStep
            + " kernels per step (median " + formatDuration(p.medianKernelNs) + ") leave it idle "
            + formatDuration(p.medianLaunchGapNs) + " per step (" + formatPercent(p.launchGapShare)
            + ") in short gaps while the CPU launches the next";
        f.detail = "The step's kernels are small (median " + formatDuration(p.medianKernelNs)
            + ") and the CPU needs longer to issue each one (Python, the framework's dispatch and the CUDA launch "
              "call) "
              "than the GPU needs to run it, so the GPU waits between kernels. Measured on the median step: "
              "host-caused "
              "idle gaps shorter than "
            + formatDuration(kLaunchGapNs)
            + " (longer gaps are reported by gpu-idle). Fewer, larger kernels (a larger batch, torch.compile fusing "
              "pointwise ops) or replaying the whole step as a CUDA graph remove this overhead.";
        f.evidence = std::move(evidence);
        f.fixPython = "# 1. Capture the step once, replay it: no per-kernel CPU work\n"
                      "model = torch.compile(model, mode=\"reduce-overhead\")  # CUDA graphs + fusion\n"
                      "# or by hand (static shapes, static input buffers):\n"
                      "g = torch.cuda.CUDAGraph()\n"
                      "with torch.cuda.graph(g):\n"
                      "    static_loss = train_step(static_x, static_y)\n"
                      "for x, y in loader:\n"
                      "    static_x.copy_(x); static_y.copy_(y); g.replay()\n"
                      "# 2. Or give each kernel more work: a larger batch size";
        f.fixCpp = "// Capture the step in a CUDA graph and replay it (static shapes and input buffers):\n"
                   "at::cuda::CUDAGraph graph;\n"
                   "auto stream = c10::cuda::getStreamFromPool();\n"
                   "{\n"
                   "  c10::cuda::CUDAStreamGuard guard(stream);\n"
                   "  graph.capture_begin();\n"
                   "  auto loss = train_step(static_x, static_y);\n"
                   "  graph.capture_end();\n"
                   "}\n"
                   "for (auto& batch : *loader) {\n"
                   "  static_x.copy_(batch.data); static_y.copy_(batch.target);\n"
                   "  graph.replay();\n"
                   "}";
        outcome.findings.push_back(std::move(f));
    }
};

} // namespace

std::unique_ptr<Rule> makeLowGpuUtilization() {
    return std::make_unique<LowGpuUtilization>();
}

} // namespace tuneup::rules
