// cudnn-autotuner-off: cuDNN benchmark mode (the autotuner) is off while convolutions with fixed
// shapes take a real share of GPU time. See cudnn-autotuner-off.md.

#include "advise/rule_context.h"
#include "all_rules.h"

#include <algorithm>
#include <array>
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

bool isConvOp(std::string_view name) {
    return name == "aten::cudnn_convolution" || name == "aten::_convolution" || name == "aten::convolution"
        || name == "aten::conv2d" || name == "aten::conv1d" || name == "aten::conv3d"
        || name == "aten::cudnn_convolution_relu" || name == "aten::cudnn_convolution_add_relu";
}

struct ConvTime {
    int64_t totalNs = 0; // convolution kernels on the step device, inside steps (or all, without steps)
    int64_t gpuNs = 0; // every kernel on that device, same window
    size_t kernels = 0;
    std::vector<EventRef> examples;
};

ConvTime convolutionTime(const RuleContext& context) {
    const TraceModel& m = context.model();
    const auto& k = m.kernels;
    const auto& steps = context.steps().detection.steps;
    const int32_t device = context.steps().device;
    ConvTime t;
    size_t step = 0;
    for (size_t i = 0; i < k.size(); ++i) {
        if (k.device[i] != device) continue;
        if (!steps.empty()) {
            while (step < steps.size() && steps[step].endNs <= k.startNs[i])
                ++step;
            if (step == steps.size() || k.startNs[i] < steps[step].startNs) continue;
        }
        const int64_t d = k.endNs[i] - k.startNs[i];
        t.gpuNs += d;
        if (context.kernelClass(i) != KernelClass::Convolution) continue;
        t.totalNs += d;
        ++t.kernels;
        if (t.examples.size() < 50) t.examples.push_back({ EventTable::Kernel, RowIndex(i) });
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

FindSearch findSearches(const RuleContext& context) {
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
                if (f.firstOp == kNoRow || op < f.firstOp) f.firstOp = op;
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

ShapeVariety shapeVariety(const RuleContext& context) {
    const TraceModel& m = context.model();
    const auto& steps = context.steps().detection.steps;
    ShapeVariety v;
    std::set<StringId> all;
    std::vector<std::set<StringId>> perStep(steps.size());
    size_t step = 0;
    for (size_t i = 0; i < m.cpuOps.size(); ++i) {
        if (m.cpuOps.inputDims[i] == kEmptyString || !isConvOp(m.str(m.cpuOps.name[i]))) continue;
        // Count the outermost convolution op only (aten::conv2d -> aten::convolution -> ... share a shape).
        const RowIndex parent = m.cpuOps.parent[i];
        if (parent != kNoRow && isConvOp(m.str(m.cpuOps.name[size_t(parent)]))) continue;
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

// What the cuDNN calls the agent recorded (ConvCallTable) tell about how algorithms were chosen.
struct RecordedChoice {
    size_t runs = 0; // convolutions run
    size_t shapes = 0; // distinct shapes run
    size_t findCalls = 0; // cudnnFind* calls: the autotuner's search
    size_t searchedShapes = 0; // backend shapes run with two or more plans: cudnn-frontend's search
    size_t heuristicQueries = 0; // cudnnGet*_v7 calls, engine heuristics finalized
    size_t heuristicRuns = 0; // runs whose algorithm came from cuDNN's heuristics
    size_t repeatedShapes = 0; // shapes run at least twice, always with the heuristics' algorithm
    size_t maxShapesPerStep = 0;
    RowIndex example = kNoRow; // a run with a heuristic algorithm
    bool searched() const { return findCalls > 0 || searchedShapes > 0; }
    bool heuristicsRepeat() const { return heuristicRuns > 0 && repeatedShapes > 0; }
};

using ConvKey = std::array<int32_t, 24>;

ConvKey convKey(const ConvCallTable& c, size_t i) {
    return { int32_t(c.direction[i]), c.n[i], c.c[i], c.d[i], c.h[i], c.w[i], c.k[i], c.filterC[i], c.t[i], c.r[i],
        c.s[i], c.padD[i], c.padH[i], c.padW[i], c.strideD[i], c.strideH[i], c.strideW[i], c.dilationD[i],
        c.dilationH[i], c.dilationW[i], c.groups[i], c.dataType[i], int32_t(c.layout[i]), int32_t(c.api[i]) };
}

RecordedChoice recordedChoice(const RuleContext& context) {
    const TraceModel& m = context.model();
    const ConvCallTable& c = m.convCalls;
    RecordedChoice r;
    struct Shape {
        size_t runs = 0, heuristicRuns = 0;
        bool find = false, heuristic = false;
        std::set<uint64_t> plans;
        std::set<int64_t> heuristicAlgos; // the legacy heuristics' picks
    };
    std::map<ConvKey, Shape> shapes;
    for (size_t i = 0; i < c.size(); ++i) {
        Shape& s = shapes[convKey(c, i)];
        if (c.kind[i] == ConvCallKind::Find) {
            ++r.findCalls;
            s.find = true;
        } else if (c.kind[i] == ConvCallKind::Heuristic) {
            ++r.heuristicQueries;
            s.heuristic = true;
            if (c.algo[i] >= 0) s.heuristicAlgos.insert(c.algo[i]);
        }
    }
    // Runs, in time order: a legacy run passes the algorithm its caller chose, from the heuristics when
    // the shape was asked of them (and never searched); a backend plan says where its engine came from.
    const auto& steps = context.steps().detection.steps;
    std::vector<std::set<ConvKey>> perStep(steps.size());
    size_t step = 0;
    for (size_t i = 0; i < c.size(); ++i) {
        if (c.kind[i] != ConvCallKind::Run) continue;
        const ConvKey key = convKey(c, i);
        Shape& s = shapes[key];
        ++r.runs;
        ++s.runs;
        if (c.planId[i]) s.plans.insert(c.planId[i]);
        const bool fromHeuristics = c.algoSource[i] == AlgoSource::Heuristic
            || (c.api[i] == ConvApi::Legacy && s.heuristic && !s.find
                && (s.heuristicAlgos.empty() || s.heuristicAlgos.count(c.algo[i])));
        if (fromHeuristics) {
            ++r.heuristicRuns;
            ++s.heuristicRuns;
            if (r.example == kNoRow) r.example = RowIndex(i);
        }
        while (step < steps.size() && steps[step].endNs <= c.startNs[i])
            ++step;
        if (step < steps.size() && c.startNs[i] >= steps[step].startNs) perStep[step].insert(key);
    }
    for (const auto& [key, s] : shapes) {
        if (s.runs == 0) continue;
        ++r.shapes;
        r.searchedShapes += s.plans.size() >= 2;
        r.repeatedShapes += s.runs >= 2 && s.heuristicRuns == s.runs && s.plans.size() <= 1;
    }
    for (const auto& keys : perStep)
        r.maxShapesPerStep = std::max(r.maxShapesPerStep, keys.size());
    return r;
}

class CudnnAutotunerOff final : public Rule {
public:
    const RuleInfo& info() const override {
        static const RuleInfo info { "cudnn-autotuner-off", "cuDNN autotuner off",
            "cuDNN benchmark mode is off while convolutions with fixed shapes take a real share of GPU time.",
            { Input::GpuKernels } };
        return info;
    }

    void evaluate(const RuleContext& context, RuleOutcome& outcome) const override {
        const TraceModel& m = context.model();
        const bool anyConvolution = std::any_of(context.rank().kernelClasses.begin(),
            context.rank().kernelClasses.end(), [](KernelClass c) { return c == KernelClass::Convolution; });
        if (!anyConvolution) {
            outcome.status = RuleStatus::NotApplicable;
            outcome.reason = "no convolution kernels ran: the cuDNN autotuner has nothing to tune";
            return;
        }
        const FindSearch find = findSearches(context);
        const RecordedChoice calls = recordedChoice(context);
        const bool haveFlags = context.has(Input::TorchFlags);
        // Off as the recorded cuDNN calls show it: heuristics chose the algorithms of convolutions that
        // run again and again with the same shapes, and the autotuner never searched.
        const bool offByCalls = calls.heuristicsRepeat() && !calls.searched() && find.ops == 0;
        if (!haveFlags && !offByCalls) {
            if (calls.searched()) {
                outcome.reason = searchText(calls) + ": cudnn.benchmark is on";
                return;
            }
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
                + " (cudnn.benchmark cannot be read from this trace)"
                + (calls.runs ? ", or recorded cuDNN calls showing heuristic algorithms on repeated shapes ("
                            + std::to_string(calls.runs) + " convolutions recorded, "
                            + std::to_string(calls.heuristicRuns) + " with a heuristic algorithm)"
                              : std::string());
            return;
        }
        if (!haveFlags) {
            report(context, outcome, calls, nullptr);
            return;
        }
        const FlagSummary benchmark = frameworkFlag(m, "cudnn.benchmark");
        if (!benchmark.recorded() || (!benchmark.everOn && !benchmark.everOff)) {
            outcome.status = RuleStatus::NotEvaluated;
            outcome.reason = benchmark.recorded()
                ? "needs cudnn.benchmark: the torch probe could not read it"
                : "needs cudnn.benchmark: the recorded torch settings do not include it";
            return;
        }
        if (benchmark.everOn) {
            outcome.reason
                = benchmark.everOff ? "cudnn.benchmark was switched on during the run" : "cudnn.benchmark is on";
            return;
        }
        if (!benchmark.provenOff()) {
            outcome.reason = "cudnn.benchmark read as off only part of the time (the probe failed in between): "
                             "not proven off";
            return;
        }
        if (find.ops > 0 || calls.searched()) {
            // The settings say off, the kernels or calls say searching: do not claim what the trace contradicts.
            outcome.reason = "cudnn.benchmark read as off, yet "
                + (calls.searched() ? searchText(calls)
                                    : std::to_string(find.ops) + " convolution calls show the autotuner's search")
                + ": not reported";
            return;
        }
        report(context, outcome, calls, &benchmark);
    }

private:
    static std::string searchText(const RecordedChoice& calls) {
        return calls.findCalls ? std::to_string(calls.findCalls) + " recorded cudnnFind calls (the autotuner's search)"
                               : std::to_string(calls.searchedShapes)
                + " convolution shapes were run with several cuDNN plans (the autotuner trying them)";
    }

    // Benchmark mode is off (the probe's reads, or else the recorded calls): weigh the convolutions.
    void report(const RuleContext& context, RuleOutcome& outcome, const RecordedChoice& calls,
        const FlagSummary* benchmark) const {
        const TraceModel& m = context.model();
        const ConvTime conv = convolutionTime(context);
        if (conv.kernels == 0) {
            outcome.reason = "cudnn.benchmark is off, but no convolution kernels ran in the steps: nothing to tune";
            return;
        }
        ShapeVariety shapes = shapeVariety(context);
        if (calls.runs > 0 && calls.maxShapesPerStep > 0) // the recorded calls' shapes are exact
            shapes = { calls.runs, calls.shapes, calls.maxShapesPerStep };
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
        const std::string heuristicText = std::to_string(calls.heuristicRuns) + " of " + std::to_string(calls.runs)
            + " recorded convolutions ran the algorithm cuDNN's heuristics chose, on "
            + std::to_string(calls.repeatedShapes)
            + " shapes that ran again and again, and the autotuner never searched (no cudnnFind, never several plans "
              "tried for one shape)";
        f.detail = (benchmark ? "The torch probe read torch.backends.cudnn.benchmark = False for the whole recording ("
                               + std::to_string(benchmark->observations) + " reads)."
                              : "The recorded cuDNN calls show benchmark mode off: " + heuristicText + ".")
            + " Without it cuDNN picks each convolution's algorithm by heuristic; with it, the first call of every "
              "new shape times the applicable algorithms and later calls use the fastest. "
            + std::to_string(conv.kernels) + " convolution kernels ran in the measured steps"
            + (shapes.convOps ? " and their input shapes repeat from step to step ("
                        + std::to_string(shapes.distinctShapes) + " distinct shapes)"
                              : std::string())
            + ".";
        if (benchmark && calls.heuristicsRepeat())
            f.detail += " The recorded cuDNN calls agree: " + heuristicText + ".";
        if (frameworkFlag(m, "cudnn.deterministic").everOn)
            f.detail += " cudnn.deterministic is on: the autotuner will only choose among deterministic algorithms.";
        f.evidence.facts = { { "cudnn.benchmark",
                                 benchmark ? "off (read " + std::to_string(benchmark->observations) + " times)"
                                           : "off (the recorded cuDNN calls: heuristic algorithms, no search)" },
            { "convolution kernels", std::to_string(conv.kernels) },
            { "convolution time per step", formatDuration(convPerStep) },
            { "share of GPU kernel time", formatPercent(gpuShare) } };
        if (shapes.convOps)
            f.evidence.facts.push_back({ "distinct convolution input shapes", std::to_string(shapes.distinctShapes) });
        if (calls.runs) {
            f.evidence.facts.push_back({ "recorded cuDNN convolutions",
                std::to_string(calls.runs) + " runs, " + std::to_string(calls.heuristicRuns)
                    + " with a heuristic algorithm, " + std::to_string(calls.heuristicQueries) + " heuristic queries, "
                    + std::to_string(calls.findCalls) + " cudnnFind searches" });
            if (calls.example != kNoRow) f.evidence.events.push_back({ EventTable::ConvCall, calls.example });
        }
        f.evidence.events.insert(f.evidence.events.end(), conv.examples.begin(), conv.examples.end());
        f.evidence.eventsTotal = conv.kernels + (calls.example != kNoRow ? 1 : 0);
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

std::unique_ptr<Rule> makeCudnnAutotunerOff() {
    return std::make_unique<CudnnAutotunerOff>();
}

} // namespace tuneup::rules
