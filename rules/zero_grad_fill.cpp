// zero-grad-fill: gradients zeroed by fill kernels or memsets each step instead of being set to None.
// See zero-grad-fill.md.

#include "advise/rule_context.h"
#include "all_rules.h"

#include <algorithm>
#include <map>

namespace tuneup::rules {

using namespace analysis;

namespace {

// tuneup.torch.version (major * 10000 + minor * 100 + patch) as PyTorch writes it: 21100 -> "2.11.0".
std::string torchVersionText(int64_t version) {
    return std::to_string(version / 10000) + "." + std::to_string(version / 100 % 100) + "."
        + std::to_string(version % 100);
}

// Optimizer.zero_grad#SGD.zero_grad (torch.optim), and ranges a user or a bootstrap names zero_grad.
bool isZeroGradRange(std::string_view name) {
    return name.starts_with("Optimizer.zero_grad") || name == "zero_grad" || name.ends_with(".zero_grad")
        || name.find(".zero_grad#") != std::string_view::npos;
}

// Where the host asked for a piece of GPU work: its launching API call, else its CPU op.
struct LaunchSite {
    ThreadIndex thread = 0;
    int64_t timeNs = 0;
    int64_t launchNs = 0; // the API call's duration, 0 when only the op is known
    bool known = false;
};

LaunchSite launchSite(const TraceModel& m, RowIndex apiCall, RowIndex cpuOp) {
    LaunchSite site;
    if (apiCall != kNoRow) {
        site = { m.apiCalls.thread[size_t(apiCall)], m.apiCalls.startNs[size_t(apiCall)],
            m.apiCalls.endNs[size_t(apiCall)] - m.apiCalls.startNs[size_t(apiCall)], true };
    } else if (cpuOp != kNoRow) {
        site = { m.cpuOps.thread[size_t(cpuOp)], m.cpuOps.startNs[size_t(cpuOp)], 0, true };
    }
    return site;
}

struct ZeroGradCall {
    RowIndex annotation = kNoRow;
    int64_t kernels = 0, memsets = 0, gpuNs = 0, launchNs = 0;
};

class ZeroGradFill final : public Rule {
public:
    const RuleInfo& info() const override {
        static const RuleInfo info { "zero-grad-fill", "zero_grad() fills gradients instead of freeing them",
            "optimizer.zero_grad() launches a fill kernel or memset per parameter each step instead of setting "
            "the gradients to None.",
            { Input::OptimizerRanges } };
        return info;
    }

    void evaluate(const RuleContext& context, RuleOutcome& outcome) const override {
        const TraceModel& m = context.model();
        const auto& a = m.annotations;
        // zero_grad ranges per CPU thread, in time order (ranges on one thread do not overlap).
        std::map<ThreadIndex, std::vector<size_t>> ranges;
        std::vector<ZeroGradCall> calls;
        std::map<size_t, size_t> callOf; // annotation row -> index in calls
        for (size_t i = 0; i < a.size(); ++i)
            if (isZeroGradRange(m.str(a.name[i]))) {
                // Nested zero_grad ranges (a bootstrap range around torch's own) count once: the outer one.
                if (a.parent[i] != kNoRow && isZeroGradRange(m.str(a.name[size_t(a.parent[i])]))) continue;
                ranges[a.thread[i]].push_back(i);
                callOf[i] = calls.size();
                calls.push_back({ RowIndex(i) });
            }
        if (calls.empty()) {
            outcome.status = RuleStatus::NotEvaluated;
            outcome.reason = "needs Optimizer.zero_grad ranges (the trace has other optimizer ranges only; "
                             "model.zero_grad() and C++ loops leave no range)";
            return;
        }
        if (!m.hasGpuActivity()) {
            evaluateOnHost(context, calls, outcome);
            return;
        }
        // The zero_grad range a launch at (thread, time) happened in, if any.
        auto rangeAt = [&](const LaunchSite& site) -> std::optional<size_t> {
            if (!site.known) return std::nullopt;
            auto it = ranges.find(site.thread);
            if (it == ranges.end()) return std::nullopt;
            const auto& rows = it->second;
            auto r = std::upper_bound(
                rows.begin(), rows.end(), site.timeNs, [&](int64_t t, size_t row) { return t < a.startNs[row]; });
            if (r == rows.begin()) return std::nullopt;
            --r;
            if (site.timeNs > a.endNs[*r]) return std::nullopt;
            return *r;
        };

        Evidence evidence;
        std::map<std::string_view, int64_t> kernelNames;
        int64_t kernels = 0, memsets = 0, gpuNs = 0, launchNs = 0, unlinked = 0;
        const auto& k = m.kernels;
        for (size_t i = 0; i < k.size(); ++i) {
            const LaunchSite site = launchSite(m, k.apiCall[i], k.cpuOp[i]);
            unlinked += !site.known;
            const auto range = rangeAt(site);
            if (!range) continue;
            ZeroGradCall& call = calls[callOf[*range]];
            ++call.kernels;
            call.gpuNs += k.endNs[i] - k.startNs[i];
            call.launchNs += site.launchNs;
            ++kernelNames[m.str(k.name[i])];
            if (evidence.events.size() < 50) evidence.events.push_back({ EventTable::Kernel, RowIndex(i) });
        }
        const auto& s = m.memsets;
        for (size_t i = 0; i < s.size(); ++i) {
            const LaunchSite site = launchSite(m, s.apiCall[i], s.cpuOp[i]);
            const auto range = rangeAt(site);
            if (!range) continue;
            ZeroGradCall& call = calls[callOf[*range]];
            ++call.memsets;
            call.gpuNs += s.endNs[i] - s.startNs[i];
            call.launchNs += site.launchNs;
            if (evidence.events.size() < 50) evidence.events.push_back({ EventTable::Memset, RowIndex(i) });
        }
        size_t filling = 0;
        int64_t mostPerCall = 0;
        for (const ZeroGradCall& c : calls) {
            kernels += c.kernels;
            memsets += c.memsets;
            gpuNs += c.gpuNs;
            launchNs += c.launchNs;
            if (c.kernels + c.memsets > 0) ++filling;
            mostPerCall = std::max(mostPerCall, c.kernels + c.memsets);
        }
        if (kernels + memsets == 0) {
            outcome.reason
                = std::to_string(calls.size()) + " zero_grad calls launch no GPU work: gradients are set to None";
            if (unlinked > 0 && size_t(unlinked) == k.size())
                outcome.reason += " (kernels could not be linked to their launches: nothing to attribute)";
            return;
        }

        const int64_t work = kernels + memsets;
        evidence.eventsTotal = size_t(work);
        for (const ZeroGradCall& c : calls)
            if (c.kernels + c.memsets > 0 && evidence.spans.size() < 20)
                evidence.spans.push_back({ a.startNs[size_t(c.annotation)], a.endNs[size_t(c.annotation)] });
        std::string names;
        for (const auto& [name, count] : kernelNames) {
            if (!names.empty()) names += "; ";
            names += std::to_string(count) + " x " + std::string(name.substr(0, 120));
            if (names.size() > 400) break;
        }
        const int64_t perCall = work / int64_t(filling);
        evidence.facts = { { "zero_grad calls",
                               std::to_string(calls.size()) + " (" + std::to_string(filling) + " launch GPU work)" },
            { "fill kernels", std::to_string(kernels) }, { "memsets", std::to_string(memsets) },
            { "per zero_grad call", std::to_string(perCall) + " (most: " + std::to_string(mostPerCall) + ")" },
            { "GPU time", formatDuration(gpuNs) }, { "launch calls' CPU time", formatDuration(launchNs) } };
        if (!names.empty()) evidence.facts.push_back({ "kernels", names });
        if (const auto setToNone = programFact(m, "tuneup.zero_grad.set_to_none"))
            evidence.facts.push_back({ "zero_grad(set_to_none=…) (recorded)", *setToNone ? "True" : "False" });

        Finding f;
        f.gain = context.gainOverSteps(gpuNs + launchNs,
            "set_to_none=True launches nothing: the fill kernels' GPU time plus the CPU time of their launch calls",
            "high");
        f.severity = f.gain->stepShare >= 0.20 ? Severity::Error
            : f.gain->stepShare >= 0.01        ? Severity::Warning
                                               : Severity::Info;
        f.title = "zero_grad() zeroes gradients with " + std::to_string(perCall) + " fill "
            + (memsets > kernels ? "memsets" : "kernels") + " per call (" + std::to_string(work) + " in "
            + std::to_string(filling) + " calls, " + formatDuration(f.gain->perStepNs)
            + " per step) instead of setting them to None";
        f.detail = "Each Optimizer.zero_grad range launches GPU work: one fill per gradient tensor ("
            + std::to_string(perCall)
            + " per call here), measured from the kernels and memsets whose launching call lies inside a zero_grad "
              "range on the same thread. With set_to_none=True (PyTorch's default since 2.0) zero_grad frees the "
              "gradients instead; backward then writes fresh gradients rather than adding to zeroed ones, which "
              "also saves memory between steps.";
        f.evidence = std::move(evidence);
        addFixes(f, m);
        outcome.findings.push_back(std::move(f));
    }

private:
    // PyTorch 2.0 made set_to_none=True zero_grad's default: under a recorded 2.x the fills come from code that
    // asks for zeros (set_to_none=False, or gradients zeroed by hand), so the fix is to stop asking; under 1.x,
    // to ask for None.
    static void addFixes(Finding& f, const TraceModel& m) {
        const auto version = programFact(m, "tuneup.torch.version");
        if (version) f.evidence.facts.push_back({ "PyTorch (recorded)", torchVersionText(*version) });
        if (version && *version >= 20000)
            f.fixPython = "optimizer.zero_grad()  # PyTorch 2.x sets gradients to None by default:\n"
                          "# drop set_to_none=False, and any p.grad.zero_() / p.grad.fill_(0) of your own";
        else if (version)
            f.fixPython = "optimizer.zero_grad(set_to_none=True)  # PyTorch 1.x zeroes by default (None from 2.0)\n"
                          "# or: model.zero_grad(set_to_none=True)";
        else
            f.fixPython = "optimizer.zero_grad(set_to_none=True)  # default since PyTorch 2.0\n"
                          "# or: model.zero_grad(set_to_none=True)";
        f.fixCpp = "optimizer.zero_grad(/*set_to_none=*/true);\n"
                   "// or, for parameters you manage yourself:\n"
                   "for (auto& p : model->parameters()) p.mutable_grad().reset();";
    }

    // No GPU activity was recorded (CPU training, or GPU capture off): there are no fills to count, but
    // the program's recorded set_to_none says whether zero_grad fills, and its ranges what that costs.
    static void evaluateOnHost(
        const RuleContext& context, const std::vector<ZeroGradCall>& calls, RuleOutcome& outcome) {
        const TraceModel& m = context.model();
        const auto setToNone = programFact(m, "tuneup.zero_grad.set_to_none");
        if (!setToNone) {
            outcome.status = RuleStatus::NotEvaluated;
            outcome.reason = "needs " + std::string(inputName(Input::GpuKernels))
                + ", or the zero_grad set_to_none setting (recorded by tuneup's Python bootstrap)";
            return;
        }
        if (*setToNone) {
            outcome.reason = std::to_string(calls.size()) + " zero_grad calls with set_to_none=True (recorded)";
            return;
        }
        Evidence evidence;
        int64_t hostNs = 0;
        for (const ZeroGradCall& c : calls) {
            const size_t row = size_t(c.annotation);
            hostNs += m.annotations.endNs[row] - m.annotations.startNs[row];
            if (evidence.events.size() < 50) evidence.events.push_back({ EventTable::Annotation, c.annotation });
            if (evidence.spans.size() < 20)
                evidence.spans.push_back({ m.annotations.startNs[row], m.annotations.endNs[row] });
        }
        evidence.eventsTotal = calls.size();
        evidence.facts = { { "zero_grad(set_to_none=…) (recorded)", "False" },
            { "zero_grad calls", std::to_string(calls.size()) },
            { "time in zero_grad",
                formatDuration(hostNs) + " (" + formatDuration(context.perStep(hostNs)) + " per step)" },
            { "GPU activity", "none recorded (CPU training, or GPU capture off): the fills themselves are not seen" } };
        Finding f;
        f.gain = context.gainOverSteps(hostNs,
            "set_to_none=True makes zero_grad drop the gradients instead of filling them: the time the zero_grad "
            "calls take now, measured on the host",
            "medium");
        f.severity = f.gain->stepShare >= 0.20 ? Severity::Error
            : f.gain->stepShare >= 0.01        ? Severity::Warning
                                               : Severity::Info;
        f.title = "zero_grad(set_to_none=False) fills every gradient with zeros (" + formatDuration(f.gain->perStepNs)
            + " per step) instead of setting them to None";
        f.detail = "The program called zero_grad with set_to_none=False (recorded), so "
                   "each call writes zeros into every gradient tensor: on a GPU one fill kernel per parameter. The "
                   "calls took "
            + formatDuration(context.perStep(hostNs))
            + " per step here. With set_to_none=True (PyTorch's default since 2.0) zero_grad frees the gradients "
              "instead and backward writes fresh ones, which also saves memory between steps.";
        f.evidence = std::move(evidence);
        addFixes(f, m);
        outcome.findings.push_back(std::move(f));
    }
};

} // namespace

std::unique_ptr<Rule> makeZeroGradFill() {
    return std::make_unique<ZeroGradFill>();
}

} // namespace tuneup::rules
