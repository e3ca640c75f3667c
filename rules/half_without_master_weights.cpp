// half-without-master-weights: an optimizer updating fp16 parameters directly (a model made .half()),
// without fp32 master weights or loss scaling. See half-without-master-weights.md.

#include "advise/kernel_precision.h"
#include "advise/rule_context.h"
#include "all_rules.h"

#include <algorithm>

namespace tuneup::rules {

using namespace analysis;

namespace {

// tuneup.optimizer.family (docs/agent.md).
constexpr int64_t kFamilyOther = 0;

// In a torch.profiler trace with input types: the in-place ops (aten::add_, addcdiv_, ...) inside
// Optimizer.step ranges, which the per-parameter loop runs on each parameter and its state, by the precision of
// the tensor they write (their first input). foreach and fused steps take TensorLists, whose types are not
// recorded.
struct StepUpdates {
    size_t fp16 = 0, typed = 0;
    std::vector<EventRef> events; // the fp16 ones, capped
};

StepUpdates stepUpdates(const TraceModel& m) {
    std::vector<std::vector<TimeSpan>> steps(m.threads.size());
    for (size_t i = 0; i < m.annotations.size(); ++i)
        if (m.str(m.annotations.name[i]).starts_with("Optimizer.step") && m.annotations.thread[i] < steps.size())
            steps[m.annotations.thread[i]].push_back({ m.annotations.startNs[i], m.annotations.endNs[i] });
    StepUpdates u;
    const auto& ops = m.cpuOps;
    for (size_t i = 0; i < ops.size(); ++i) {
        const std::string_view name = m.str(ops.name[i]);
        if (!name.starts_with("aten::") || !name.ends_with("_") || name.starts_with("aten::_foreach")
            || ops.thread[i] >= steps.size())
            continue;
        const auto types = splitInputTypes(m.str(ops.inputTypes[i]));
        if (types.empty()) continue;
        const Precision written = torchTypePrecision(types.front());
        if (written == Precision::Unknown) continue;
        const auto& spans = steps[ops.thread[i]];
        if (std::none_of(spans.begin(), spans.end(),
                [&](const TimeSpan& s) { return ops.startNs[i] >= s.startNs && ops.startNs[i] < s.endNs; }))
            continue;
        ++u.typed;
        if (written != Precision::Fp16) continue;
        ++u.fp16;
        if (u.events.size() < 50) u.events.push_back({ EventTable::CpuOp, RowIndex(i) });
    }
    return u;
}

class HalfWithoutMasterWeights final : public Rule {
public:
    const RuleInfo& info() const override {
        static const RuleInfo info { "half-without-master-weights", "fp16 weights updated without fp32 master weights",
            "The optimizer updates fp16 parameters (a model made .half()) directly: updates below fp16's resolution "
            "are lost and small gradients underflow.",
            {}, false,
            "the precision of the optimizer's parameters, from tuneup's Python bootstrap; or CPU operators with "
            "input types inside Optimizer.step ranges" };
        return info;
    }

    void evaluate(const RuleContext& context, RuleOutcome& outcome) const override {
        const TraceModel& m = context.model();
        const auto fp16 = programFact(m, "tuneup.optimizer.params_fp16");
        if (!fp16) {
            evaluateOps(m, outcome);
            return;
        }
        const int64_t params = programFact(m, "tuneup.optimizer.params").value_or(0);
        const int64_t bf16 = programFact(m, "tuneup.optimizer.params_bf16").value_or(0);
        if (*fp16 <= 0) {
            outcome.reason = "no fp16 parameters in the optimizers' steps ("
                + (params > 0 ? std::to_string(params) + " parameters, " : std::string())
                + std::to_string(std::max<int64_t>(bf16, 0)) + " in bf16)";
            return;
        }
        // A third-party optimizer may keep fp32 copies of its own: say so rather than assert a bug.
        const bool other = programFact(m, "tuneup.optimizer.family").value_or(-1) == kFamilyOther;
        Finding f = finding(std::to_string(*fp16) + " fp16 parameters are",
            "tuneup's Python bootstrap read the parameters' dtype at the optimizer's first step: "
                + std::to_string(*fp16) + (params > 0 ? " of the optimizer's " + std::to_string(params) : std::string())
                + " parameters are torch.float16",
            other);
        f.evidence.facts = { { "fp16 parameters", std::to_string(*fp16) } };
        if (params > 0) f.evidence.facts.emplace_back("parameters of the last optimizer made", std::to_string(params));
        if (bf16 > 0) f.evidence.facts.emplace_back("bf16 parameters", std::to_string(bf16));
        outcome.findings.push_back(std::move(f));
    }

private:
    static void evaluateOps(const TraceModel& m, RuleOutcome& outcome) {
        const StepUpdates u = m.cpuOps.empty() ? StepUpdates {} : stepUpdates(m);
        if (u.typed == 0) {
            outcome.status = RuleStatus::NotEvaluated;
            outcome.reason = "needs the precision of the parameters the optimizer updates (recorded by tuneup's "
                             "Python bootstrap at each optimizer's first step), or CPU operators with input types "
                             "(record_shapes=True) inside Optimizer.step ranges from a per-parameter step (foreach "
                             "and fused steps record no types)";
            return;
        }
        if (u.fp16 == 0) {
            outcome.reason = std::to_string(u.typed) + " in-place ops in Optimizer.step ranges, none writing fp16";
            return;
        }
        Finding f = finding("the optimizer's parameters are fp16 and",
            "in Optimizer.step ranges, " + std::to_string(u.fp16) + " of " + std::to_string(u.typed)
                + " in-place ops (the per-parameter update of a parameter or its optimizer state) write "
                  "c10::Half tensors",
            false);
        f.evidence.facts = { { "in-place ops in Optimizer.step writing fp16",
            std::to_string(u.fp16) + " of " + std::to_string(u.typed) } };
        f.evidence.events = u.events;
        f.evidence.eventsTotal = u.fp16;
        outcome.findings.push_back(std::move(f));
    }

    // `what`: how the title names the parameters; `how`: what shows them fp16.
    static Finding finding(const std::string& what, const std::string& how, bool thirdParty) {
        Finding f;
        f.kind = FindingKind::Correctness;
        f.severity = thirdParty ? Severity::Warning : Severity::Error;
        f.sourceCalls = { "torch.nn.Module.half" };
        f.title = what + " updated directly by the optimizer: small updates round away and small gradients underflow";
        f.detail = how
            + ", so the weights themselves are fp16 (a model made .half(), or its parameters converted to fp16) and "
              "the optimizer writes its update into them. fp16 has 10 mantissa bits: an update smaller than about "
              "1/2048 of a weight is rounded away (with a learning rate of 1e-3 most updates are), and gradients "
              "below 6e-8 flush to zero, since no loss scaling applies to a model trained in fp16 throughout "
              "(torch's GradScaler refuses fp16 gradients). Mixed precision keeps the weights in fp32 (the master "
              "weights), runs the forward and backward passes in fp16 under autocast, and scales the loss so that "
              "gradients stay representable."
            + (thirdParty ? " The optimizer is not torch.optim's: if it keeps fp32 copies of the weights itself "
                            "(master weights), this does not apply."
                          : "");
        f.fixPython = "# Keep the weights in fp32; compute in fp16 under autocast, and scale the loss:\n"
                      "model = Net().cuda()                     # no .half()\n"
                      "optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)\n"
                      "scaler = torch.amp.GradScaler(\"cuda\")\n"
                      "for inputs, targets in loader:\n"
                      "    optimizer.zero_grad(set_to_none=True)\n"
                      "    with torch.autocast(\"cuda\", dtype=torch.float16):\n"
                      "        loss = criterion(model(inputs), targets)\n"
                      "    scaler.scale(loss).backward()\n"
                      "    scaler.step(optimizer)\n"
                      "    scaler.update()\n"
                      "# On Ampere or newer, dtype=torch.bfloat16 needs no GradScaler.";
        f.fixCpp = "// Keep the module in fp32 (no ->to(torch::kHalf)); run the forward pass under autocast:\n"
                   "at::autocast::set_autocast_enabled(at::kCUDA, true);  // PyTorch 2.x; 1.x: set_enabled(true)\n"
                   "auto loss = criterion(model->forward(inputs), targets);\n"
                   "at::autocast::set_autocast_enabled(at::kCUDA, false);\n"
                   "at::autocast::clear_cache();\n"
                   "// LibTorch has no GradScaler: scale the loss by hand (loss * scale, gradients / scale,\n"
                   "// skip the step on inf/NaN), or use bf16 autocast, which needs no scaling.";
        return f;
    }
};

} // namespace

std::unique_ptr<Rule> makeHalfWithoutMasterWeights() {
    return std::make_unique<HalfWithoutMasterWeights>();
}

} // namespace tuneup::rules
