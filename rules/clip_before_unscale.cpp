// clip-before-unscale: gradients clipped while a GradScaler still has them multiplied by the loss scale.
// See clip-before-unscale.md.

#include "advise/rule_context.h"
#include "all_rules.h"

namespace tuneup::rules {

using namespace analysis;

namespace {

class ClipBeforeUnscale final : public Rule {
public:
    const RuleInfo& info() const override {
        static const RuleInfo info { "clip-before-unscale", "Gradients clipped before GradScaler.unscale_",
            "clip_grad_norm_ runs on gradients still multiplied by the loss scale: the clipping threshold is off "
            "by the scale factor.",
            {}, false, "the GradScaler's calls and gradient clipping, from tuneup's Python bootstrap" };
        return info;
    }

    void evaluate(const RuleContext& context, RuleOutcome& outcome) const override {
        const TraceModel& m = context.model();
        const auto scaler = programFact(m, "tuneup.amp.grad_scaler");
        if (!scaler) {
            outcome.status = RuleStatus::NotEvaluated;
            outcome.reason = "needs the GradScaler's calls and gradient clipping (recorded by tuneup's Python "
                             "bootstrap)";
            return;
        }
        const int64_t before = programFact(m, "tuneup.amp.clip_before_unscale").value_or(0);
        const int64_t after = programFact(m, "tuneup.amp.clip_after_unscale").value_or(0);
        if (*scaler == 0) {
            outcome.status = RuleStatus::NotApplicable;
            outcome.reason = "the GradScaler is disabled (enabled=False, or no GPU): gradients are not scaled";
            return;
        }
        if (before == 0) {
            outcome.reason = after > 0 ? std::to_string(after) + " gradient clippings, all after unscale_"
                                       : "an enabled GradScaler, no gradient clipping";
            return;
        }
        Finding f;
        f.kind = FindingKind::Correctness;
        f.severity = Severity::Error;
        f.sourceCalls = { "torch.nn.utils.clip_grad_norm_", "torch.nn.utils.clip_grad_value_" };
        f.title = std::to_string(before) + " of " + std::to_string(before + after)
            + " gradient clippings ran before GradScaler.unscale_: they clip scaled gradients";
        f.detail = "tuneup's Python bootstrap saw torch.nn.utils.clip_grad_norm_ (or clip_grad_value_) called after "
                   "GradScaler.scale(loss) and before GradScaler.unscale_ in the same iteration. The gradients are "
                   "then still multiplied by the loss scale (65536 at first, whatever the scaler has reached "
                   "later), so max_norm is compared with a norm that many times too large: nearly every step is "
                   "clipped, to an update the scale factor too small, and the clipping changes whenever the scale "
                   "does. Unscale first: GradScaler.step then does not unscale again.";
        f.evidence.facts = { { "clippings before unscale_", std::to_string(before) },
            { "clippings after unscale_", std::to_string(after) } };
        const size_t steps = context.stepCount();
        if (steps > 0) f.evidence.facts.emplace_back("steps", std::to_string(steps));
        f.fixPython = "scaler.scale(loss).backward()\n"
                      "scaler.unscale_(optimizer)            # the gradients as they truly are\n"
                      "torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm=1.0)\n"
                      "scaler.step(optimizer)                # does not unscale twice\n"
                      "scaler.update()";
        f.fixCpp = "// LibTorch has no GradScaler; when scaling the loss by hand, divide the gradients by the\n"
                   "// scale before clipping:\n"
                   "for (auto& p : model->parameters())\n"
                   "    if (p.grad().defined()) p.mutable_grad().div_(scale);\n"
                   "torch::nn::utils::clip_grad_norm_(model->parameters(), /*max_norm=*/1.0);";
        outcome.findings.push_back(std::move(f));
    }
};

} // namespace

std::unique_ptr<Rule> makeClipBeforeUnscale() {
    return std::make_unique<ClipBeforeUnscale>();
}

} // namespace tuneup::rules
