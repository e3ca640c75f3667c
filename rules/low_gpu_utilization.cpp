// low-gpu-utilization: small kernels and launch-bound steps: the GPU idles between kernels while the
// CPU launches the next one. A step that already replays CUDA graphs gets advice about the kernels it
// still launches one by one, not to capture the step in a graph. See low-gpu-utilization.md.

#include "all_rules.h"
#include "launch_profile.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace tuneup::rules {

using namespace analysis;

namespace {

std::string perStepCount(double n) {
    char text[32];
    snprintf(text, sizeof text, "%.0f", n);
    return text;
}

// The evidence of a launch-bound profile: the median step's kernels and the figures that decided it.
Evidence launchEvidence(const LaunchProfile& p, const StepAnalysis& steps, const TraceModel& m) {
    // The step whose breakdown is the median one.
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
    evidence.eventsTotal = size_t(std::lround(double(p.kernels + p.graphKernels) / double(p.steps)));
    std::vector<size_t> counts = p.launchGapCount;
    std::sort(counts.begin(), counts.end());
    const size_t gapsPerStep = counts[counts.size() / 2];
    // Without graphs every launch is a kernel: the labels say so, as they always have.
    const std::string unit = p.usesGraphs() ? "launch" : "kernel", units = p.usesGraphs() ? "launches" : "kernels";
    evidence.facts = { { units + " per step",
                           p.usesGraphs() ? p.launchesText(0) : perStepCount(double(p.kernels) / double(p.steps)) },
        { "median " + unit, formatDuration(p.medianLaunchNs) },
        { unit + " time in " + units + " < " + formatDuration(kSmallKernelNs), formatPercent(p.smallLaunchTimeShare) },
        { "GPU busy",
            formatDuration(p.medianBusyNs) + " of a " + formatDuration(p.medianStepNs) + " step ("
                + formatPercent(p.busyShare) + ")" },
        { "idle in gaps < " + formatDuration(kLaunchGapNs) + " between kernels",
            formatDuration(p.medianLaunchGapNs) + " per step (" + formatPercent(p.launchGapShare) + ", "
                + std::to_string(gapsPerStep) + " gaps)" } };
    if (p.medianLaunchCallNs > 0)
        evidence.facts.push_back({ "median launch call (CPU)", formatDuration(p.medianLaunchCallNs) });
    return evidence;
}

// Eager steps: capture the step in a CUDA graph.
void adviseGraphCapture(const LaunchProfile& p, const RuleContext& context, Finding& f) {
    const std::string perStep = perStepCount(double(p.kernels) / double(p.steps));
    f.gain = context.gain(p.medianLaunchGapNs,
        "a CUDA graph replays the step's kernels back to back without CPU launch work: the short idle gaps "
        "between kernels (median step) would mostly go; larger batches and fused kernels shrink them too",
        "low");
    f.title = "launch-bound: the GPU is busy " + formatPercent(p.busyShare) + " of the step; " + perStep
        + " kernels per step (median " + formatDuration(p.medianLaunchNs) + ") leave it idle "
        + formatDuration(p.medianLaunchGapNs) + " per step (" + formatPercent(p.launchGapShare)
        + ") in short gaps while the CPU launches the next";
    f.detail = "The step's kernels are small (median " + formatDuration(p.medianLaunchNs)
        + ") and the CPU needs longer to issue each one (Python, the framework's dispatch and the CUDA launch call) "
          "than the GPU needs to run it, so the GPU waits between kernels. Measured on the median step: host-caused "
          "idle gaps shorter than "
        + formatDuration(kLaunchGapNs)
        + " (longer gaps are reported by gpu-idle). Fewer, larger kernels (a larger batch, torch.compile fusing "
          "pointwise ops) or replaying the whole step as a CUDA graph remove this overhead.";
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
}

// Steps that already replay CUDA graphs: bring the kernels still launched one by one into them.
void adviseExtendingGraphs(const LaunchProfile& p, const RuleContext& context, Finding& f) {
    const double steps = double(p.steps);
    const std::string eager = perStepCount(double(p.kernels) / steps),
                      replays = perStepCount(double(p.graphReplays) / steps);
    f.gain = context.gain(p.medianLaunchGapNs,
        "the step already replays CUDA graphs; capturing the kernels still launched one by one in them (or fusing "
        "those kernels) removes the short idle gaps between them (median step)",
        "low");
    f.title = "launch-bound outside CUDA graphs: the GPU is busy " + formatPercent(p.busyShare) + " of the step; "
        + eager + " kernels per step launched one by one beside " + replays + " graph replays (median launch "
        + formatDuration(p.medianLaunchNs) + ") leave it idle " + formatDuration(p.medianLaunchGapNs) + " per step ("
        + formatPercent(p.launchGapShare) + ") in short gaps while the CPU launches the next";
    f.detail = "The step already replays CUDA graphs (" + replays + " per step, running "
        + perStepCount(double(p.graphKernels) / steps) + " kernels for one launch call each), but " + eager
        + " kernels per step are launched one by one outside them, and the CPU needs longer to issue each one "
          "than the GPU needs to run it. Measured on the median step: host-caused idle gaps shorter than "
        + formatDuration(kLaunchGapNs)
        + " between launches (gaps between a graph's own kernels are not counted; longer gaps are gpu-idle's). "
          "Find what keeps that code out of the graphs (graph breaks, skipped CUDA graphs) and capture it too.";
    f.fixPython = "# The step already replays CUDA graphs: bring the kernels launched one by one into them.\n"
                  "# With torch.compile(mode=\"reduce-overhead\"), see what splits or skips the graphs\n"
                  "# (.item(), CPU tensors, dynamic shapes, mutated inputs):\n"
                  "#   TORCH_LOGS=\"graph_breaks,perf_hints\" python train.py\n"
                  "# Capture eager parts by hand (static shapes and input buffers):\n"
                  "block = torch.cuda.make_graphed_callables(block, (sample_input,))\n"
                  "# and the optimizer step:\n"
                  "optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3, capturable=True)";
    f.fixCpp = "// The step already replays CUDA graphs: capture the part still launched kernel by kernel too\n"
               "// (static shapes and buffers, no host synchronisation inside):\n"
               "at::cuda::CUDAGraph rest;\n"
               "auto stream = c10::cuda::getStreamFromPool();\n"
               "{\n"
               "  c10::cuda::CUDAStreamGuard guard(stream);\n"
               "  rest.capture_begin();\n"
               "  optimizer_step();  // the code whose kernels are launched one by one\n"
               "  rest.capture_end();\n"
               "}\n"
               "// each step: graph.replay(); rest.replay();";
}

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
        Finding f;
        f.severity = p.launchGapShare >= 0.5 ? Severity::Error : Severity::Warning;
        f.evidence = launchEvidence(p, context.steps(), context.model());
        if (p.usesGraphs())
            adviseExtendingGraphs(p, context, f);
        else
            adviseGraphCapture(p, context, f);
        outcome.findings.push_back(std::move(f));
    }
};

} // namespace

std::unique_ptr<Rule> makeLowGpuUtilization() {
    return std::make_unique<LowGpuUtilization>();
}

} // namespace tuneup::rules
