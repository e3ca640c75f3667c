// cudnn-autotuner-off: cuDNN benchmark mode (the autotuner) is off while convolutions with fixed
// shapes take a real share of GPU time. See cudnn-autotuner-off.md.

#include "advise/rule_context.h"
#include "all_rules.h"

#include <algorithm>
#include <map>
#include <set>
#include <unordered_map>

namespace tuneup::rules {

using namespace analysis;

namespace {

// The autotuner typically saves 10-30% of convolution time on fixed shapes; the estimate uses the low end.
constexpr double kAutotunerSaving = 0.10;
// Below this share of the step, the saving is not worth a finding.
constexpr double kMinGainShare = 0.005;
// A call with this many more distinct convolution kernels than every later call of the same op and
// shape is the autotuner searching (see findSearches).
constexpr size_t kFindExtraKernels = 3;

bool isConvOp(std::string_view name)
{
    return name == "aten::cudnn_convolution" || name == "aten::_convolution" || name == "aten::convolution"
        || name == "aten::conv2d" || name == "aten::conv1d" || name == "aten::conv3d"
        || name == "aten::cudnn_convolution_relu" || name == "aten::cudnn_convolution_add_relu";
}

struct ConvTime {
    int64_t totalNs = 0;      // convolution kernels on the step device, inside steps (or all, without steps)
    int64_t gpuNs = 0;        // every kernel on that device, same window
    size_t kernels = 0;
    std::vector<EventRef> examples;
};

ConvTime convolutionTime(const RuleContext& context)
{
    const TraceModel& m = context.model();
    const auto& k = m.kernels;
    const auto& steps = context.steps().detection.steps;
    const int32_t device = context.steps().device;
    ConvTime t;
    size_t step = 0;
    for (size_t i = 0; i < k.size(); ++i) {
        if (k.device[i] != device)
            continue;
        if (!steps.empty()) {
            while (step < steps.size() && steps[step].endNs <= k.startNs[i])
                ++step;
            if (step == steps.size() || k.startNs[i] < steps[step].startNs)
                continue;
        }
        const int64_t d = k.endNs[i] - k.startNs[i];
        t.gpuNs += d;
        if (context.kernelClass(i) != KernelClass::Convolution)
            continue;
        t.totalNs += d;
        ++t.kernels;
        if (t.examples.size() < 50)
            t.examples.push_back({ EventTable::Kernel, RowIndex(i) });
    }
    return t;
}

// The autotuner's search (cudnnFind): the first call of a shape runs every applicable algorithm, so
// that call launches many more distinct convolution kernels than later calls of the same op and shape.
// One call of a backward convolution legitimately launches several (dgrad, wgrad, offsets), hence the
// comparison with the later calls rather than a fixed count.
struct FindSearch {
    size_t ops = 0;
    RowIndex firstOp = kNoRow;
};

FindSearch findSearches(const RuleContext& context)
{
    const TraceModel& m = context.model();
    std::unordered_map<RowIndex, std::set<StringId>> namesByOp;
    for (size_t i = 0; i < m.kernels.size(); ++i)
        if (context.kernelClass(i) == KernelClass::Convolution && m.kernels.cpuOp[i] != kNoRow)
            namesByOp[m.kernels.cpuOp[i]].insert(m.kernels.name[i]);
    // Calls of the same op with the same input shapes, in time order (op rows are sorted by start).
    // Without recorded shapes, calls of different layers cannot be told apart: no signature then.
    std::map<std::pair<StringId, StringId>, std::vector<std::pair<RowIndex, size_t>>> calls;
    for (const auto& [op, names] : namesByOp)
        if (m.cpuOps.inputDims[size_t(op)] != kEmptyString)
            calls[{ m.cpuOps.name[size_t(op)], m.cpuOps.inputDims[size_t(op)] }].emplace_back(op, names.size());
    FindSearch f;
    for (auto& [key, list] : calls) {
        std::sort(list.begin(), list.end());
        size_t laterMax = 0; // the most distinct kernels of any later call
        for (size_t i = list.size(); i-- > 0;) {
            const auto [op, distinct] = list[i];
            const size_t laterCalls = list.size() - 1 - i;
            if (laterCalls >= 2 && distinct >= kFindExtraKernels + laterMax && distinct >= 2 * laterMax) {
                ++f.ops;
                if (f.firstOp == kNoRow || op < f.firstOp)
                    f.firstOp = op;
            }
            laterMax = std::max(laterMax, distinct);
        }
    }
    return f;
}

// Whether convolution input shapes change from step to step (record_shapes): the autotuner then
// searches again for every new shape, and benchmark mode can cost more than it saves.
struct ShapeVariety {
    size_t convOps = 0;
    size_t distinctShapes = 0;
    size_t maxShapesPerStep = 0;
};

ShapeVariety shapeVariety(const RuleContext& context)
{
    const TraceModel& m = context.model();
    const auto& steps = context.steps().detection.steps;
    ShapeVariety v;
    std::set<StringId> all;
    std::vector<std::set<StringId>> perStep(steps.size());
    size_t step = 0;
    for (size_t i = 0; i < m.cpuOps.size(); ++i) {
        if (m.cpuOps.inputDims[i] == kEmptyString || !isConvOp(m.str(m.cpuOps.name[i])))
            continue;
        // Count the outermost convolution op only (aten::conv2d -> aten::convolution -> ... share a shape).
        const RowIndex parent = m.cpuOps.parent[i];
        if (parent != kNoRow && isConvOp(m.str(m.cpuOps.name[size_t(parent)])))
            continue;
        ++v.convOps;
        all.insert(m.cpuOps.inputDims[i]);
        while (step < steps.size() && steps[step].endNs <= m.cpuOps.startNs[i])
            ++step;
        if (step < steps.size() && m.cpuOps.startNs[i] >= steps[step].startNs)
            perStep[step].insert(m.cpuOps.inputDims[i]);
    }
    v.distinctShapes = all.size();
    for (const auto& s : perStep)
        v.maxShapesPerStep = std::max(v.maxShapesPerStep, s.size());
    return v;
}

class CudnnAutotunerOff final : public Rule {
public:
    const RuleInfo& info() const override
    {
        static const RuleInfo info { "cudnn-autotuner-off", "cuDNN autotuner off",
            "cuDNN benchmark mode is off while convolutions with fixed shapes take a real share of GPU time.",
            { Input::GpuKernels } };
        return info;
    }

    void evaluate(const RuleContext& context, RuleOutcome& outcome) const override
    {
        const TraceModel& m = context.model();
        const bool anyConvolution = std::any_of(context.rank().kernelClasses.begin(),
            context.rank().kernelClasses.end(), [](KernelClass c) { return c == KernelClass::Convolution; });
        if (!anyConvolution) {
            outcome.status = RuleStatus::NotApplicable;
            outcome.reason = "no convolution kernels ran: the cuDNN autotuner has nothing to tune";
            return;
        }
        const FindSearch find = findSearches(context);
        if (!hasInput(context.rank(), context.job(), Input::TorchFlags)) {
            if (find.ops > 0) {
                // Only the autotuner launches many different algorithms for one convolution call.
                outcome.reason = std::to_string(find.ops)
                    + " convolution calls ran many more cuDNN kernels than later calls of the same shape (the "
                      "autotuner timing its algorithms): cudnn.benchmark is on";
                return;
            }
            // Without the settings nothing proves benchmark mode is off: never guess.
            outcome.status = RuleStatus::NotEvaluated;
            outcome.reason = "needs " + std::string(inputName(Input::TorchFlags))
                + " (cudnn.benchmark cannot be read from this trace)";
            return;
        }
        const FlagSummary benchmark = frameworkFlag(m, "cudnn.benchmark");
        if (!benchmark.recorded() || (!benchmark.everOn && !benchmark.everOff)) {
            outcome.status = RuleStatus::NotEvaluated;
            outcome.reason = benchmark.recorded() ? "needs cudnn.benchmark: the torch probe could not read it"
                                                  : "needs cudnn.benchmark: the recorded torch settings do not include it";
            return;
        }
        if (benchmark.everOn) {
            outcome.reason = benchmark.everOff ? "cudnn.benchmark was switched on during the run"
                                               : "cudnn.benchmark is on";
            return;
        }
        if (!benchmark.provenOff()) {
            outcome.reason = "cudnn.benchmark read as off only part of the time (the probe failed in between): "
                             "not proven off";
            return;
        }
        if (find.ops > 0) {
            // The settings say off, the kernels say searching: do not claim what the trace contradicts.
            outcome.reason = "cudnn.benchmark read as off, yet " + std::to_string(find.ops)
                + " convolution calls show the autotuner's search: not reported";
            return;
        }
        const ConvTime conv = convolutionTime(context);
        if (conv.kernels == 0) {
            outcome.reason = "cudnn.benchmark is off, but no convolution kernels ran in the steps: nothing to tune";
            return;
        }
        const ShapeVariety shapes = shapeVariety(context);
        if (shapes.maxShapesPerStep > 0 && shapes.distinctShapes > 2 * shapes.maxShapesPerStep + 2) {
            outcome.reason = "cudnn.benchmark is off and convolution input shapes change between steps ("
                + std::to_string(shapes.distinctShapes) + " distinct shapes, at most "
                + std::to_string(shapes.maxShapesPerStep)
                + " per step): the autotuner would search again for every new shape";
            return;
        }
        const int64_t convPerStep = context.perStep(conv.totalNs);
        const int64_t gainNs = int64_t(double(convPerStep) * kAutotunerSaving);
        Gain gain = context.gain(gainNs,
            "the autotuner typically saves 10-30% of convolution time on fixed shapes; the low end, 10% of the "
                + formatDuration(convPerStep) + " of convolution kernels per step, is used",
            "low");
        const double gpuShare = conv.gpuNs > 0 ? double(conv.totalNs) / double(conv.gpuNs) : 0.0;
        // Without steps, the share of GPU kernel time stands in for the share of the step.
        const double share = context.stepNs() > 0 ? gain.stepShare : gpuShare * kAutotunerSaving;
        if (share < kMinGainShare) {
            outcome.reason = "cudnn.benchmark is off, but convolutions take only " + formatDuration(convPerStep)
                + " per step (" + formatPercent(gpuShare) + " of GPU kernel time): the autotuner would save little";
            return;
        }

        Finding f;
        f.severity = share >= 0.2 ? Severity::Error : share >= 0.01 ? Severity::Warning : Severity::Info;
        f.title = "cudnn.benchmark is off while convolutions take " + formatDuration(convPerStep) + " per step ("
            + formatPercent(gpuShare) + " of GPU time); the autotuner could save about " + formatDuration(gainNs);
        f.detail = "The torch probe read torch.backends.cudnn.benchmark = False for the whole recording ("
            + std::to_string(benchmark.observations)
            + " reads). Without it cuDNN picks each convolution's algorithm by heuristic; with it, the first call "
              "of every new shape times the applicable algorithms and later calls use the fastest. "
            + std::to_string(conv.kernels) + " convolution kernels ran in the measured steps"
            + (shapes.convOps ? " and their input shapes repeat from step to step (" + std::to_string(shapes.distinctShapes)
                        + " distinct shapes)"
                              : std::string())
            + ".";
        if (frameworkFlag(m, "cudnn.deterministic").everOn)
            f.detail += " cudnn.deterministic is on: the autotuner will only choose among deterministic algorithms.";
        f.evidence.facts = { { "cudnn.benchmark", "off (read " + std::to_string(benchmark.observations) + " times)" },
            { "convolution kernels", std::to_string(conv.kernels) },
            { "convolution time per step", formatDuration(convPerStep) },
            { "share of GPU kernel time", formatPercent(gpuShare) } };
        if (shapes.convOps)
            f.evidence.facts.push_back({ "distinct convolution input shapes", std::to_string(shapes.distinctShapes) });
        f.evidence.events = conv.examples;
        f.evidence.eventsTotal = conv.kernels;
        f.gain = std::move(gain);
        f.fixPython = "import torch\n"
                      "torch.backends.cudnn.benchmark = True  # once, before the training loop\n"
                      "# the first iteration of each new input shape is slower (it times the algorithms)";
        f.fixCpp = "#include <ATen/Context.h>\n"
                   "at::globalContext().setBenchmarkCuDNN(true);  // once, before the training loop";
        outcome.findings.push_back(std::move(f));
    }
};

} // namespace

std::unique_ptr<Rule> makeCudnnAutotunerOff() { return std::make_unique<CudnnAutotunerOff>(); }

} // namespace tuneup::rules
