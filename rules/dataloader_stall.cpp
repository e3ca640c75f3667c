// dataloader-stall: the GPU waits for the next batch. See dataloader-stall.md.

#include "advise/call_sites.h"
#include "advise/rule_context.h"
#include "all_rules.h"
#include "dataloader_diagnosis.h"

#include <algorithm>

namespace tuneup::rules {

using namespace analysis;

namespace {

// Below this share of the step time the wait is not worth a finding (DLRM's single-process loader
// costs 6-10% of its 13-20 ms steps; a few percent is the price of any input pipeline).
constexpr double kMinShare = 0.15;
constexpr int64_t kLongWaitNs = 1'000'000; // a wait the GPU notices

enum class LoaderKind { Unknown, SingleProcess, MultiProcess };

// The fixes, by what holds the loop up.
constexpr const char* kFixTurnOnWorkersPython
    = "loader = DataLoader(dataset, batch_size=..., shuffle=True,\n"
      "                    num_workers=8,           # worker processes: start at the CPU cores per GPU\n"
      "                    pin_memory=True,\n"
      "                    persistent_workers=True,\n"
      "                    prefetch_factor=2)";
constexpr const char* kFixTurnOnWorkersCpp
    = "auto loader = torch::data::make_data_loader(std::move(dataset),\n"
      "    torch::data::DataLoaderOptions().batch_size(64).workers(8));  // load batches in 8 threads";
constexpr const char* kFixMoreWorkersPython
    = "loader = DataLoader(dataset, batch_size=..., shuffle=True,\n"
      "                    num_workers=16,          # more than now: up to the CPU cores per GPU\n"
      "                    pin_memory=True,\n"
      "                    persistent_workers=True, # keep workers between epochs\n"
      "                    prefetch_factor=4)       # batches each worker prepares ahead\n"
      "# If the workers are CPU-bound, decode/augment on the GPU (torchvision.transforms.v2 on\n"
      "# CUDA tensors, NVIDIA DALI) or store pre-processed data.";
constexpr const char* kFixMoreWorkersCpp
    = "auto loader = torch::data::make_data_loader(std::move(dataset),\n"
      "    torch::data::DataLoaderOptions().batch_size(64).workers(16)  // more workers than now\n"
      "        .max_jobs(64));                                            // batches queued ahead";
// Which side is slow was not recorded, or is not clear: the workers' fix, and what to do instead when the
// main process is the one that is busy.
constexpr const char* kFixEitherSidePython
    = "loader = DataLoader(dataset, batch_size=..., shuffle=True,\n"
      "                    num_workers=16,          # more than now: up to the CPU cores per GPU\n"
      "                    pin_memory=True,\n"
      "                    persistent_workers=True, # keep workers between epochs\n"
      "                    prefetch_factor=4)       # batches each worker prepares ahead\n"
      "# More workers help only if they are what is slow. If the main process is busy receiving\n"
      "# (its thread running during the waits: tuneup record shows it), return a few contiguous\n"
      "# tensors per sample instead of many Python objects (see dataloader-stall.md).";
constexpr const char* kFixReceivingPython
    = "# Return tensors, not many small Python objects: a tensor crosses from a worker in shared memory,\n"
      "# each Python object is unpickled one by one in the main process.\n"
      "def __getitem__(self, index):\n"
      "    return torch.as_tensor(self.features[index]), self.labels[index]  # not a list of dicts\n"
      "\n"
      "loader = DataLoader(dataset, batch_size=...,  # larger batches: fewer hand-overs per sample\n"
      "                    num_workers=4,            # the default collate stacks each batch in the worker\n"
      "                    pin_memory=True,          # the copy to the GPU then runs asynchronously\n"
      "                    persistent_workers=True)\n"
      "# Many tensors per sample: pack them into one (torch.cat in a collate_fn), or\n"
      "# torch.multiprocessing.set_sharing_strategy(\"file_system\") to pass no descriptor per tensor.\n"
      "# Decoding on the GPU (NVIDIA DALI) leaves the main process only the hand-over.";
constexpr const char* kFixReceivingCpp
    = "// LibTorch's workers are threads: put the per-batch work in the dataset, which they run, and\n"
      "// leave nothing but training between two batches on the main thread.\n"
      "auto loader = torch::data::make_data_loader(\n"
      "    MyDataset(root).map(MyTransform()).map(torch::data::transforms::Stack<>()),\n"
      "    torch::data::DataLoaderOptions().batch_size(256).workers(4));  // larger batches: fewer hand-overs";

class DataLoaderStall final : public Rule {
public:
    const RuleInfo& info() const override {
        static const RuleInfo info { "dataloader-stall", "The GPU waits for the next batch",
            "The training loop waits for the DataLoader while the GPU has nothing to compute.",
            { Input::Steps, Input::DataLoaderRanges } };
        return info;
    }

    void evaluate(const RuleContext& context, RuleOutcome& outcome) const override {
        const TraceModel& m = context.model();
        const StepAnalysis& steps = context.steps();
        const int32_t device = steps.device;

        // The DataLoader waits (one per batch) and what kind of iterator served them.
        struct Wait {
            size_t row;
            TimeSpan span;
        };
        std::vector<Wait> waits;
        size_t single = 0, multi = 0;
        const auto& a = m.annotations;
        for (size_t i = 0; i < a.size(); ++i) {
            const std::string_view name = m.str(a.name[i]);
            if (!isDataLoaderWait(name)) continue;
            waits.push_back({ i, { a.startNs[i], a.endNs[i] } });
            single += name.find("SingleProcess") != std::string_view::npos;
            multi += name.find("MultiProcessing") != std::string_view::npos;
        }
        // The iterator's name tells in Python; a recorded num_workers tells in any language.
        const auto workers = programFact(m, "tuneup.dataloader.num_workers");
        // Python's DataLoader names its iterator; a C++ program (LibTorch: worker threads) marks DataLoader.next.
        const bool python = single + multi > 0;
        const LoaderKind kind = single > multi ? LoaderKind::SingleProcess
            : multi > 0                        ? LoaderKind::MultiProcess
            : workers                          ? (*workers == 0 ? LoaderKind::SingleProcess : LoaderKind::MultiProcess)
                                               : LoaderKind::Unknown;
        // Without GPU activity (CPU training, or GPU capture off) the loop itself is what waits: the
        // loss is the host's wait, not GPU idle time.
        const bool gpu = m.hasGpuActivity();

        // GPU work that is not communication: during a wait, a GPU that runs only NCCL kernels is
        // waiting for a peer rank. That time is reported, not claimed: it is the other rank's stall
        // (rank-straggler weighs it), and this rank's own loss is the idle time.
        std::vector<TimeSpan> work;
        work.reserve(m.kernels.size() + m.memcpys.size() + m.memsets.size());
        for (size_t i = 0; i < m.kernels.size(); ++i)
            if (m.kernels.device[i] == device && context.kernelClass(i) != KernelClass::Communication)
                work.push_back({ m.kernels.startNs[i], m.kernels.endNs[i] });
        for (size_t i = 0; i < m.memcpys.size(); ++i)
            if (m.memcpys.device[i] == device) work.push_back({ m.memcpys.startNs[i], m.memcpys.endNs[i] });
        for (size_t i = 0; i < m.memsets.size(); ++i)
            if (m.memsets.device[i] == device) work.push_back({ m.memsets.startNs[i], m.memsets.endNs[i] });
        work = mergeSpans(std::move(work));
        std::vector<TimeSpan> waitSpans;
        waitSpans.reserve(waits.size());
        for (const Wait& w : waits)
            waitSpans.push_back(w.span);
        waitSpans = mergeSpans(std::move(waitSpans));

        int64_t waitNs = 0, noComputeNs = 0, idleNs = 0, longest = 0;
        size_t waitsInSteps = 0, longWaits = 0;
        for (const Step& step : steps.detection.steps) {
            waitNs += coveredNs(waitSpans, step.startNs, step.endNs);
            auto it = std::lower_bound(waitSpans.begin(), waitSpans.end(), step.startNs,
                [](const TimeSpan& s, int64_t t) { return s.endNs <= t; });
            for (; it != waitSpans.end() && it->startNs < step.endNs; ++it) {
                const int64_t s = std::max(it->startNs, step.startNs), e = std::min(it->endNs, step.endNs);
                noComputeNs += (e - s) - coveredNs(work, s, e);
            }
        }
        // The GPU idle inside the waits: the breakdown's idleDataNs, summed over the steps.
        for (const IdleGap& g : steps.gaps)
            idleNs += g.dataNs;
        const int64_t commOnly = std::max<int64_t>(noComputeNs - idleNs, 0);
        Evidence evidence;
        const auto& st = steps.detection.steps; // sorted, not overlapping
        for (const Wait& w : waits) {
            // The first step that ends after the wait starts: does it begin before the wait ends?
            auto s = std::upper_bound(
                st.begin(), st.end(), w.span.startNs, [](int64_t t, const Step& x) { return t < x.endNs; });
            if (s == st.end() || s->startNs >= w.span.endNs) continue;
            ++waitsInSteps;
            longest = std::max(longest, w.span.durationNs());
            if (w.span.durationNs() >= kLongWaitNs) {
                ++longWaits;
                if (evidence.events.size() < 50) evidence.events.push_back({ EventTable::Annotation, RowIndex(w.row) });
                if (evidence.spans.size() < 20) evidence.spans.push_back(w.span);
            }
        }
        const int64_t totalStep = context.totalStepNs();
        auto shareOf = [&](int64_t ns) { return totalStep > 0 ? double(ns) / double(totalStep) : 0.0; };
        // What the wait costs: the GPU's idle time inside it, or without GPU activity the wait itself.
        const int64_t lossNs = gpu ? idleNs : waitNs;
        const double share = shareOf(lossNs);
        if (share < kMinShare) {
            outcome.reason = std::to_string(waitsInSteps) + " DataLoader waits in "
                + std::to_string(context.stepCount()) + " steps (" + formatDuration(context.perStep(waitNs))
                + " per step)"
                + (gpu ? ": the GPU idles " + formatDuration(context.perStep(idleNs)) + " per step in them" : "") + " ("
                + formatPercent(share) + " of step time, below the " + formatPercent(kMinShare) + " threshold)";
            return;
        }

        evidence.eventsTotal = longWaits;
        evidence.facts = { { "DataLoader", std::string(m.str(a.name[waits.front().row])) },
            { "waits in steps",
                std::to_string(waitsInSteps) + " (" + std::to_string(longWaits) + " of 1 ms or more, longest "
                    + formatDuration(longest) + ")" },
            { "host waiting for data",
                formatDuration(context.perStep(waitNs)) + " per step (" + formatPercent(shareOf(waitNs)) + ")" } };
        // What the main thread did while it waited, from the agent's samples: a pipe means worker
        // processes had no batch ready; running means it made the batch itself, or received it.
        // With workers: which side is slow, from the main thread's state and the workers' own recordings.
        const HostTime hostTime = steps.hostStates.timeIn(waitSpans);
        std::optional<LoaderDiagnosis> diagnosis;
        LoaderWorkersDuring during;
        if (kind == LoaderKind::MultiProcess) {
            during = loaderWorkersDuring(context.rank().loaderWorkers, waitSpans);
            diagnosis = diagnoseLoader(hostTime, during, python);
            evidence.facts.push_back({ "which side is slow", describeDiagnosis(*diagnosis) });
        }
        if (const std::string host = describeHostTime(hostTime); !host.empty())
            evidence.facts.push_back({ "main thread during the waits (sampled)", host });
        // Which lines of the user's Python the main thread ran during the waits (the bootstrap's samples).
        SampledSites lines = sampledSites(m, waitSpans);
        if (const std::string text = describeSampledSites(lines); !text.empty())
            evidence.facts.push_back({ "main thread's code during the waits (sampled)", text });
        if (during.workers > 0) {
            const std::string states = describeHostTime(during.states);
            evidence.facts.push_back({ "DataLoader workers during the waits (recorded)",
                std::to_string(during.workers) + (during.workers == 1 ? " worker" : " workers") + ", making a batch "
                    + formatPercent(during.fetchingShare()) + " of the time"
                    + (states.empty() ? "" : "; their threads (sampled): " + states) });
        }
        const std::string kindText = kind == LoaderKind::SingleProcess
            ? "DataLoader runs in the main process (num_workers=0)"
            : kind != LoaderKind::MultiProcess       ? "DataLoader"
            : diagnosis->side == LoaderSide::Workers ? "DataLoader workers do not keep up"
            : diagnosis->side == LoaderSide::Receiving
            ? (!python ? "the main thread is busy during the waits, more workers will not help"
                    : diagnosis->mainRunning.value_or(0) >= kMainRunningAtLeast
                    ? "the main process is busy receiving batches, more workers will not help"
                    : "the batches are slow to reach the main process, more workers will not help")
            : diagnosis->side == LoaderSide::Unclear
            ? "DataLoader with workers; neither making nor receiving the batches clearly holds it up"
            : "DataLoader with workers; whether making or receiving the batches is slow was not recorded";
        if (gpu)
            evidence.facts.push_back({ "GPU idle meanwhile",
                formatDuration(context.perStep(idleNs)) + " per step (" + formatPercent(share) + ")" });
        else
            evidence.facts.push_back({ "GPU activity", "none recorded (CPU training, or GPU capture off)" });
        // The DataLoader's settings, when the Python bootstrap (or the program) recorded them.
        if (workers) {
            const auto pin = programFact(m, "tuneup.dataloader.pin_memory");
            const auto persistent = programFact(m, "tuneup.dataloader.persistent_workers");
            evidence.facts.push_back({ "DataLoader settings (recorded)",
                "num_workers=" + std::to_string(*workers)
                    + (pin ? *pin ? ", pin_memory=True" : ", pin_memory=False" : "")
                    + (persistent ? *persistent ? ", persistent_workers=True" : ", persistent_workers=False" : "") });
        }
        if (commOnly > 0)
            evidence.facts.push_back({ "GPU running only communication meanwhile",
                formatDuration(context.perStep(commOnly))
                    + " per step (waiting for other ranks; see rank-straggler)" });

        Finding f;
        f.sources = std::move(lines.sites);
        f.sourceCalls = { "DataLoader" }; // where it is made: where num_workers and pin_memory are set
        f.severity = share >= 0.20 ? Severity::Error : Severity::Warning;
        if (gpu) {
            f.gain = context.gainOverSteps(lossNs,
                "if batches were ready when asked for, the GPU idle inside the DataLoader waits would go", "high");
            f.title = "the GPU waits " + formatDuration(f.gain->perStepNs) + " per step (" + formatPercent(share)
                + ") for the next batch; " + kindText;
            f.detail = "Measured from the DataLoader's __next__ ranges: the loop waited "
                + formatDuration(context.perStep(waitNs)) + " per step (" + formatPercent(shareOf(waitNs))
                + " of the step time) for data, and the GPU was idle for " + formatDuration(context.perStep(idleNs))
                + " of it"
                + (commOnly > 0 ? "; for another " + formatDuration(context.perStep(commOnly))
                            + " it ran only communication kernels, which wait for other ranks (their own stall, "
                              "which rank-straggler weighs)"
                                : std::string())
                + ". ";
        } else {
            // Loading in parallel competes with the training for CPU cores: less sure than GPU idle time.
            f.gain = context.gainOverSteps(lossNs,
                "if batches were ready when asked for, the training loop would not wait for them (no GPU activity "
                "was recorded, so this is the host's wait; workers need free CPU cores to hide it)",
                "medium");
            f.title = "the training loop waits " + formatDuration(f.gain->perStepNs) + " per step ("
                + formatPercent(share) + ") for the next batch; " + kindText;
            f.detail = "Measured from the DataLoader's __next__ ranges: the loop waited "
                + formatDuration(context.perStep(waitNs)) + " per step (" + formatPercent(share)
                + " of the step time) for data. The recording has no GPU activity (CPU training, or GPU capture "
                  "was off: `tuneup info` says why), so every millisecond of that wait is a millisecond of the "
                  "step. ";
        }
        if (kind == LoaderKind::SingleProcess)
            f.detail += "The DataLoader runs in the training process (_SingleProcessDataLoaderIter, num_workers=0): "
                        "loading and augmenting each batch stops the loop. "
                + std::string(gpu ? "Worker processes prepare batches while the GPU computes."
                                  : "Worker processes prepare batches on other CPU cores while the loop trains.");
        else if (kind == LoaderKind::MultiProcess)
            f.detail
                += std::string(python ? "The DataLoader already uses worker processes (_MultiProcessingDataLoaderIter"
                                      : "The DataLoader already uses worker threads (num_workers recorded")
                + "; " + std::to_string(longWaits) + " of " + std::to_string(waitsInSteps)
                + " waits take 1 ms or more). " + diagnosis->why
                + (diagnosis->side == LoaderSide::Workers
                        ? " More workers, cheaper decoding/augmentation, batches prepared further ahead, or "
                          "persistent workers."
                        : diagnosis->side == LoaderSide::Receiving
                        ? (python ? " Make each batch cheaper to hand over: a few contiguous tensors instead of "
                                    "many Python objects, larger batches, decoding on the GPU."
                                  : " Move the per-batch work into the dataset, which the worker threads run.")
                        : " If the workers are slow, more workers help; if the main process is busy receiving, "
                          "return a few contiguous tensors instead of many Python objects.");
        f.evidence = std::move(evidence);
        const bool receiving = kind == LoaderKind::MultiProcess && diagnosis->side == LoaderSide::Receiving;
        const bool either = kind == LoaderKind::MultiProcess
            && (diagnosis->side == LoaderSide::Unclear || diagnosis->side == LoaderSide::Unknown);
        f.fixPython = receiving                ? kFixReceivingPython
            : either                           ? kFixEitherSidePython
            : kind == LoaderKind::MultiProcess ? kFixMoreWorkersPython
                                               : kFixTurnOnWorkersPython;
        f.fixCpp = receiving                   ? kFixReceivingCpp
            : kind == LoaderKind::MultiProcess ? kFixMoreWorkersCpp
                                               : kFixTurnOnWorkersCpp;
        outcome.findings.push_back(std::move(f));
    }
};

} // namespace

std::unique_ptr<Rule> makeDataloaderStall() {
    return std::make_unique<DataLoaderStall>();
}

} // namespace tuneup::rules
