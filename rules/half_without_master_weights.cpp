// half-without-master-weights: an optimizer updating fp16 parameters directly (a model made .half()),
// without fp32 master weights or loss scaling. See half-without-master-weights.md.

#include "advise/rule_context.h"
#include "all_rules.h"

namespace tuneup::rules {

using namespace analysis;

namespace {

// tuneup.optimizer.family (docs/agent.md).
constexpr int64_t kFamilyOther = 0;

class HalfWithoutMasterWeights final : public Rule {
public:
    const RuleInfo& info() const override {
        static const RuleInfo info { "half-without-master-weights", "fp16 weights updated without fp32 master weights",
            "The optimizer updates fp16 parameters (a model made .half()) directly: updates below fp16's resolution "
            "are lost and small gradients underflow.",
            {}, false, "the precision of the optimizer's parameters, from tuneup's Python bootstrap" };
        return info;
    }

    void evaluate(const RuleContext& context, RuleOutcome& outcome) const override {
        const TraceModel& m = context.model();
        const auto fp16 = programFact(m, "tuneup.optimizer.params_fp16");
        if (!fp16) {
            outcome.status = RuleStatus::NotEvaluated;
            outcome.reason = "needs the precision of the parameters the optimizer updates (recorded by tuneup's "
                             "Python bootstrap at each optimizer's first step)";
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

        Finding f;
        f.kind = FindingKind::Correctness;
        f.severity = other ? Severity::Warning : Severity::Error;
        f.sourceCalls = { "torch.nn.Module.half" };
        f.title = std::to_string(*fp16)
            + " fp16 parameters are updated directly by the optimizer: small updates "
              "round away and small gradients underflow";
        f.detail = "tuneup's Python bootstrap read the parameters' dtype at the optimizer's first step: "
            + std::to_string(*fp16) + (params > 0 ? " of the optimizer's " + std::to_string(params) : std::string())
            + " parameters are torch.float16, so the weights themselves are fp16 (a model made .half(), or "
              "its parameters converted to fp16) and the optimizer writes its update into them. fp16 has 10 "
              "mantissa bits: an update smaller than about 1/2048 of a weight is rounded away (with a learning "
              "rate of 1e-3 most updates are), and gradients below 6e-8 flush to zero, since no loss scaling "
              "applies to a model trained in fp16 throughout (torch's GradScaler refuses fp16 gradients). Mixed "
              "precision keeps the weights in fp32 (the master weights), runs the forward and backward passes in "
              "fp16 under autocast, and scales the loss so that gradients stay representable."
            + (other ? " The optimizer is not torch.optim's: if it keeps fp32 copies of the weights itself "
                       "(master weights), this does not apply."
                     : "");
        f.evidence.facts = { { "fp16 parameters", std::to_string(*fp16) } };
        if (params > 0) f.evidence.facts.emplace_back("parameters of the last optimizer made", std::to_string(params));
        if (bf16 > 0) f.evidence.facts.emplace_back("bf16 parameters", std::to_string(bf16));
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
        outcome.findings.push_back(std::move(f));
    }
};

} // namespace

std::unique_ptr<Rule> makeHalfWithoutMasterWeights() {
    return std::make_unique<HalfWithoutMasterWeights>();
}

} // namespace tuneup::rules
