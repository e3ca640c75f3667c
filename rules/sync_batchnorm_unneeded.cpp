// sync-batchnorm-unneeded: SyncBatchNorm shares BatchNorm's statistics across the processes with an
// all-gather in forward and an all-reduce in backward per layer, where each GPU's batch is large enough for
// its own statistics: communication for nothing. See sync-batchnorm-unneeded.md.

#include "all_rules.h"
#include "sync_batchnorm.h"

namespace tuneup::rules {

using namespace analysis;

namespace {

class SyncBatchnormUnneeded final : public Rule {
public:
    const RuleInfo& info() const override {
        static const RuleInfo info { "sync-batchnorm-unneeded", "SyncBatchNorm with a large per-GPU batch",
            "SyncBatchNorm all-gathers and all-reduces BatchNorm's statistics across processes while each GPU's "
            "batch (32 or more) is large enough on its own.",
            {}, false,
            "SyncBatchNorm and its per-GPU batch (framework operators with input shapes, or tuneup's Python "
            "bootstrap: the DDP model's layers and the DataLoader's batch size); its time from GPU kernels with "
            "the operators that launched them" };
        return info;
    }

    void evaluate(const RuleContext& context, RuleOutcome& outcome) const override {
        const BatchNormUse use = readBatchNormUse(context);
        if (!use.readAnything) {
            outcome.status = RuleStatus::NotEvaluated;
            outcome.reason = kNeedsBatchNorm;
            return;
        }
        if (!use.hasSync()) {
            outcome.reason = use.syncLayers ? "the model DistributedDataParallel wraps has no SyncBatchNorm layers "
                                              "(recorded by tuneup's Python bootstrap)"
                                            : "no SyncBatchNorm in the trace";
            return;
        }
        // SyncBatchNorm synchronises only with two or more processes; its ops in the trace prove that many.
        const bool syncRan = use.syncCalls > 0 || use.syncKernels > 0;
        if (use.worldSize && *use.worldSize <= 1 && !syncRan) {
            outcome.status = RuleStatus::NotApplicable;
            outcome.reason
                = "one process (" + use.worldFrom + "): SyncBatchNorm runs as plain BatchNorm, without communication";
            return;
        }
        if (!use.worldSize && !syncRan) {
            outcome.status = RuleStatus::NotEvaluated;
            outcome.reason = kNeedsWorld;
            return;
        }
        std::string batchFrom;
        const auto batch = use.batch(true, &batchFrom);
        if (!batch) {
            outcome.status = RuleStatus::NotEvaluated;
            outcome.reason = kNeedsBatch;
            return;
        }
        if (*batch < kLargePerGpuBatch) {
            outcome.reason = "per-GPU batch " + std::to_string(*batch) + " (" + batchFrom + "), under "
                + std::to_string(kLargePerGpuBatch) + ": SyncBatchNorm's shared statistics are worth their cost";
            return;
        }

        const std::string world = use.worldSize && *use.worldSize > 1 ? std::to_string(*use.worldSize) : "several";
        Finding f;
        f.title = use.syncText() + " share statistics across " + world + " processes while each GPU's batch is "
            + std::to_string(*batch);
        f.detail = "SyncBatchNorm gathers every process's per-channel mean, variance and count in forward "
                   "(an all-gather, then batch_norm_gather_stats_with_counts) and all-reduces the gradient sums in "
                   "backward, once per layer and step, on the critical path. With "
            + std::to_string(*batch) + " samples per GPU (at least " + std::to_string(kLargePerGpuBatch)
            + ") each GPU's own statistics are as good as the reference large-batch trainings use, so plain "
              "BatchNorm trains as well without the communication.";
        Evidence& e = f.evidence;
        e.facts = { { "processes",
                        use.worldSize ? std::to_string(*use.worldSize) + " (" + use.worldFrom + ")"
                                      : std::string("two or more (SyncBatchNorm synchronised)") },
            { "per-GPU batch", std::to_string(*batch) + " (" + batchFrom + ")" }, { "SyncBatchNorm", use.syncText() },
            { "threshold", "per-GPU batch of " + std::to_string(kLargePerGpuBatch) + " or more" } };
        const bool measured = use.gatherKernels > 0 || use.commKernels > 0;
        if (measured) {
            e.facts.emplace_back("statistics gather kernels",
                std::to_string(use.gatherKernels) + ", " + formatDuration(context.perStep(use.gatherNs)) + " per step");
            if (use.commAttributed) // the operators tie the communication to SyncBatchNorm
                e.facts.emplace_back("communication kernels launched by SyncBatchNorm",
                    std::to_string(use.commKernels) + ", " + formatDuration(context.perStep(use.commNs)) + " per step");
            const bool attributed = use.commAttributed;
            f.gain = context.gain(context.perStep(use.gatherNs + use.commNs),
                attributed ? "the GPU time of SyncBatchNorm's statistics gather kernels and of the communication "
                             "kernels launched inside its forward and backward, which plain BatchNorm does not run"
                           : "the GPU time of SyncBatchNorm's statistics gather kernels only: without the framework's "
                             "operators its all-gather and all-reduce cannot be told from the gradients' (a lower "
                             "bound)",
                attributed ? "medium" : "low");
            f.severity = f.gain->stepShare >= 0.01 ? Severity::Warning : Severity::Info;
        } else {
            f.severity = Severity::Info;
            f.detail += " Its cost is not measured: the recording has no GPU kernels (record on a GPU, or with "
                        "torch.profiler, to see SyncBatchNorm's gather and communication kernels).";
            e.facts.emplace_back("time", "not measured (no GPU kernels)");
        }
        e.events = use.syncEvents;
        e.eventsTotal = use.syncCalls ? use.syncCalls : use.syncKernels;
        f.fixPython = "# Each GPU's batch is large enough: keep BatchNorm local, drop the conversion\n"
                      "# model = torch.nn.SyncBatchNorm.convert_sync_batchnorm(model)   <- remove\n"
                      "model = torch.nn.parallel.DistributedDataParallel(model.to(local_rank), "
                      "device_ids=[local_rank])\n"
                      "# or share statistics within smaller groups (e.g. the GPUs of one node):\n"
                      "# group = torch.distributed.new_group(ranks_of_this_node)\n"
                      "# model = torch.nn.SyncBatchNorm.convert_sync_batchnorm(model, process_group=group)";
        f.fixCpp = "// LibTorch has no SyncBatchNorm: a C++ program that all-reduces BatchNorm's statistics does so\n"
                   "// itself. With 32 or more samples per GPU, drop that all-reduce and use the local statistics:\n"
                   "torch::nn::BatchNorm2d norm(torch::nn::BatchNorm2dOptions(C));";
        outcome.findings.push_back(std::move(f));
    }
};

} // namespace

std::unique_ptr<Rule> makeSyncBatchnormUnneeded() {
    return std::make_unique<SyncBatchnormUnneeded>();
}

} // namespace tuneup::rules
