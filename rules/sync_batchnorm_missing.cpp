// sync-batchnorm-missing: several processes train one model (DDP) whose BatchNorm layers each normalise over
// their own GPU's small batch: the statistics come from too few samples and the model trains worse. A finding
// about the model's quality, not its speed. See sync-batchnorm-missing.md.

#include "all_rules.h"
#include "sync_batchnorm.h"

namespace tuneup::rules {

using namespace analysis;

namespace {

class SyncBatchnormMissing final : public Rule {
public:
    const RuleInfo& info() const override {
        static const RuleInfo info { "sync-batchnorm-missing", "BatchNorm statistics from a small per-GPU batch",
            "Several processes train with BatchNorm, without SyncBatchNorm, on a per-GPU batch under 16: each GPU "
            "normalises over too few samples.",
            {}, false,
            "BatchNorm layers and the per-GPU batch (framework operators with input shapes, or tuneup's Python "
            "bootstrap: the DDP model's layers and the DataLoader's batch size), and the number of processes" };
        return info;
    }

    void evaluate(const RuleContext& context, RuleOutcome& outcome) const override {
        const BatchNormUse use = readBatchNormUse(context);
        if (!use.readAnything) {
            outcome.status = RuleStatus::NotEvaluated;
            outcome.reason = kNeedsBatchNorm;
            return;
        }
        if (use.hasSync()) {
            outcome.reason = "the model uses SyncBatchNorm (" + use.syncText() + ")";
            return;
        }
        if (!use.hasPlain()) {
            outcome.reason = use.plainLayers ? "the model DistributedDataParallel wraps has no plain BatchNorm layers "
                                               "(recorded by tuneup's Python bootstrap)"
                                             : "no BatchNorm ops or training-mode BatchNorm kernels in the trace";
            return;
        }
        if (use.worldSize && *use.worldSize <= 1) {
            outcome.status = RuleStatus::NotApplicable;
            outcome.reason = "one process (" + use.worldFrom
                + "): BatchNorm normalises over the whole batch already, there is no other GPU to share statistics "
                  "with";
            return;
        }
        if (!use.worldSize) {
            outcome.status = RuleStatus::NotEvaluated;
            outcome.reason = kNeedsWorld;
            return;
        }
        std::string batchFrom;
        const auto batch = use.batch(false, &batchFrom);
        if (!batch) {
            outcome.status = RuleStatus::NotEvaluated;
            outcome.reason = kNeedsBatch;
            return;
        }
        if (*batch >= kSmallPerGpuBatch) {
            outcome.reason = "per-GPU batch " + std::to_string(*batch) + " (" + batchFrom + "), at least "
                + std::to_string(kSmallPerGpuBatch) + ": enough samples for BatchNorm's statistics on each of "
                + std::to_string(*use.worldSize) + " processes";
            return;
        }

        Finding f;
        f.kind = FindingKind::Correctness; // the model's quality: no time to gain, advice whatever the step costs
        f.severity = Severity::Warning;
        f.title = use.plainText() + " normalise over a per-GPU batch of " + std::to_string(*batch) + " on each of "
            + std::to_string(*use.worldSize) + " processes, without SyncBatchNorm";
        f.detail = "In training, BatchNorm normalises each channel with the mean and variance of the batch it sees. "
                   "Under DistributedDataParallel that is each GPU's own share of the batch, here "
            + std::to_string(*batch) + " samples (under " + std::to_string(kSmallPerGpuBatch)
            + "): estimates that noisy make the model train to a worse accuracy, and the running statistics it "
              "keeps for evaluation differ from the training ones. SyncBatchNorm computes the statistics over "
              "every process's samples ("
            + std::to_string(*batch * *use.worldSize)
            + " here) with an all-gather in forward and an all-reduce in backward. This is about the model's "
              "quality, not its speed: no time gain is estimated, and SyncBatchNorm will cost some time per step "
              "(sync-batchnorm-unneeded says how much where it is used).";
        Evidence& e = f.evidence;
        e.facts = { { "processes", std::to_string(*use.worldSize) + " (" + use.worldFrom + ")" },
            { "per-GPU batch", std::to_string(*batch) + " (" + batchFrom + ")" }, { "BatchNorm", use.plainText() },
            { "SyncBatchNorm", "none" }, { "threshold", "per-GPU batch under " + std::to_string(kSmallPerGpuBatch) } };
        if (use.plainBatches.size() > 1) {
            std::string all;
            for (const auto& [b, n] : use.plainBatches)
                if (all.size() < 200)
                    all += (all.empty() ? "" : ", ") + std::to_string(b) + " (" + std::to_string(n) + ")";
            e.facts.emplace_back("batches seen by BatchNorm (calls)", all);
        }
        e.events = use.plainEvents;
        e.eventsTotal = use.plainCalls;
        f.sourceCalls = { "DataLoader" }; // where the per-GPU batch is chosen
        f.fixPython
            = "# Before wrapping in DDP: every BatchNorm layer becomes SyncBatchNorm (statistics over all GPUs)\n"
              "model = torch.nn.SyncBatchNorm.convert_sync_batchnorm(model)\n"
              "model = torch.nn.parallel.DistributedDataParallel(model.to(local_rank), "
              "device_ids=[local_rank])\n"
              "# or, to avoid the communication: a normalisation that does not depend on the batch\n"
              "# nn.GroupNorm(num_groups=32, num_channels=C) in place of nn.BatchNorm2d(C)";
        f.fixCpp = "// LibTorch has no SyncBatchNorm. Use a normalisation that does not depend on the batch:\n"
                   "torch::nn::GroupNorm norm(torch::nn::GroupNormOptions(/*num_groups=*/32, /*num_channels=*/C));\n"
                   "// or a larger per-GPU batch (gradient accumulation does not help: BatchNorm still sees the\n"
                   "// micro-batch), or all-reduce each layer's per-channel sum, sum of squares and count over the\n"
                   "// process group (c10d) in a custom autograd function, forward and backward, as SyncBatchNorm "
                   "does.";
        outcome.findings.push_back(std::move(f));
    }
};

} // namespace

std::unique_ptr<Rule> makeSyncBatchnormMissing() {
    return std::make_unique<SyncBatchnormMissing>();
}

} // namespace tuneup::rules
