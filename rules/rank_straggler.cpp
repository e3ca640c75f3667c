// rank-straggler: one rank is slower than the others, which wait for it in collectives.
// See rank-straggler.md.

#include "advise/rule_context.h"
#include "all_rules.h"

#include <algorithm>
#include <array>

namespace tuneup::rules {

using namespace analysis;

namespace {

// The others must wait at least this share of the step (and this long) for the straggler.
constexpr double kMinWaitShare = 0.05;
constexpr int64_t kMinWaitNs = 200'000;
// A part of the straggler's step explains the wait when its excess over the others is this large.
constexpr double kExplainShare = 0.25;

int64_t median(std::vector<int64_t> v) {
    if (v.empty()) return 0;
    std::nth_element(v.begin(), v.begin() + long(v.size() / 2), v.end());
    return v[v.size() / 2];
}

// One rank's step, as the straggler analysis needs it (medians over its steps).
struct RankProfile {
    const RankSummary* rank = nullptr;
    int64_t stepNs = 0;
    int64_t commNs = 0; // communication kernels per step (merged), waiting included
    // The parts of the step that are this rank's own work or idleness.
    enum Part { Compute, Copies, Data, Sync, Host, PartCount };
    std::array<int64_t, PartCount> parts {};
};

constexpr std::array<std::string_view, RankProfile::PartCount> kPartNames { "GPU compute", "memory copies and sets",
    "waiting for the DataLoader", "host synchronisation", "host time between kernels (Python, launches)" };

RankProfile profile(const RankSummary& r) {
    RankProfile p;
    p.rank = &r;
    p.commNs = r.communication.medianCommNs;
    // Per-part medians over the steps: one odd step does not decide.
    auto field = [&r](auto get) {
        std::vector<int64_t> v;
        for (const StepBreakdown& b : r.steps.perStep)
            v.push_back(get(b));
        return median(std::move(v));
    };
    p.stepNs = field([](const StepBreakdown& b) { return b.stepNs; });
    p.parts = { field([](const StepBreakdown& b) { return b.computeNs; }),
        field([](const StepBreakdown& b) { return b.memcpyNs + b.memsetNs; }),
        field([](const StepBreakdown& b) { return b.idleDataNs; }),
        field([](const StepBreakdown& b) { return b.idleSyncNs; }),
        field([](const StepBreakdown& b) { return b.idleHostNs; }) };
    return p;
}

std::string rankName(const RankProfile& p) {
    return "rank " + std::to_string(p.rank->rank);
}

class RankStraggler final : public Rule {
public:
    const RuleInfo& info() const override {
        static const RuleInfo info { "rank-straggler", "Straggler rank",
            "One rank is slower than the others, which wait for it in collectives.",
            { Input::MultipleRanks, Input::GpuKernels, Input::Steps }, true };
        return info;
    }

    void evaluateJob(const JobContext& job, RuleOutcome& outcome) const override {
        std::vector<RankProfile> ranks;
        size_t withoutSteps = 0;
        for (const RankSummary& r : job.ranks()) {
            if (r.steps.detection.steps.empty()) {
                ++withoutSteps;
                continue;
            }
            RankProfile p = profile(r);
            if (p.commNs > 0) ranks.push_back(p);
        }
        if (ranks.size() < 2) {
            outcome.status = RuleStatus::NotApplicable;
            outcome.reason = std::to_string(ranks.size()) + " of " + std::to_string(job.ranks().size())
                + " ranks have steps with communication kernels: the ranks do not wait for each other on the GPU";
            return;
        }
        // In synchronous data parallelism every rank's step ends at the same collectives, so step times
        // come out equal; the straggler shows as the rank that waits least in them, because the others
        // are already waiting when it arrives.
        const auto straggler = std::min_element(
            ranks.begin(), ranks.end(), [](const RankProfile& a, const RankProfile& b) { return a.commNs < b.commNs; });
        std::vector<int64_t> waits, steps;
        std::array<std::vector<int64_t>, RankProfile::PartCount> others;
        for (const RankProfile& p : ranks) {
            steps.push_back(p.stepNs);
            if (&p == &*straggler) continue;
            waits.push_back(p.commNs - straggler->commNs);
            for (size_t k = 0; k < others.size(); ++k)
                others[k].push_back(p.parts[k]);
        }
        const int64_t waitNs = median(waits);
        const int64_t stepNs = median(steps);
        const double share = stepNs > 0 ? double(waitNs) / double(stepNs) : 0.0;
        if (waitNs < kMinWaitNs || share < kMinWaitShare) {
            outcome.reason = std::to_string(ranks.size()) + " ranks: the others wait a median "
                + formatDuration(std::max<int64_t>(0, waitNs)) + " per step (" + formatPercent(share)
                + " of the step) more in collectives than " + rankName(*straggler) + ": no clear straggler";
            return;
        }

        // Why: the parts of the straggler's step that exceed the other ranks' medians.
        std::array<int64_t, RankProfile::PartCount> excess {};
        for (size_t k = 0; k < excess.size(); ++k)
            excess[k] = straggler->parts[k] - median(others[k]);
        std::vector<size_t> order(excess.size());
        for (size_t k = 0; k < order.size(); ++k)
            order[k] = k;
        std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return excess[a] > excess[b]; });
        std::string why;
        std::vector<size_t> causes;
        int64_t explained = 0;
        for (size_t k : order) {
            if (double(excess[k]) < kExplainShare * double(waitNs)) break;
            causes.push_back(k);
            explained += excess[k];
            why += (why.empty() ? "" : "; ") + std::string(kPartNames[k]) + ": " + formatDuration(straggler->parts[k])
                + " per step vs " + formatDuration(median(others[k])) + " on the others (+" + formatDuration(excess[k])
                + ")";
        }
        std::string gpuNote;
        if (const std::string& d = straggler->rank->deviceName; !d.empty()) {
            for (const RankProfile& p : ranks) {
                const std::string& o = p.rank->deviceName;
                if (!o.empty() && o != d) {
                    gpuNote = " It runs on a " + d + ", another rank on a " + o + ".";
                    break;
                }
            }
        }

        Finding f;
        f.rank = straggler->rank->rank;
        Gain gain;
        gain.perStepNs = waitNs;
        gain.stepShare = share;
        gain.model = "if " + rankName(*straggler)
            + " kept pace, the other ranks would not wait for it: the median of their extra time in collectives, "
            + formatDuration(waitNs) + " per step";
        const bool fewSteps = straggler->rank->steps.detection.steps.size() < 3;
        gain.confidence = causes.empty() || fewSteps ? "low" : "medium";
        f.gain = std::move(gain);
        f.severity = share >= 0.2 ? Severity::Error : Severity::Warning;
        const std::string waiters = ranks.size() == 2 ? "the other rank waits"
                                                      : "the other " + std::to_string(ranks.size() - 1) + " ranks wait";
        f.title = rankName(*straggler) + " is the straggler: " + waiters + " " + formatDuration(waitNs) + " per step ("
            + formatPercent(share) + ") for it in collectives"
            + (causes.empty() ? "; its recorded steps do not show why"
                              : "; " + std::string(kPartNames[causes.front()]) + " takes it "
                        + formatDuration(excess[causes.front()]) + " longer per step");
        f.detail = "Communication kernels per step: " + formatDuration(straggler->commNs) + " on "
            + rankName(*straggler) + ", a median of " + formatDuration(straggler->commNs + waitNs)
            + " on the others. Collectives finish together on all ranks, so the extra time of the others is waiting "
              "for the last rank to arrive. "
            + (causes.empty()
                    ? "Its recorded steps do not show why: its compute, data loading and host time are like the "
                      "others'. The delay comes from outside the recorded steps or varies (a slower previous step, "
                      "work between steps such as logging or checkpointing, uneven inputs)."
                    : "Compared with the others' medians, " + why + "."
                        + (explained * 2 < waitNs ? " The remaining " + formatDuration(waitNs - explained)
                                    + " are not explained by its recorded steps: it may start its steps later "
                                      "(a slower previous step, work between steps)."
                                                  : std::string()))
            + gpuNote
            + (fewSteps ? " Only " + std::to_string(straggler->rank->steps.detection.steps.size())
                        + " step(s) recorded per rank: record more steps to confirm."
                        : std::string());
        f.evidence.facts.push_back({ "straggler", rankName(*straggler) });
        f.evidence.facts.push_back({ "others' wait per step (median)", formatDuration(waitNs) });
        f.evidence.facts.push_back({ "median step", formatDuration(stepNs) });
        for (const RankProfile& p : ranks) {
            if (f.evidence.facts.size() >= 20) break;
            f.evidence.facts.push_back({ rankName(p),
                "step " + formatDuration(p.stepNs) + ", communication " + formatDuration(p.commNs) + ", compute "
                    + formatDuration(p.parts[RankProfile::Compute]) + ", data wait "
                    + formatDuration(p.parts[RankProfile::Data]) + ", host idle "
                    + formatDuration(p.parts[RankProfile::Host]) });
        }
        for (const Step& s : straggler->rank->steps.detection.steps) {
            if (f.evidence.spans.size() >= 50) break;
            f.evidence.spans.push_back({ s.startNs, s.endNs });
        }
        if (withoutSteps)
            f.evidence.facts.push_back({ "ranks without steps (left out)", std::to_string(withoutSteps) });
        setFix(f, causes.empty() ? size_t(RankProfile::PartCount) : causes.front(), straggler->rank->rank);
        outcome.findings.push_back(std::move(f));
    }

private:
    static void setFix(Finding& f, size_t cause, int rank) {
        const std::string r = std::to_string(rank);
        switch (cause) {
        case RankProfile::Data:
            f.fixPython = "# rank " + r
                + " waits for its input: give its DataLoader more workers and prefetching,\n"
                  "# and check that its data source (disk, network mount) is as fast as the others'\n"
                  "loader = DataLoader(dataset, batch_size=bs, sampler=DistributedSampler(dataset),\n"
                  "                    num_workers=8, pin_memory=True, persistent_workers=True,\n"
                  "                    prefetch_factor=4)";
            f.fixCpp = "auto loader = torch::data::make_data_loader(std::move(dataset),\n"
                       "    torch::data::samplers::DistributedRandomSampler(size, world, rank),\n"
                       "    torch::data::DataLoaderOptions().batch_size(bs).workers(8));";
            return;
        case RankProfile::Compute:
        case RankProfile::Copies:
            f.fixPython = "# rank " + r
                + " computes more per step: make the shards even (same number of samples,\n"
                  "# similar sequence lengths) and check its GPU (clocks, throttling, another process on it):\n"
                  "#   nvidia-smi -q -d PERFORMANCE,CLOCK\n"
                  "sampler = DistributedSampler(dataset, drop_last=True)  # equal-sized shards\n"
                  "# variable-length inputs: bucket by length so every rank gets similar sizes";
            f.fixCpp = "// Give every rank the same amount of work per step (equal shards, similar input sizes)\n"
                       "// and check the slow rank's GPU with `nvidia-smi -q -d PERFORMANCE,CLOCK`.";
            return;
        case RankProfile::Sync:
        case RankProfile::Host:
            f.fixPython = "# rank " + r
                + " does extra host work inside the step (logging, metrics, .item(),\n"
                  "# checkpoints): do it every N steps, or asynchronously, or on all ranks alike\n"
                  "if step % 100 == 0:       # not every step\n"
                  "    log(loss.item())      # one sync per 100 steps instead of one per step\n"
                  "# checkpoint outside the timed loop, or with torch.distributed.checkpoint.async_save";
            f.fixCpp = "// Move rank-specific host work (logging, .item<float>(), checkpoints) out of the step or\n"
                       "// do it every N steps; avoid synchronising with the GPU on one rank only.";
            return;
        default:
            f.fixPython = "# the recorded steps do not show why rank " + r
                + " is late: look at what it does\n"
                  "# between steps (rank-specific `if rank == 0:` work, evaluation, checkpoints) and\n"
                  "# record more steps (a longer run under tuneup record) to see the pattern";
            f.fixCpp = "// Look for rank-specific work between steps and record more steps to see the pattern.";
            return;
        }
    }
};

} // namespace

std::unique_ptr<Rule> makeRankStraggler() {
    return std::make_unique<RankStraggler>();
}

} // namespace tuneup::rules
