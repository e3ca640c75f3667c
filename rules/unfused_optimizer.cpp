// unfused-optimizer: the optimizer step updates the parameters one by one, a few small elementwise kernels per
// parameter, where foreach (multi-tensor) or fused kernels update them all in a handful of launches. See
// unfused-optimizer.md.

#include "advise/rule_context.h"
#include "all_rules.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <cstdio>
#include <map>
#include <optional>
#include <unordered_map>

namespace tuneup::rules {

using namespace analysis;

namespace {

// A step fires when it launches at least this many per-parameter kernels, and either kMinPerStep of them or,
// with the parameter count recorded, kMinPerParameter per parameter: a model with a few parameters (a toy)
// does not, a single-tensor Adam (about 4 to 10 kernels per parameter) or SGD over a hundred parameters does.
constexpr double kMinKernels = 16;
constexpr double kMinPerStep = 100;
constexpr double kMinPerParameter = 3;
// A foreach or fused step may still launch a few elementwise kernels (a scalar update, a norm): it is
// per-parameter only while its multi-tensor kernels are fewer than this share of the elementwise ones.
constexpr double kMaxMultiTensorShare = 0.1;
// Of the per-parameter kernels' GPU time, the share the multi-tensor kernels save: each small kernel runs
// far below the GPU's bandwidth (a ramp-up, a tail, a partly filled wave); the multi-tensor kernels move the
// same bytes with full waves. A conservative half.
constexpr double kGpuSaving = 0.5;

enum class StepKernel { PerParameter, MultiTensor, Other };

// Multi-tensor: torch's foreach and fused kernels (multi_tensor_apply_kernel, FusedAdamMathFunctor, ...) and
// APEX's (multi_tensor_adam, multi_tensor_lamb, ...). Per-parameter: TensorIterator's elementwise kernels
// (vectorized_elementwise_kernel, unrolled_elementwise_kernel, elementwise_kernel), one launch per op per
// tensor.
StepKernel classify(std::string_view name) {
    std::string lower(name.substr(0, 200));
    std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return char(std::tolower(c)); });
    static constexpr std::array<std::string_view, 8> kMultiTensor { "multi_tensor", "foreach", "fused_adam",
        "fusedadam", "fused_sgd", "fusedsgd", "fused_lamb", "fusedlamb" };
    for (std::string_view marker : kMultiTensor)
        if (lower.find(marker) != std::string::npos) return StepKernel::MultiTensor;
    if (lower.find("elementwise_kernel") != std::string::npos) return StepKernel::PerParameter;
    return StepKernel::Other;
}

std::string oneDecimal(double value) {
    char text[32];
    std::snprintf(text, sizeof text, "%.1f", value);
    return text;
}

bool isStepRange(std::string_view name) {
    return name.starts_with("Optimizer.step");
}

// "Optimizer.step#Adam.step" -> "Adam"; "" when the range does not name it.
std::string_view optimizerClass(std::string_view range) {
    const size_t hash = range.find('#');
    if (hash == std::string_view::npos) return {};
    std::string_view rest = range.substr(hash + 1);
    return rest.substr(0, rest.find('.'));
}

struct StepCall {
    RowIndex annotation = kNoRow;
    int64_t perParameter = 0, multiTensor = 0, other = 0, gpuNs = 0, launchNs = 0;
    std::unordered_map<StringId, int64_t> names;
};

class UnfusedOptimizer final : public Rule {
public:
    const RuleInfo& info() const override {
        static const RuleInfo info { "unfused-optimizer", "Optimizer step updates parameters one by one",
            "optimizer.step() launches a few small elementwise kernels per parameter each step instead of "
            "foreach (multi-tensor) or fused kernels.",
            { Input::GpuKernels, Input::OptimizerRanges } };
        return info;
    }

    void evaluate(const RuleContext& context, RuleOutcome& outcome) const override {
        const TraceModel& m = context.model();
        const auto& a = m.annotations;
        std::map<ThreadIndex, std::vector<size_t>> ranges; // Optimizer.step ranges per thread, in time order
        std::vector<StepCall> calls;
        std::unordered_map<size_t, size_t> callOf; // annotation row -> index in calls
        std::string_view className;
        for (size_t i = 0; i < a.size(); ++i) {
            const std::string_view name = m.str(a.name[i]);
            if (!isStepRange(name)) continue;
            // A bootstrap range around torch's own counts once: the outer one.
            if (a.parent[i] != kNoRow && isStepRange(m.str(a.name[size_t(a.parent[i])]))) continue;
            ranges[a.thread[i]].push_back(i);
            callOf[i] = calls.size();
            calls.emplace_back().annotation = RowIndex(i);
            if (className.empty()) className = optimizerClass(name);
        }
        if (calls.empty()) {
            outcome.status = RuleStatus::NotEvaluated;
            outcome.reason = "needs Optimizer.step ranges (the trace has other optimizer ranges only)";
            return;
        }
        for (auto& [thread, rows] : ranges)
            std::sort(rows.begin(), rows.end(), [&](size_t x, size_t y) { return a.startNs[x] < a.startNs[y]; });

        // Recorded by the Python bootstrap: a step that is already foreach or fused is not this rule's.
        const auto foreach = programFact(m, "tuneup.optimizer.foreach");
        const auto fused = programFact(m, "tuneup.optimizer.fused");
        const auto params = programFact(m, "tuneup.optimizer.params");
        if ((foreach && *foreach == 1) || (fused && *fused == 1)) {
            outcome.reason = std::string("the optimizer runs ") + (fused && *fused == 1 ? "fused=True" : "foreach=True")
                + " (recorded by tuneup's Python bootstrap)";
            return;
        }

        // The Optimizer.step range (on the launching thread) a kernel was launched in.
        auto rangeOf = [&](size_t kernel) -> std::optional<size_t> {
            ThreadIndex thread = 0;
            int64_t t = 0;
            const RowIndex api = m.kernels.apiCall[kernel], op = m.kernels.cpuOp[kernel];
            if (api != kNoRow) {
                thread = m.apiCalls.thread[size_t(api)];
                t = m.apiCalls.startNs[size_t(api)];
            } else if (op != kNoRow) {
                thread = m.cpuOps.thread[size_t(op)];
                t = m.cpuOps.startNs[size_t(op)];
            } else {
                return std::nullopt;
            }
            const auto it = ranges.find(thread);
            if (it == ranges.end()) return std::nullopt;
            const auto& rows = it->second;
            auto r = std::upper_bound(
                rows.begin(), rows.end(), t, [&](int64_t time, size_t row) { return time < a.startNs[row]; });
            if (r == rows.begin() || t > a.endNs[*--r]) return std::nullopt;
            return *r;
        };

        const auto& k = m.kernels;
        std::unordered_map<StringId, StepKernel> kindOf;
        std::vector<std::pair<int64_t, RowIndex>> evidenceKernels; // (GPU time, row) of the per-parameter kernels
        for (size_t i = 0; i < k.size(); ++i) {
            const auto range = rangeOf(i);
            if (!range) continue;
            StepCall& call = calls[callOf[*range]];
            auto [kind, added] = kindOf.try_emplace(k.name[i], StepKernel::Other);
            if (added) kind->second = classify(m.str(k.name[i]));
            const int64_t ns = k.endNs[i] - k.startNs[i];
            switch (kind->second) {
            case StepKernel::MultiTensor:
                ++call.multiTensor;
                break;
            case StepKernel::Other:
                ++call.other;
                break;
            case StepKernel::PerParameter: {
                ++call.perParameter;
                call.gpuNs += ns;
                const RowIndex api = k.apiCall[i];
                if (api != kNoRow) call.launchNs += m.apiCalls.endNs[size_t(api)] - m.apiCalls.startNs[size_t(api)];
                ++call.names[k.name[i]];
                evidenceKernels.emplace_back(ns, RowIndex(i));
                break;
            }
            }
        }

        // Per step, over the steps that launched GPU work.
        int64_t perParameter = 0, multiTensor = 0, other = 0, gpuNs = 0, launchNs = 0, rangeNs = 0;
        size_t working = 0;
        std::map<StringId, int64_t> names;
        for (const StepCall& c : calls) {
            if (c.perParameter + c.multiTensor + c.other == 0) continue;
            ++working;
            perParameter += c.perParameter;
            multiTensor += c.multiTensor;
            other += c.other;
            gpuNs += c.gpuNs;
            launchNs += c.launchNs;
            rangeNs += a.endNs[size_t(c.annotation)] - a.startNs[size_t(c.annotation)];
            for (const auto& [name, count] : c.names)
                names[name] += count;
        }
        if (working == 0) {
            outcome.reason = std::to_string(calls.size()) + " optimizer steps launch no GPU kernel";
            return;
        }
        const double steps = double(working);
        const double perStep = double(perParameter) / steps, multiPerStep = double(multiTensor) / steps;
        // The parameters the step updates, when the bootstrap recorded them (a trace's kernel names do not say:
        // one op may run once per parameter or several times).
        const int64_t parameters = params && *params > 0 ? *params : 0;
        const double perParameterKernels = parameters > 0 ? perStep / double(parameters) : 0;
        const std::string counts = formatCount(int64_t(perStep + 0.5)) + " per-parameter and "
            + formatCount(int64_t(multiPerStep + 0.5)) + " multi-tensor kernels per step, over "
            + std::to_string(working) + (working == 1 ? " step" : " steps");
        if (multiPerStep >= kMaxMultiTensorShare * perStep && multiTensor > 0) {
            outcome.reason = "the optimizer step already runs multi-tensor kernels: " + counts;
            return;
        }
        if (perStep < kMinKernels || (perStep < kMinPerStep && perParameterKernels < kMinPerParameter)) {
            outcome.reason = "too few per-parameter kernels to matter: " + counts
                + (parameters > 0 ? " for " + std::to_string(parameters) + " parameters" : std::string());
            return;
        }

        Evidence evidence;
        std::sort(evidenceKernels.begin(), evidenceKernels.end(), std::greater<> {});
        for (const auto& [ns, row] : evidenceKernels) {
            if (evidence.events.size() >= 50) break;
            evidence.events.push_back({ EventTable::Kernel, row });
        }
        evidence.eventsTotal = evidenceKernels.size();
        for (const StepCall& c : calls)
            if (c.perParameter > 0 && evidence.spans.size() < 20)
                evidence.spans.push_back({ a.startNs[size_t(c.annotation)], a.endNs[size_t(c.annotation)] });
        std::vector<std::pair<int64_t, StringId>> byCount;
        for (const auto& [name, count] : names)
            byCount.emplace_back(count, name);
        std::sort(byCount.begin(), byCount.end(), std::greater<> {});
        std::string kernelList;
        for (const auto& [count, name] : byCount) {
            if (kernelList.size() > 400) break;
            if (!kernelList.empty()) kernelList += "; ";
            kernelList += std::to_string(count) + " x " + std::string(m.str(name).substr(0, 120));
        }
        evidence.facts = { { "optimizer steps",
                               std::to_string(calls.size()) + " (" + std::to_string(working) + " launch GPU kernels)" },
            { "per-parameter kernels per step", formatCount(int64_t(perStep + 0.5)) },
            { "multi-tensor kernels per step", formatCount(int64_t(multiPerStep + 0.5)) },
            { "other kernels per step", formatCount(int64_t(double(other) / steps + 0.5)) },
            { "GPU time of the per-parameter kernels per step", formatDuration(int64_t(double(gpuNs) / steps)) },
            { "their launch calls' CPU time per step", formatDuration(int64_t(double(launchNs) / steps)) },
            { "time in Optimizer.step per step", formatDuration(int64_t(double(rangeNs) / steps)) } };
        if (parameters > 0) evidence.facts.push_back({ "parameters (recorded)", std::to_string(parameters) });
        if (!className.empty()) evidence.facts.push_back({ "optimizer", std::string(className) });
        if (foreach) evidence.facts.push_back({ "foreach (recorded)", factText(*foreach) });
        if (fused) evidence.facts.push_back({ "fused (recorded)", factText(*fused) });
        if (!kernelList.empty()) evidence.facts.push_back({ "kernels", kernelList });

        // Saved: the launch calls (a multi-tensor kernel updates dozens of tensors per launch) and part of the
        // small kernels' GPU time; never more than the step's optimizer time (its host range, or its kernels).
        const int64_t saved = std::min(launchNs + int64_t(kGpuSaving * double(gpuNs)), std::max(rangeNs, gpuNs));
        Finding f;
        f.gain = context.gainOverSteps(saved,
            "foreach/fused kernels replace the per-parameter kernels: their launch calls' CPU time plus half of "
            "their GPU time, at most the time of the Optimizer.step calls",
            launchNs > 0 ? "medium" : "low");
        f.severity = f.gain->stepShare >= 0.20 ? Severity::Error
            : f.gain->stepShare >= 0.01        ? Severity::Warning
                                               : Severity::Info;
        const std::string who = className.empty() ? std::string("the optimizer") : std::string(className);
        f.title = who + ".step() launches " + formatCount(int64_t(perStep + 0.5)) + " per-parameter kernels per step"
            + (parameters > 0 ? " (" + oneDecimal(perParameterKernels) + " per parameter)" : std::string())
            + " instead of foreach or fused kernels (" + formatDuration(f.gain->perStepNs) + " per step)";
        f.detail = "Inside the Optimizer.step ranges the GPU runs small elementwise kernels, one set per parameter ("
            + counts
            + "): the step's single-tensor implementation loops over the parameters in Python and launches each "
              "update separately. The foreach implementation updates all parameters with a few multi-tensor "
              "kernels, and the fused one in a single kernel per parameter group, so the launches (each a few "
              "microseconds of CPU time) and the small kernels' poorly used GPU mostly go away. The kernels were "
              "attributed to the step by their launching call, on the same thread, inside the range.";
        f.evidence = std::move(evidence);
        addFixes(f, m, className);
        outcome.findings.push_back(std::move(f));
    }

private:
    static std::string factText(int64_t value) { return value < 0 ? "no such option" : value ? "True" : "False"; }

    static void addFixes(Finding& f, const TraceModel& m, std::string_view className) {
        const auto version = programFact(m, "tuneup.torch.version");
        const bool adam = className == "Adam" || className == "AdamW";
        const std::string cls = className.empty() ? "Adam" : std::string(className);
        if (version && *version < 20000) {
            f.fixPython = "optimizer = torch.optim." + cls
                + "(model.parameters(), lr=lr, foreach=True)  # PyTorch 1.x defaults to the per-parameter loop\n"
                  "# or NVIDIA APEX, where installed: from apex.optimizers import FusedAdam, FusedLAMB, FusedSGD";
        } else {
            f.fixPython = adam ? "optimizer = torch.optim." + cls
                    + "(model.parameters(), lr=lr, fused=True)  # PyTorch 2.x, CUDA, floating-point parameters\n"
                      "# or foreach=True (also the default on CUDA when foreach and fused are left unset)"
                               : "optimizer = torch.optim." + cls
                    + "(model.parameters(), lr=lr, foreach=True)  # or fused=True where your PyTorch has it for " + cls
                    + "\n# foreach is PyTorch 2.x's default on CUDA: remove an explicit foreach=False";
            f.fixPython += "\n# NVIDIA APEX on old stacks: from apex.optimizers import FusedAdam, FusedLAMB, FusedSGD";
        }
        f.fixCpp = "// torch::optim (LibTorch) has no foreach or fused option: its step loops over the parameters.\n"
                   "// Write the update with ATen's multi-tensor ops (PyTorch 2.x), e.g. for SGD with momentum:\n"
                   "at::_foreach_mul_(buffers, momentum);\n"
                   "at::_foreach_add_(buffers, grads);\n"
                   "at::_foreach_add_(params, buffers, -lr);\n"
                   "// Adam: at::_fused_adam_(params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, steps, lr, ...)\n"
                   "// or capture the step in a CUDA graph (at::cuda::CUDAGraph) to launch it as one.";
    }
};

} // namespace

std::unique_ptr<Rule> makeUnfusedOptimizer() {
    return std::make_unique<UnfusedOptimizer>();
}

} // namespace tuneup::rules
