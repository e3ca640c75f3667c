// amp-loss-scale-instability: a GradScaler that keeps skipping optimizer steps (inf/NaN gradients) past its
// first calibration, so that its scale keeps falling. See amp-loss-scale-instability.md.

#include "advise/rule_context.h"
#include "all_rules.h"

#include <algorithm>
#include <cstdio>

namespace tuneup::rules {

using namespace analysis;

namespace {

// A run of skips from the scaler's first update is its calibration: from its initial scale (65536) it halves
// until the gradients fit. It ends within a few steps; this many halvings bring 65536 to 2^-8.
constexpr size_t kMaxCalibrationSkips = 24;
// Past calibration, a healthy scaler skips once per growth interval (1 in 2000 by default).
constexpr double kMaxSkipShare = 0.01;
constexpr size_t kMinSkips = 3;
// A run made of this many updates, all skipped, applied no step at all.
constexpr size_t kMinUpdatesAllSkipped = 5;
constexpr double kErrorSkipShare = 0.25;

std::string scaleText(int64_t milli) {
    char text[32];
    std::snprintf(text, sizeof text, "%g", double(milli) / 1000.0);
    return text;
}

struct Update {
    int64_t timeNs = 0;
    bool skipped = false;
};

// Each update of the scaler with whether its step was skipped: tuneup.amp.skipped counts the skips and is
// recorded right after the update's tuneup.amp.updates, before the next update.
std::vector<Update> readUpdates(const std::vector<ProgramFact>& updates, const std::vector<ProgramFact>& skips) {
    std::vector<Update> out;
    out.reserve(updates.size());
    size_t s = 0;
    int64_t count = 0;
    for (size_t i = 0; i < updates.size(); ++i) {
        const int64_t next = i + 1 < updates.size() ? updates[i + 1].timeNs : INT64_MAX;
        int64_t now = count;
        while (s < skips.size() && skips[s].timeNs < next)
            now = skips[s++].value;
        out.push_back({ updates[i].timeNs, now > count });
        count = now;
    }
    return out;
}

bool isScaleUpdateOp(std::string_view name) {
    return name == "aten::_amp_update_scale" || name == "aten::_amp_update_scale_";
}

// From a trace without the bootstrap's facts (torch.profiler): each step that updates a GradScaler
// (aten::_amp_update_scale) is an update; one without an Optimizer.step range skipped its step.
std::vector<Update> updatesFromSteps(const RuleContext& context) {
    const TraceModel& m = context.model();
    const auto& steps = context.steps().detection.steps;
    std::vector<int64_t> updateTimes, stepRanges;
    for (size_t i = 0; i < m.cpuOps.size(); ++i)
        if (isScaleUpdateOp(m.str(m.cpuOps.name[i]))) updateTimes.push_back(m.cpuOps.startNs[i]);
    for (size_t i = 0; i < m.annotations.size(); ++i)
        if (m.str(m.annotations.name[i]).starts_with("Optimizer.step")) stepRanges.push_back(m.annotations.startNs[i]);
    std::sort(updateTimes.begin(), updateTimes.end());
    std::sort(stepRanges.begin(), stepRanges.end());
    const auto within = [](const std::vector<int64_t>& times, const Step& step) {
        const auto it = std::lower_bound(times.begin(), times.end(), step.startNs);
        return it != times.end() && *it < step.endNs;
    };
    std::vector<Update> updates;
    for (const Step& step : steps)
        if (within(updateTimes, step)) updates.push_back({ step.endNs, !within(stepRanges, step) });
    return updates;
}

class AmpLossScaleInstability final : public Rule {
public:
    const RuleInfo& info() const override {
        static const RuleInfo info { "amp-loss-scale-instability", "GradScaler keeps skipping steps",
            "The GradScaler finds inf/NaN gradients and skips the optimizer step again and again after its "
            "calibration, so its loss scale keeps falling and the skipped steps' work is wasted.",
            {}, false,
            "the GradScaler's updates and skipped steps, from tuneup's Python bootstrap; or CPU operators with "
            "steps and Optimizer.step ranges (aten::_amp_update_scale)" };
        return info;
    }

    void evaluate(const RuleContext& context, RuleOutcome& outcome) const override {
        const TraceModel& m = context.model();
        const auto enabled = programFact(m, "tuneup.amp.grad_scaler");
        if (!enabled) {
            if (!context.has(Input::CpuOps) || !context.has(Input::Steps) || !context.has(Input::OptimizerRanges)) {
                outcome.status = RuleStatus::NotEvaluated;
                outcome.reason = "needs the GradScaler's updates (recorded by tuneup's Python bootstrap), or "
                    + std::string(inputName(Input::CpuOps)) + " with steps and Optimizer.step ranges";
                return;
            }
            const std::vector<Update> updates = updatesFromSteps(context);
            if (updates.empty()) {
                outcome.reason = "no GradScaler update (aten::_amp_update_scale) in the steps";
                return;
            }
            // The trace's window need not begin at the scaler's first update: no calibration is assumed.
            judge(context, updates, 0, {},
                "the steps that update a GradScaler (aten::_amp_update_scale), skipped "
                "when they hold no Optimizer.step range (steps skipped inside a fused optimizer's kernels are not "
                "seen)",
                outcome);
            return;
        }
        if (*enabled == 0) {
            outcome.status = RuleStatus::NotApplicable;
            outcome.reason = "the GradScaler is disabled (enabled=False, or no GPU): nothing is skipped";
            return;
        }
        const auto skipFacts = programFactSeries(m, "tuneup.amp.skipped");
        if (std::any_of(skipFacts.begin(), skipFacts.end(), [](const ProgramFact& f) { return f.value < 0; })) {
            outcome.status = RuleStatus::NotEvaluated;
            outcome.reason = "the optimizer skips inside its own fused kernels (fused=True), or is not a "
                             "torch.optim optimizer: which steps were skipped is not known without a GPU sync";
            return;
        }
        const auto updateFacts = programFactSeries(m, "tuneup.amp.updates");
        if (updateFacts.empty()) {
            outcome.reason = "an enabled GradScaler, no update recorded";
            return;
        }
        const std::vector<Update> updates = readUpdates(updateFacts, skipFacts);
        // Calibration: the skips from the scaler's first update (the recording holds it) until its first applied
        // step, when there is one.
        size_t calibration = 0;
        if (updateFacts.front().value == 1) {
            while (calibration < updates.size() && updates[calibration].skipped)
                ++calibration;
            if (calibration == updates.size() || calibration > kMaxCalibrationSkips) calibration = 0;
        }
        judge(context, updates, calibration, programFactSeries(m, "tuneup.amp.scale_milli"),
            "tuneup's Python bootstrap followed the GradScaler: a step is skipped when GradScaler.step finds inf or "
            "NaN in the unscaled gradients and runs no optimizer step",
            outcome);
    }

private:
    static void judge(const RuleContext& context, const std::vector<Update>& updates, size_t calibration,
        const std::vector<ProgramFact>& scales, const std::string& how, RuleOutcome& outcome) {
        const size_t total = updates.size();
        const size_t skipped
            = size_t(std::count_if(updates.begin(), updates.end(), [](const Update& u) { return u.skipped; }));
        const size_t excess = skipped - calibration;
        const size_t after = total - calibration;
        const double share = after ? double(excess) / double(after) : 0.0;
        const bool allSkipped = total >= kMinUpdatesAllSkipped && skipped == total;
        if (!allSkipped && (excess < kMinSkips || share < kMaxSkipShare)) {
            outcome.reason = std::to_string(total) + " scaler updates, " + std::to_string(skipped) + " skipped ("
                + std::to_string(calibration) + " while calibrating)";
            return;
        }

        // The iteration's time from the updates themselves: skipped iterations have no optimizer step range, so
        // steps found from those ranges run two iterations together.
        const int64_t iterationNs
            = total > 1 ? (updates.back().timeNs - updates.front().timeNs) / int64_t(total - 1) : context.stepNs();
        Finding f;
        f.kind = FindingKind::Correctness; // wasted steps and a training that may not progress: whatever it costs
        f.severity = allSkipped || share >= kErrorSkipShare ? Severity::Error : Severity::Warning;
        f.sourceCalls = { "GradScaler.scale" };
        if (allSkipped) {
            f.title = "the GradScaler skipped all " + std::to_string(total)
                + " optimizer steps: the gradients overflow at every loss scale it tried";
        } else {
            f.title = "the GradScaler skipped " + std::to_string(excess) + " of " + std::to_string(after)
                + " optimizer steps after calibrating (" + formatPercent(share) + "): inf/NaN gradients keep recurring";
        }
        f.detail = how
            + "; the scaler then multiplies its scale by its backoff factor (0.5). After a few skips at the start, "
              "while the scale comes down from 65536 to a level the gradients fit (calibration, not counted "
              "here), a healthy scaler skips "
              "about once per growth interval (1 step in 2000). Skips that keep recurring mean that something "
              "overflows in fp16 whatever the scale: a loss computed in fp16 outside autocast's fp32 ops (a "
              "hand-written MSE, a sum over a large tensor), unnormalised targets or outliers in the data, a "
              "learning rate that makes the model diverge, or a custom op or attention score that overflows "
              "fp16. Each skipped step's forward and backward passes are wasted, and the scale keeps falling.";
        f.evidence.facts = { { "scaler updates", std::to_string(total) },
            { "skipped steps", std::to_string(skipped) + " (" + std::to_string(calibration) + " while calibrating)" },
            { "skipped after calibration",
                std::to_string(excess) + " of " + std::to_string(after) + " (" + formatPercent(share) + ")" } };
        if (!scales.empty()) {
            const auto lowest = std::min_element(scales.begin(), scales.end(),
                [](const ProgramFact& a, const ProgramFact& b) { return a.value < b.value; });
            f.evidence.facts.emplace_back("loss scale",
                scaleText(scales.front().value) + " at first, " + scaleText(lowest->value) + " at its lowest, "
                    + scaleText(scales.back().value) + " at the end");
        }
        for (size_t i = 1; i < total && f.evidence.spans.size() < 50; ++i)
            if (updates[i].skipped) f.evidence.spans.push_back({ updates[i - 1].timeNs, updates[i].timeNs });
        if (iterationNs > 0)
            f.gain = context.gainOverSteps(int64_t(excess) * iterationNs,
                "the skipped steps' iterations (the time between the scaler's updates), after calibration", "high");
        f.fixPython = "# Compute the loss in fp32 (autocast runs losses such as mse_loss and cross_entropy in fp32;\n"
                      "# a hand-written one in fp16 overflows): \n"
                      "with torch.autocast(\"cuda\", dtype=torch.float16):\n"
                      "    out = model(inputs)\n"
                      "loss = torch.nn.functional.mse_loss(out.float(), targets)\n"
                      "# Normalise targets and inputs; a robust loss (huber_loss) bounds outliers' gradients.\n"
                      "# On Ampere or newer GPUs, bf16 has fp32's range and needs no GradScaler:\n"
                      "with torch.autocast(\"cuda\", dtype=torch.bfloat16):\n"
                      "    loss = criterion(model(inputs), targets)";
        f.fixCpp = "// LibTorch has no GradScaler. Compute the loss in fp32, and prefer bf16 autocast, which\n"
                   "// needs no loss scaling:\n"
                   "at::autocast::set_autocast_dtype(at::kCUDA, at::kBFloat16);  // PyTorch 2.x\n"
                   "at::autocast::set_autocast_enabled(at::kCUDA, true);\n"
                   "auto out = model->forward(inputs);\n"
                   "at::autocast::set_autocast_enabled(at::kCUDA, false);\n"
                   "auto loss = torch::mse_loss(out.to(torch::kFloat), targets);";
        outcome.findings.push_back(std::move(f));
    }
};

} // namespace

std::unique_ptr<Rule> makeAmpLossScaleInstability() {
    return std::make_unique<AmpLossScaleInstability>();
}

} // namespace tuneup::rules
