// communication-bound: collectives take a large share of the step or do not overlap compute.
// See communication-bound.md.

#include "advise/rule_context.h"
#include "all_rules.h"

#include <algorithm>
#include <array>
#include <optional>

namespace tuneup::rules {

using namespace analysis;

namespace {

// Report when the communication's own exposed time (waiting for other ranks excluded) is at least
// this share of the step.
constexpr double kMinExposedShare = 0.05;
// Share of the exposed time the fixes typically recover (the gain model).
constexpr double kRecoverable = 0.5;
// Many small collectives: more per step than this, each shorter than kSmallCollectiveNs on average.
constexpr size_t kManyCollectives = 50;
constexpr int64_t kSmallCollectiveNs = 50'000;
// This rank's communication exceeds the least-waiting rank's by this much before it counts as waiting.
constexpr int64_t kMinWaitNs = 200'000;
constexpr double kMinWaitShare = 0.1;

Gain gain(const RankSummary& r, int64_t perStepNs, std::string model, std::string confidence) {
    Gain g;
    g.perStepNs = perStepNs;
    g.stepShare = r.steps.medianStepNs() > 0 ? double(perStepNs) / double(r.steps.medianStepNs()) : 0.0;
    g.model = std::move(model);
    g.confidence = std::move(confidence);
    return g;
}

int64_t perStep(const RankSummary& r, int64_t total) {
    const size_t steps = r.steps.detection.steps.size();
    return steps ? total / int64_t(steps) : total;
}

// One rank's outcome: a finding, or why there is none.
struct RankVerdict {
    int rank = -1;
    std::optional<Finding> finding;
    RuleStatus status = RuleStatus::Clean;
    std::string reason;
};

class CommunicationBound final : public Rule {
public:
    const RuleInfo& info() const override {
        static const RuleInfo info { "communication-bound", "Communication-bound steps",
            "Collectives take a large share of the step or do not overlap compute.",
            { Input::GpuKernels, Input::Steps }, true };
        return info;
    }

    // Each rank on its own, against the others' communication (the job's ranks compare by their summaries).
    void evaluateJob(const JobContext& job, RuleOutcome& outcome) const override {
        std::vector<RankVerdict> verdicts;
        for (const RankSummary& r : job.ranks()) {
            if (!r.has(Input::GpuKernels) || !r.has(Input::Steps)) continue;
            verdicts.push_back(evaluateRank(r, job));
            if (verdicts.back().finding) {
                if (job.ranks().size() > 1) verdicts.back().finding->rank = r.rank;
                outcome.findings.push_back(std::move(*verdicts.back().finding));
            }
        }
        if (!outcome.findings.empty() || verdicts.empty()) return;
        // No finding: the ranks' reasons, once each ("rank 3: ..." when they differ).
        const bool allSame = std::all_of(verdicts.begin(), verdicts.end(), [&](const RankVerdict& v) {
            return v.reason == verdicts.front().reason && v.status == verdicts.front().status;
        });
        outcome.status = verdicts.front().status;
        outcome.reason = verdicts.front().reason;
        if (!allSame)
            outcome.reason = "rank " + std::to_string(verdicts.front().rank) + ": " + outcome.reason + " (and "
                + std::to_string(verdicts.size() - 1) + " other ranks)";
    }

private:
    static RankVerdict evaluateRank(const RankSummary& rank, const JobContext& job) {
        RankVerdict verdict;
        verdict.rank = rank.rank;
        const CommProfile& own = rank.communication;
        if (own.kernels == 0) {
            if (!rank.has(Input::Collectives)) {
                verdict.status = RuleStatus::NotApplicable;
                verdict.reason = "no collective communication (a single-GPU job)";
            } else {
                verdict.reason = std::to_string(rank.collectiveCount)
                    + " collective operations but no communication kernels on GPU " + std::to_string(rank.steps.device)
                    + " during the steps";
            }
            return verdict;
        }
        const int64_t stepNs = rank.steps.medianStepNs();
        const int64_t commNs = own.medianCommNs, exposedNs = own.medianExposedNs;

        // The rank that waits least shows what the communication itself costs; the rest of this rank's
        // communication time is waiting for slower ranks (rank-straggler's concern).
        int64_t floorNs = commNs;
        size_t ranksWithComm = 0;
        for (const RankSummary& other : job.ranks()) {
            if (&other == &rank || other.communication.kernels == 0) continue;
            ++ranksWithComm;
            floorNs = std::min(floorNs, other.communication.medianCommNs);
        }
        // Small differences between ranks are noise, not waiting.
        int64_t waitNs = ranksWithComm ? std::max<int64_t>(0, commNs - floorNs) : 0;
        if (waitNs < kMinWaitNs || double(waitNs) < kMinWaitShare * double(commNs)) waitNs = 0;
        const int64_t ownExposedNs = std::max<int64_t>(0, exposedNs - waitNs);
        const double overlap = commNs > 0 ? 1.0 - double(exposedNs) / double(commNs) : 0.0;
        const double share = stepNs > 0 ? double(ownExposedNs) / double(stepNs) : 0.0;
        const size_t perStepKernels = size_t(perStep(rank, int64_t(own.kernels)));
        int64_t kernelTotal = 0;
        for (int64_t ns : own.kindNs)
            kernelTotal += ns;
        const size_t dominant = size_t(std::max_element(own.kindNs.begin(), own.kindNs.end()) - own.kindNs.begin());

        if (share < kMinExposedShare) {
            verdict.reason = "communication " + formatDuration(commNs) + " per step, " + formatDuration(ownExposedNs)
                + " of it exposed (" + formatPercent(share) + " of the step)"
                + (waitNs > 0 ? " after " + formatDuration(waitNs) + " of waiting for other ranks" : std::string());
            return verdict;
        }

        Finding f;
        f.gain = gain(rank, int64_t(double(ownExposedNs) * kRecoverable),
            "half of the communication time per step that no compute overlaps"
                + std::string(waitNs > 0 ? " (waiting for slower ranks excluded)" : "")
                + ": more overlap with backward or half the bytes (fp16/bf16 compression) typically recover about "
                  "that much",
            ranksWithComm ? "medium" : "low");
        f.severity = f.gain->stepShare >= 0.2 ? Severity::Error
            : f.gain->stepShare >= 0.01       ? Severity::Warning
                                              : Severity::Info;
        f.title = "communication not overlapped with compute takes " + formatDuration(ownExposedNs) + " per step ("
            + formatPercent(share) + " of the step); " + std::string(commKindName(CommKind(dominant))) + " dominates, "
            + formatPercent(std::max(0.0, overlap)) + " of NCCL time overlaps compute";
        f.detail = "On GPU " + std::to_string(rank.steps.device) + " communication kernels run "
            + formatDuration(commNs) + " per step (median over " + std::to_string(rank.steps.detection.steps.size())
            + " steps), and " + formatDuration(exposedNs) + " of that with no compute kernel running alongside.";
        if (waitNs > 0)
            f.detail += " Another rank spends only " + formatDuration(floorNs)
                + " per step in communication: " + formatDuration(waitNs)
                + " of this rank's is waiting for slower ranks (see rank-straggler) and is "
                  "not counted here.";
        else if (!ranksWithComm)
            f.detail += " Only this rank's trace was given: part of this time may be waiting for slower ranks; "
                        "analyse all ranks' traces together to separate it.";
        f.evidence.facts = { { "communication per step", formatDuration(commNs) },
            { "exposed (no compute alongside)", formatDuration(exposedNs) },
            { "overlap with compute", formatPercent(std::max(0.0, overlap)) },
            { "communication kernels per step", std::to_string(perStepKernels) } };
        if (waitNs > 0) f.evidence.facts.push_back({ "waiting for other ranks", formatDuration(waitNs) });
        for (size_t k = 0; k < own.kindNs.size(); ++k)
            if (own.kindNs[k] > 0)
                f.evidence.facts.push_back({ std::string(commKindName(CommKind(k))),
                    formatDuration(perStep(rank, own.kindNs[k])) + " per step" });
        f.evidence.events = own.events;
        f.evidence.eventsTotal = own.kernels;

        const CommKind kind = CommKind(dominant);
        const bool manySmall = perStepKernels > kManyCollectives && own.kernels > 0
            && kernelTotal / int64_t(own.kernels) < kSmallCollectiveNs;
        std::string py, cpp;
        if (kind == CommKind::AllGather || kind == CommKind::ReduceScatter) {
            py = "# FSDP: prefetch the next all-gather while computing, and shard less across slow links\n"
                 "from torch.distributed.fsdp import FullyShardedDataParallel as FSDP, BackwardPrefetch, "
                 "ShardingStrategy\n"
                 "model = FSDP(model, forward_prefetch=True,\n"
                 "             backward_prefetch=BackwardPrefetch.BACKWARD_PRE,\n"
                 "             limit_all_gathers=True,\n"
                 "             sharding_strategy=ShardingStrategy.HYBRID_SHARD)  # shard within a node, replicate "
                 "across\n"
                 "# or SHARD_GRAD_OP (keep parameters gathered between forward and backward) when memory allows";
        } else if (kind == CommKind::AllToAll) {
            py = "# all-to-all / send-recv (embedding exchange, pipeline stages): overlap it with compute and\n"
                 "# send fewer bytes\n"
                 "work = dist.all_to_all_single(out, inp, async_op=True)  # start the exchange early ...\n"
                 "dense_out = dense_part(x)                              # ... compute what does not need it ...\n"
                 "work.wait()                                            # ... and wait as late as possible\n"
                 "# send embeddings in fp16/bf16: inp = inp.to(torch.bfloat16)";
        } else {
            py = "from torch.distributed.algorithms.ddp_comm_hooks import default_hooks\n"
                 "model = DDP(model, device_ids=[local_rank],\n"
                 "            bucket_cap_mb="
                + std::string(manySmall ? "100" : "25") + ",              # "
                + (manySmall ? "fewer, larger all-reduces" : "the default; try 50-100 on fast links")
                + "\n"
                  "            gradient_as_bucket_view=True,\n"
                  "            static_graph=True)              # if the graph is the same every step\n"
                  "model.register_comm_hook(None, default_hooks.bf16_compress_hook)  # half the bytes "
                  "(fp16_compress_hook before Ampere)\n"
                  "# gradient accumulation: skip the all-reduce on all but the last micro-batch\n"
                  "with model.no_sync():\n"
                  "    loss_fn(model(x1), y1).backward()\n"
                  "loss_fn(model(x2), y2).backward()  # all-reduce overlaps this backward\n"
                  "# do not all_reduce gradients by hand after backward(): DDP already does, overlapped";
        }
        cpp = "// LibTorch with c10d: all-reduce gradients in buckets while backward still runs, in half the bytes\n"
              "std::vector<c10::intrusive_ptr<c10d::Work>> pending;\n"
              "std::vector<torch::Tensor> bucket;\n"
              "for (auto& p : model->parameters())  // hooks fire as each gradient is ready\n"
              "    p.register_hook([&](torch::Tensor g) {\n"
              "        bucket.push_back(g.to(torch::kBFloat16).view(-1));\n"
              "        if (bucket.size() == 32) {  // or by bytes: ~25 MB per bucket\n"
              "            std::vector<torch::Tensor> t{torch::cat(bucket)};\n"
              "            pending.push_back(pg->allreduce(t));  // asynchronous\n"
              "            bucket.clear();\n"
              "        }\n"
              "        return g;\n"
              "    });\n"
              "// after loss.backward(): flush the last bucket, wait for all, unflatten, divide by world size,\n"
              "// then optimizer.step()";
        f.fixPython = std::move(py);
        f.fixCpp = std::move(cpp);
        verdict.finding = std::move(f);
        return verdict;
    }
};

} // namespace

std::unique_ptr<Rule> makeCommunicationBound() {
    return std::make_unique<CommunicationBound>();
}

} // namespace tuneup::rules
