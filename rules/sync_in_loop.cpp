// sync-in-loop: the host synchronises with the GPU inside the training step (.item(), .cpu(),
// torch.cuda.synchronize(), blocking copies) and the GPU runs dry. See sync-in-loop.md.

#include "advise/rule_context.h"
#include "all_rules.h"

#include <algorithm>
#include <map>

namespace tuneup::rules {

using namespace analysis;

namespace {

// Below this share of the step time the GPU idle after synchronisations is not worth a finding.
constexpr double kMinShare = 0.02;
// CPU and GPU clocks may disagree by a microsecond or two (the breakdown allows as much).
constexpr int64_t kSlackNs = 2'000;

bool isSyncCall(std::string_view name) {
    return name.find("Synchronize") != std::string_view::npos // cuda/hip Device/Stream/Event, cuCtx/cuStream/cuEvent
        || name == "cudaMemcpy" || name.starts_with("cudaMemcpy_v") || name == "cuMemcpyDtoH_v2"
        || name == "cuMemcpyHtoD_v2" || name == "cuMemcpyDtoH" || name == "hipMemcpy";
}

// One place where the host blocked until the GPU caught up.
struct SyncPoint {
    TimeSpan span;
    EventRef event;
    std::string_view api; // cudaStreamSynchronize, ...
    RowIndex cpuOp = kNoRow;
};

class SyncInLoop final : public Rule {
public:
    const RuleInfo& info() const override {
        static const RuleInfo info { "sync-in-loop", "Host-GPU synchronisation inside the step",
            "The step waits for the GPU (.item(), .cpu(), torch.cuda.synchronize(), blocking copies) and the GPU "
            "runs out of queued work.",
            { Input::GpuKernels, Input::Steps } };
        return info;
    }

    void evaluate(const RuleContext& context, RuleOutcome& outcome) const override {
        const TraceModel& m = context.model();
        if (m.apiCalls.empty() && m.syncs.empty()) {
            outcome.status = RuleStatus::NotEvaluated;
            outcome.reason = "needs CUDA runtime/driver API calls or synchronization records";
            return;
        }
        std::vector<SyncPoint> points;
        std::vector<uint64_t> seenCorrelations;
        const auto& api = m.apiCalls;
        for (size_t i = 0; i < api.size(); ++i) {
            const std::string_view name = m.str(api.name[i]);
            if (!isSyncCall(name)) continue;
            points.push_back(
                { { api.startNs[i], api.endNs[i] }, { EventTable::ApiCall, RowIndex(i) }, name, api.cpuOp[i] });
            if (api.correlation[i]) seenCorrelations.push_back(api.correlation[i]);
        }
        std::sort(seenCorrelations.begin(), seenCorrelations.end());
        const auto& sy = m.syncs;
        for (size_t i = 0; i < sy.size(); ++i) {
            if (sy.type[i] == SyncType::StreamWaitEvent) // the GPU waits, not the host
                continue;
            if (sy.correlation[i]
                && std::binary_search(seenCorrelations.begin(), seenCorrelations.end(), sy.correlation[i]))
                continue; // the API call is already a sync point
            if (sy.apiCall[i] != kNoRow && !isSyncCall(m.str(api.name[size_t(sy.apiCall[i])])))
                continue; // CUPTI reports cudaEventQuery/cudaStreamQuery too: they do not block
            RowIndex op = sy.cpuOp[i];
            if (op == kNoRow && sy.apiCall[i] != kNoRow) op = api.cpuOp[size_t(sy.apiCall[i])];
            points.push_back(
                { { sy.startNs[i], sy.endNs[i] }, { EventTable::Sync, RowIndex(i) }, syncTypeName(sy.type[i]), op });
        }
        std::sort(points.begin(), points.end(),
            [](const SyncPoint& x, const SyncPoint& y) { return x.span.startNs < y.span.startNs; });

        // Copy direction of the copies each CPU op made (to tell .cpu() from .to("cuda")).
        std::map<RowIndex, CopyKind> copyOfOp;
        for (size_t i = 0; i < m.memcpys.size(); ++i)
            if (m.memcpys.cpuOp[i] != kNoRow) copyOfOp[m.memcpys.cpuOp[i]] = m.memcpys.copyKind[i];

        // The cause of a sync point, for the user: the outermost CPU op around it, with the copy direction.
        auto causeOf = [&](const SyncPoint& p) -> std::string {
            if (p.cpuOp == kNoRow) {
                const std::string call(p.api);
                if (call.find("Device") != std::string::npos || call.find("Ctx") != std::string::npos
                    || call.find("context") != std::string::npos)
                    return call + " outside any operator (torch.cuda.synchronize())";
                if (call.find("Event") != std::string::npos || call.find("event") != std::string::npos)
                    return call + " outside any operator (event.synchronize(), event.elapsed_time())";
                if (call.find("Stream") != std::string::npos || call.find("stream") != std::string::npos)
                    return call + " outside any operator (stream.synchronize())";
                return call + " outside any operator (a blocking copy)";
            }
            RowIndex top = p.cpuOp;
            bool item = false, nonzero = false;
            for (RowIndex r = p.cpuOp; r != kNoRow; r = m.cpuOps.parent[size_t(r)]) {
                const std::string_view n = m.str(m.cpuOps.name[size_t(r)]);
                item |= n == "aten::item" || n == "aten::_local_scalar_dense" || n == "aten::is_nonzero";
                nonzero |= n == "aten::nonzero" || n == "aten::masked_select" || n == "aten::unique"
                    || n == "aten::_unique2";
                top = r;
            }
            std::string cause(m.str(m.cpuOps.name[size_t(top)]));
            if (cause == "aten::is_nonzero")
                cause += " (a GPU tensor used as a Python bool: if t:, assert t, while t:)";
            else if (item)
                cause += " (reads a GPU scalar: .item(), float(t), print(t))";
            else if (nonzero)
                cause += " (output size depends on GPU data)";
            auto copy = copyOfOp.find(p.cpuOp);
            if (copy != copyOfOp.end() && !item)
                cause += copy->second == CopyKind::DtoH ? " (copy to the host)"
                    : copy->second == CopyKind::HtoD    ? " (blocking copy to the GPU)"
                                                        : "";
            return cause;
        };

        // Attribute each sync-caused idle gap to the sync point the host was in when the GPU ran dry.
        const StepAnalysis& steps = context.steps();
        std::vector<int64_t> idleAfter(points.size(), 0);
        int64_t stallNs = 0;
        size_t stalls = 0;
        for (const IdleGap& g : steps.gaps) {
            if (g.syncNs() <= 0) continue;
            stallNs += g.syncNs();
            ++stalls;
            auto it = std::upper_bound(points.begin(), points.end(), g.span.startNs,
                [](int64_t t, const SyncPoint& p) { return t < p.span.startNs; });
            // The latest-starting sync point that began before the gap and lasted until it opened.
            while (it != points.begin()) {
                --it;
                if (it->span.endNs + kSlackNs >= g.span.startNs) {
                    idleAfter[size_t(it - points.begin())] += g.syncNs();
                    break;
                }
                if (g.span.startNs - it->span.startNs > 10'000'000) break;
            }
        }
        // Sync points inside steps, grouped by cause.
        struct Cause {
            size_t count = 0;
            int64_t idleNs = 0, blockedNs = 0;
            std::vector<size_t> points;
        };
        std::map<std::string, Cause> causes;
        size_t inSteps = 0;
        const auto& st = steps.detection.steps;
        for (size_t i = 0; i < points.size(); ++i) {
            const int64_t t = points[i].span.startNs;
            auto s = std::upper_bound(
                st.begin(), st.end(), t, [](int64_t x, const Step& step) { return x < step.startNs; });
            if (s == st.begin() || t >= std::prev(s)->endNs) continue;
            ++inSteps;
            Cause& c = causes[causeOf(points[i])];
            ++c.count;
            c.idleNs += idleAfter[i];
            c.blockedNs += points[i].span.durationNs();
            c.points.push_back(i);
        }
        const int64_t totalStep = context.totalStepNs();
        const double share = totalStep > 0 ? double(stallNs) / double(totalStep) : 0.0;
        const double perStepCount = st.empty() ? 0.0 : double(inSteps) / double(st.size());
        char perStepText[32];
        snprintf(perStepText, sizeof perStepText, "%.1f", perStepCount);
        if (inSteps == 0) {
            outcome.reason = std::to_string(points.size()) + " synchronisations in the trace, none inside the "
                + std::to_string(st.size()) + " steps";
            return;
        }
        if (share < kMinShare) {
            outcome.reason = std::to_string(inSteps) + " synchronisations inside " + std::to_string(st.size())
                + " steps (" + perStepText + " per step); the GPU idles after them for "
                + formatDuration(context.perStep(stallNs)) + " per step (" + formatPercent(share)
                + " of step time, below the " + formatPercent(kMinShare) + " threshold)";
            return;
        }

        std::vector<std::pair<std::string, Cause>> ranked(causes.begin(), causes.end());
        std::sort(ranked.begin(), ranked.end(), [](const auto& x, const auto& y) {
            return x.second.idleNs != y.second.idleNs ? x.second.idleNs > y.second.idleNs
                                                      : x.second.count > y.second.count;
        });
        Evidence evidence;
        evidence.facts = { { "synchronisations in steps", std::to_string(inSteps) + " (" + perStepText + " per step)" },
            { "GPU idle after them",
                formatDuration(context.perStep(stallNs)) + " per step (" + formatPercent(share) + " of step time, "
                    + std::to_string(stalls) + " idle gaps)" } };
        bool anyItem = false, anyDeviceSync = false, anyEventSync = false, anyToHost = false, anyToDevice = false,
             anyDynamic = false;
        for (const auto& [cause, c] : ranked) {
            if (evidence.facts.size() < 10) {
                char perStep[32];
                snprintf(perStep, sizeof perStep, "%.1f", double(c.count) / double(st.size()));
                evidence.facts.push_back({ cause,
                    std::to_string(c.count) + " x (" + perStep + " per step); per step the host blocked "
                        + formatDuration(context.perStep(c.blockedNs)) + " and the GPU idled after them "
                        + formatDuration(context.perStep(c.idleNs)) });
            }
            anyItem |= cause.find("GPU scalar") != std::string::npos || cause.find("Python bool") != std::string::npos;
            anyDeviceSync |= cause.find("torch.cuda.synchronize()") != std::string::npos;
            anyEventSync |= cause.find("event.synchronize()") != std::string::npos
                || cause.find("stream.synchronize()") != std::string::npos;
            anyToHost |= cause.find("copy to the host") != std::string::npos;
            anyToDevice |= cause.find("blocking copy to the GPU") != std::string::npos;
            anyDynamic |= cause.find("depends on GPU data") != std::string::npos;
        }
        // Events: the sync points that cost the most idle first.
        std::vector<size_t> order;
        for (const auto& [cause, c] : ranked)
            order.insert(order.end(), c.points.begin(), c.points.end());
        std::stable_sort(order.begin(), order.end(), [&](size_t x, size_t y) { return idleAfter[x] > idleAfter[y]; });
        for (size_t i : order) {
            if (evidence.events.size() >= 50) break;
            evidence.events.push_back(points[i].event);
            if (evidence.spans.size() < 20 && idleAfter[i] > 0) evidence.spans.push_back(points[i].span);
        }
        evidence.eventsTotal = inSteps;

        Finding f;
        f.gain = context.gainOverSteps(stallNs,
            "without the synchronisations the host would queue work ahead and the GPU idle that follows each one "
            "would go",
            "medium");
        f.severity = share >= 0.20 ? Severity::Error : Severity::Warning;
        f.title = std::string(perStepText) + " host-GPU synchronisations per step leave the GPU idle "
            + formatDuration(f.gain->perStepNs) + " per step (" + formatPercent(share) + "); most from "
            + ranked.front().first;
        f.detail
            = "Each synchronisation (cuda*Synchronize, a blocking cudaMemcpy, or a synchronization record) makes "
              "the host wait until the GPU has finished everything queued; afterwards the GPU idles until the host "
              "has launched new work. Measured: the idle gaps of the step that open while the host is inside a "
              "synchronisation, attributed to it. Typical causes are loss.item() or print() of a GPU tensor every "
              "step, .cpu()/.numpy(), torch.cuda.synchronize(), copies with non_blocking=False, and ops whose "
              "output size depends on GPU data (nonzero, masked_select, boolean indexing).";
        f.evidence = std::move(evidence);
        std::string py, cpp;
        if (anyItem || anyToHost) {
            py += "# Log every N steps, and keep running sums on the GPU:\n"
                  "running_loss += loss.detach()          # no .item() in the loop\n"
                  "if step % 100 == 0:\n"
                  "    print(step, (running_loss / 100).item()); running_loss.zero_()\n";
            cpp += "running_loss += loss.detach();          // no .item<float>() every step\n"
                   "if (step % 100 == 0) {\n"
                   "  std::cout << step << ' ' << (running_loss / 100).item<float>() << '\\n';\n"
                   "  running_loss.zero_();\n"
                   "}\n";
        }
        if (anyToDevice) {
            py += "x = x.pin_memory().to('cuda', non_blocking=True)  # or DataLoader(pin_memory=True)\n";
            cpp += "auto x = batch.pin_memory().to(torch::kCUDA, /*non_blocking=*/true);\n";
        }
        if (anyDeviceSync) {
            py += "# remove torch.cuda.synchronize() from the loop (time with CUDA events instead)\n";
            cpp += "// remove torch::cuda::synchronize() from the loop\n";
        }
        if (anyEventSync) {
            py += "# read CUDA event timings (elapsed_time) every N steps, not every step\n";
            cpp += "// query event timings every N steps, not every step\n";
        }
        if (anyDynamic) py += "# avoid data-dependent shapes: torch.where(mask, x, 0) instead of x[mask]\n";
        py += "torch.cuda.set_sync_debug_mode(\"warn\")  # reports every synchronising call with its stack";
        if (cpp.empty())
            cpp = "// read GPU values back only every N steps; copy with non_blocking=true from pinned memory\n";
        cpp += "c10::cuda::warning_state().set_sync_debug_mode(c10::cuda::SyncDebugMode::L_WARN);";
        f.fixPython = std::move(py);
        f.fixCpp = std::move(cpp);
        outcome.findings.push_back(std::move(f));
    }
};

} // namespace

std::unique_ptr<Rule> makeSyncInLoop() {
    return std::make_unique<SyncInLoop>();
}

} // namespace tuneup::rules
