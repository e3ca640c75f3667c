// communication-bound: collectives take a large share of the step or do not overlap compute.
// See communication-bound.md.

#include "advise/rule_context.h"
#include "all_rules.h"

#include <algorithm>
#include <array>
#include <mutex>
#include <span>

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

enum class CommKind { AllReduce, AllGather, ReduceScatter, AllToAll, Broadcast, Other, Count };
constexpr std::array<std::string_view, size_t(CommKind::Count)> kKindNames { "all-reduce", "all-gather",
    "reduce-scatter", "all-to-all/send-recv", "broadcast", "other" };

bool contains(std::string_view s, std::string_view part) {
    return s.find(part) != std::string_view::npos;
}

CommKind commKind(std::string_view kernel) {
    if (contains(kernel, "AllReduce") || contains(kernel, "all_reduce") || contains(kernel, "allreduce"))
        return CommKind::AllReduce;
    if (contains(kernel, "AllGather") || contains(kernel, "all_gather") || contains(kernel, "allgather"))
        return CommKind::AllGather;
    if (contains(kernel, "ReduceScatter") || contains(kernel, "reduce_scatter")) return CommKind::ReduceScatter;
    if (contains(kernel, "SendRecv") || contains(kernel, "AllToAll") || contains(kernel, "AlltoAll")
        || contains(kernel, "_Send") || contains(kernel, "_Recv"))
        return CommKind::AllToAll;
    if (contains(kernel, "Broadcast")) return CommKind::Broadcast;
    return CommKind::Other;
}

// Communication kernels of one rank on its breakdown device, per step.
struct CommProfile {
    size_t kernels = 0; // in steps
    int64_t medianCommNs = 0; // NCCL time per step (merged spans), median over steps
    int64_t medianExposedNs = 0; // not overlapped by compute (the breakdown's communicationNs), median over steps
    std::array<int64_t, size_t(CommKind::Count)> kindNs {};
    std::vector<EventRef> events;
};

int64_t median(std::vector<int64_t> v) {
    if (v.empty()) return 0;
    std::nth_element(v.begin(), v.begin() + long(v.size() / 2), v.end());
    return v[v.size() / 2];
}

CommProfile commProfile(const RankAnalysis& rank) {
    const TraceModel& m = *rank.model;
    const auto& steps = rank.steps.detection.steps;
    CommProfile p;
    std::vector<TimeSpan> spans;
    size_t step = 0; // kernels and steps are sorted by start
    for (size_t i = 0; i < m.kernels.size(); ++i) {
        if (m.kernels.device[i] != rank.steps.device || rank.kernelClasses[i] != KernelClass::Communication) continue;
        spans.push_back({ m.kernels.startNs[i], m.kernels.endNs[i] });
        while (step < steps.size() && steps[step].endNs <= m.kernels.startNs[i])
            ++step;
        const bool inStep = step < steps.size() && m.kernels.endNs[i] > steps[step].startNs;
        if (!inStep) continue;
        ++p.kernels;
        p.kindNs[size_t(commKind(m.str(m.kernels.name[i])))] += m.kernels.endNs[i] - m.kernels.startNs[i];
        if (p.events.size() < 50) p.events.push_back({ EventTable::Kernel, RowIndex(i) });
    }
    const auto merged = mergeSpans(std::move(spans));
    std::vector<int64_t> perStep;
    for (const Step& s : steps)
        perStep.push_back(coveredNs(merged, s.startNs, s.endNs));
    p.medianCommNs = median(std::move(perStep));
    std::vector<int64_t> exposed;
    for (const StepBreakdown& b : rank.steps.perStep)
        exposed.push_back(b.communicationNs);
    p.medianExposedNs = median(std::move(exposed));
    return p;
}

// The other ranks' communication per step, computed once per job (every rank's evaluation needs it).
// Keyed by the models' instance ids (never reused) and their steps.
std::vector<std::pair<const TraceModel*, int64_t>> jobCommunication(std::span<const RankAnalysis> job) {
    static std::mutex mutex;
    static std::vector<uint64_t> cachedKey;
    static std::vector<std::pair<const TraceModel*, int64_t>> cached;
    std::vector<uint64_t> key;
    for (const RankAnalysis& r : job) {
        const auto& steps = r.steps.detection.steps;
        key.insert(key.end(),
            { r.model->instanceId(), uint64_t(steps.size()), steps.empty() ? 0 : uint64_t(steps.front().startNs),
                uint64_t(r.steps.device) });
    }
    std::lock_guard<std::mutex> lock(mutex);
    if (key != cachedKey) {
        cached.clear();
        for (const RankAnalysis& r : job) {
            const CommProfile p = commProfile(r);
            cached.emplace_back(r.model, p.kernels ? p.medianCommNs : -1);
        }
        cachedKey = std::move(key);
    }
    return cached;
}

class CommunicationBound final : public Rule {
public:
    const RuleInfo& info() const override {
        static const RuleInfo info { "communication-bound", "Communication-bound steps",
            "Collectives take a large share of the step or do not overlap compute.",
            { Input::GpuKernels, Input::Steps } };
        return info;
    }

    void evaluate(const RuleContext& context, RuleOutcome& outcome) const override {
        const TraceModel& m = context.model();
        const CommProfile own = commProfile(context.rank());
        if (own.kernels == 0) {
            if (m.collectives.empty()) {
                outcome.status = RuleStatus::NotApplicable;
                outcome.reason = "no collective communication (a single-GPU job)";
            } else {
                outcome.reason = std::to_string(m.collectives.size())
                    + " collective operations but no communication "
                      "kernels on GPU "
                    + std::to_string(context.steps().device) + " during the steps";
            }
            return;
        }
        const int64_t stepNs = context.stepNs();
        const int64_t commNs = own.medianCommNs, exposedNs = own.medianExposedNs;

        // The rank that waits least shows what the communication itself costs; the rest of this rank's
        // communication time is waiting for slower ranks (rank-straggler's concern).
        int64_t floorNs = commNs;
        size_t ranksWithComm = 0;
        if (context.job().size() > 1) {
            for (const auto& [model, otherCommNs] : jobCommunication(context.job())) {
                if (model == context.rank().model || otherCommNs < 0) continue;
                ++ranksWithComm;
                floorNs = std::min(floorNs, otherCommNs);
            }
        }
        // Small differences between ranks are noise, not waiting.
        int64_t waitNs = ranksWithComm ? std::max<int64_t>(0, commNs - floorNs) : 0;
        if (waitNs < kMinWaitNs || double(waitNs) < kMinWaitShare * double(commNs)) waitNs = 0;
        const int64_t ownExposedNs = std::max<int64_t>(0, exposedNs - waitNs);
        const double overlap = commNs > 0 ? 1.0 - double(exposedNs) / double(commNs) : 0.0;
        const double share = stepNs > 0 ? double(ownExposedNs) / double(stepNs) : 0.0;
        const size_t perStepKernels = size_t(context.perStep(int64_t(own.kernels)));
        int64_t kernelTotal = 0;
        for (int64_t ns : own.kindNs)
            kernelTotal += ns;
        const size_t dominant = size_t(std::max_element(own.kindNs.begin(), own.kindNs.end()) - own.kindNs.begin());

        if (share < kMinExposedShare) {
            outcome.reason = "communication " + formatDuration(commNs) + " per step, " + formatDuration(ownExposedNs)
                + " of it exposed (" + formatPercent(share) + " of the step)"
                + (waitNs > 0 ? " after " + formatDuration(waitNs) + " of waiting for other ranks" : std::string());
            return;
        }

        Finding f;
        f.gain = context.gain(int64_t(double(ownExposedNs) * kRecoverable),
            "half of the communication time per step that no compute overlaps"
                + std::string(waitNs > 0 ? " (waiting for slower ranks excluded)" : "")
                + ": more overlap with backward or half the bytes (fp16/bf16 compression) typically recover about "
                  "that much",
            ranksWithComm ? "medium" : "low");
        f.severity = f.gain->stepShare >= 0.2 ? Severity::Error
            : f.gain->stepShare >= 0.01       ? Severity::Warning
                                              : Severity::Info;
        f.title = "communication not overlapped with compute takes " + formatDuration(ownExposedNs) + " per step ("
            + formatPercent(share) + " of the step); " + std::string(kKindNames[dominant]) + " dominates, "
            + formatPercent(std::max(0.0, overlap)) + " of NCCL time overlaps compute";
        f.detail = "On GPU " + std::to_string(context.steps().device) + " communication kernels run "
            + formatDuration(commNs) + " per step (median over " + std::to_string(context.stepCount()) + " steps), and "
            + formatDuration(exposedNs) + " of that with no compute kernel running alongside.";
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
                f.evidence.facts.push_back(
                    { std::string(kKindNames[k]), formatDuration(context.perStep(own.kindNs[k])) + " per step" });
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
        outcome.findings.push_back(std::move(f));
    }
};

} // namespace

std::unique_ptr<Rule> makeCommunicationBound() {
    return std::make_unique<CommunicationBound>();
}

} // namespace tuneup::rules
