// pageable-memcpy: host<->device copies from or to pageable (not pinned) host memory. See pageable-memcpy.md.

#include "advise/rule_context.h"
#include "all_rules.h"

namespace tuneup::rules {

using namespace analysis;

namespace {

constexpr int64_t kSmallReadBytes = 64 * 1024;

class PageableMemcpy final : public Rule {
public:
    const RuleInfo& info() const override {
        static const RuleInfo info { "pageable-memcpy", "Pageable host memory in copies",
            "Host-to-device and device-to-host copies use pageable memory: slower, and they cannot overlap compute.",
            { Input::Memcpys } };
        return info;
    }

    void evaluate(const RuleContext& context, RuleOutcome& outcome) const override {
        const TraceModel& m = context.model();
        const auto& c = m.memcpys;
        int64_t count = 0, bytes = 0, timeNs = 0, hostCopies = 0;
        Evidence evidence;
        for (size_t i = 0; i < c.size(); ++i) {
            const bool toDevice = c.copyKind[i] == CopyKind::HtoD, toHost = c.copyKind[i] == CopyKind::DtoH;
            if (!toDevice && !toHost) continue;
            ++hostCopies;
            const MemoryKind host = toDevice ? c.srcKind[i] : c.dstKind[i];
            // Small reads back to the host are scalars (loss.item(), printing): sync-in-loop's concern.
            if (host != MemoryKind::Pageable || (toHost && c.bytes[i] >= 0 && c.bytes[i] < kSmallReadBytes)) continue;
            ++count;
            bytes += std::max<int64_t>(c.bytes[i], 0);
            timeNs += c.endNs[i] - c.startNs[i];
            if (evidence.events.size() < 50) evidence.events.push_back({ EventTable::Memcpy, RowIndex(i) });
        }
        if (count == 0) {
            outcome.reason = hostCopies
                ? std::to_string(hostCopies) + " host<->device copies, none from pageable memory"
                : "no host<->device copies";
            return;
        }
        evidence.eventsTotal = size_t(count);
        evidence.facts = { { "pageable copies", std::to_string(count) }, { "bytes", formatBytes(bytes) },
            { "copy time", formatDuration(timeNs) },
            { "copy time per step", formatDuration(context.perStep(timeNs)) } };

        Finding f;
        // The driver stages pageable copies through a pinned bounce buffer and the host waits for
        // them; pinned copies run at about twice the bandwidth and, non_blocking, overlap compute.
        f.gain = context.gain(context.perStep(timeNs) / 2,
            "pinned copies run at about twice the bandwidth of pageable ones: half of the pageable copy time per step",
            "medium");
        f.severity = f.gain->stepShare >= 0.01 ? Severity::Warning : Severity::Info;
        f.title = std::to_string(count) + " copies between the GPU and pageable host memory ("
            + formatDuration(context.perStep(timeNs)) + " per step)";
        f.detail = "Copies from or to pageable memory are staged by the driver through a pinned buffer, run at "
                   "lower bandwidth and block the host; pinned memory makes them faster and lets them overlap "
                   "GPU work when issued with non_blocking=True.";
        f.evidence = std::move(evidence);
        f.fixPython = "loader = DataLoader(dataset, ..., pin_memory=True)\n"
                      "x = x.to(device, non_blocking=True)  # from pinned memory: asynchronous";
        f.fixCpp = "auto pinned = batch.pin_memory();\n"
                   "auto x = pinned.to(device, /*non_blocking=*/true);";
        outcome.findings.push_back(std::move(f));
    }
};

} // namespace

std::unique_ptr<Rule> makePageableMemcpy() {
    return std::make_unique<PageableMemcpy>();
}

} // namespace tuneup::rules
