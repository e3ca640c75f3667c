// memory-headroom: the steady state's peak GPU memory is well under the device's capacity, so a larger
// batch would fit. See memory-headroom.md.

#include "advise/rule_context.h"
#include "all_rules.h"
#include "steps/memory_peak.h"

#include <cmath>
#include <cstdio>

namespace tuneup::rules {

using namespace analysis;

namespace {

constexpr double kMaxShare = 0.50; // raised only when the steady-state peak holds at most this of the GPU
constexpr double kTargetShare = 0.85; // the estimate fills the GPU up to this (context, fragmentation, others)
constexpr std::string_view kBatchFact = "tuneup.dataloader.batch_size";

std::string number(double factor) {
    char text[32];
    std::snprintf(text, sizeof text, "%.1f", factor);
    return text;
}

std::string times(double factor) {
    return number(factor) + "x";
}

bool contains(std::string_view s, std::string_view part) {
    return s.find(part) != std::string_view::npos;
}

// Training shows a backward pass (autograd's ops, kernels named for it: backward, cuDNN's dgrad/wgrad) or an
// optimizer step; a trace with operators but neither is inference. Without operators it cannot tell (a tuneup
// copy of a Kineto trace keeps no operators: its inference must not read as training).
enum class Workload { Training, Inference, Unknown };
Workload workload(const RuleContext& context) {
    const TraceModel& m = context.model();
    if (context.has(Input::OptimizerRanges)) return Workload::Training;
    for (size_t i = 0; i < m.programFacts.size(); ++i)
        if (m.str(m.programFacts.name[i]).starts_with("tuneup.zero_grad")) return Workload::Training;
    std::vector<char> seen(m.strings.size(), 0);
    auto backward = [&](StringId id) {
        if (id >= seen.size() || seen[id]) return false;
        seen[id] = 1;
        const std::string_view name = m.str(id);
        return contains(name, "Backward") || contains(name, "backward");
    };
    for (const StringId id : m.cpuOps.name)
        if (backward(id)) return Workload::Training;
    for (const StringId id : m.annotations.name)
        if (backward(id)) return Workload::Training;
    if (!m.cpuOps.empty()) return Workload::Inference;
    for (const StringId id : m.kernels.name)
        if (backward(id) || contains(m.str(id), "dgrad") || contains(m.str(id), "wgrad")) return Workload::Training;
    return Workload::Unknown;
}

std::string gpuText(const TraceModel& m, int32_t device, int64_t capacity) {
    const DeviceInfo* d = m.device(device);
    return "GPU " + std::to_string(device) + (d && !d->name.empty() ? " (" + d->name + ")" : std::string()) + ", "
        + formatBytes(capacity);
}

// The fix: the batch that fits, the learning rate scaled with it, warm-up and decay; LARS/LAMB beyond that.
// `now`: the batch size now ("64" when unknown); `fits`: what fits.
std::string fixPython(const std::string& now, const std::string& fits) {
    return "base_batch, base_lr = " + now
        + ", 0.1  # the batch size and learning rate now\n"
          "batch = "
        + fits
        + "  # what fits (the estimate above)\n"
          "lr = base_lr * batch / base_batch      # linear scaling (SGD); Adam/AdamW: often sqrt(batch / base_batch)\n"
          "loader = DataLoader(dataset, batch_size=batch, shuffle=True, num_workers=8, pin_memory=True)\n"
          "optimizer = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9, weight_decay=1e-4)\n"
          "warmup = 5 * len(loader)               # about 5 epochs of linear warm-up, then decay\n"
          "scheduler = torch.optim.lr_scheduler.SequentialLR(optimizer, [\n"
          "    torch.optim.lr_scheduler.LinearLR(optimizer, start_factor=base_lr / lr, total_iters=warmup),\n"
          "    torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=total_steps - warmup)],\n"
          "    milestones=[warmup])               # scheduler.step() after each optimizer.step()\n"
          "# Very large batches: a layer-wise adaptive optimizer (LARS for SGD, LAMB for Adam), e.g. APEX's\n"
          "# from apex.optimizers import FusedLAMB; optimizer = FusedLAMB(model.parameters(), lr=lr, "
          "weight_decay=0.01)";
}

std::string fixCpp(const std::string& now, const std::string& fits) {
    return "const int64_t base_batch = " + now + ", batch = " + fits
        + ";  // the batch size now, and what fits (the estimate above)\n"
          "const double base_lr = 0.1, lr = base_lr * batch / base_batch;  // linear scaling (SGD)\n"
          "auto loader = torch::data::make_data_loader(std::move(dataset),\n"
          "    torch::data::DataLoaderOptions().batch_size(batch).workers(8));\n"
          "torch::optim::SGD optimizer(model->parameters(),\n"
          "    torch::optim::SGDOptions(lr).momentum(0.9).weight_decay(1e-4));\n"
          "// Linear warm-up over the first `warmup` steps, then decay: set the rate before each step.\n"
          "for (auto& group : optimizer.param_groups()) {\n"
          "    auto& options = static_cast<torch::optim::SGDOptions&>(group.options());\n"
          "    options.lr(step < warmup ? lr * (step + 1) / warmup\n"
          "                             : 0.5 * lr * (1 + std::cos(M_PI * (step - warmup) / (total_steps - "
          "warmup))));\n"
          "}";
}

class MemoryHeadroom final : public Rule {
public:
    const RuleInfo& info() const override {
        static const RuleInfo info { "memory-headroom", "GPU memory left unused: a larger batch would fit",
            "The steady state's peak GPU memory is well under the device's capacity: a larger batch would fit and "
            "use the GPU better, with the learning rate retuned for it.",
            { Input::MemoryUsage, Input::Steps } };
        return info;
    }

    void evaluate(const RuleContext& context, RuleOutcome& outcome) const override {
        const TraceModel& m = context.model();
        const MemoryPeaks p = memoryPeaks(m, context.steps());
        const MemoryTotalPeak& a = p.allocated;
        const MemoryTotalPeak& r = p.reserved;
        if (!a.exact() && !r.exact()) {
            const MemoryTotalPeak& known = a.source != MemorySource::None ? a : r;
            outcome.status = RuleStatus::NotEvaluated;
            outcome.reason
                = "needs the allocator's totals (Total Allocated/Total Reserved, which newer PyTorch writes with "
                  "profile_memory=True; a tuneup recording of a Python program reads them after each optimizer "
                  "step): this trace "
                  "records only the size of each allocation, so a step's peak is known only above "
                  "where the step began (up to "
                + formatBytes(std::max<int64_t>(known.riseBytes, 0))
                + " here); what was allocated before the trace began (weights, optimizer state) is unknown (at least "
                + formatBytes(known.beforeTraceBytes) + ")";
            return;
        }
        if (p.capacityBytes <= 0) {
            outcome.status = RuleStatus::NotEvaluated;
            outcome.reason = "needs the GPU's memory capacity (deviceProperties totalGlobalMem, or nsys's "
                             "TARGET_INFO_GPU): the trace does not describe GPU "
                + std::to_string(p.device);
            return;
        }
        // What the process holds from the GPU: the caching allocator's reserved memory when known.
        const bool byReserved = r.exact();
        const int64_t held = byReserved ? r.peakBytes : a.peakBytes;
        const double share = double(held) / double(p.capacityBytes);
        const std::string heldText = formatBytes(held) + " of " + formatBytes(p.capacityBytes) + " ("
            + formatPercent(share) + ", " + (byReserved ? "reserved" : "allocated") + ")";
        if (share > kMaxShare) {
            outcome.reason = "the steady state's peak GPU memory is " + heldText + ", above the "
                + formatPercent(kMaxShare) + " under which this rule advises a larger batch";
            return;
        }
        const Workload work = workload(context);
        if (work == Workload::Inference) {
            outcome.status = RuleStatus::NotApplicable;
            outcome.reason = "no backward pass or optimizer step in the trace (inference): GPU memory peaks at "
                + heldText + "; a larger training batch does not apply (for throughput, batch more requests)";
            return;
        }
        if (work == Workload::Unknown) {
            outcome.status = RuleStatus::NotEvaluated;
            outcome.reason = "GPU memory peaks at " + heldText
                + ", but whether this is training cannot be told: the trace has no optimizer ranges, operators, "
                  "bootstrap facts or backward kernels";
            return;
        }

        // Memory that grows with the batch: the allocated peak above what stays allocated between steps
        // (weights, gradients kept, optimizer state). The caching allocator holds `slack` times what is
        // allocated (block rounding, fragmentation).
        const int64_t allocatedPeak = a.exact() ? a.peakBytes : held;
        const int64_t fixed = a.exact() ? std::max<int64_t>(a.baseBytes, 0) : 0;
        const int64_t variable = allocatedPeak - fixed;
        const double slack = allocatedPeak > 0 ? std::max(1.0, double(held) / double(allocatedPeak)) : 1.0;
        const double target = kTargetShare * double(p.capacityBytes);
        if (variable <= 0) {
            outcome.reason = "GPU memory peaks at " + heldText + ", but nothing is allocated within a step above the "
                + formatBytes(fixed)
                + " that stays allocated between steps: how memory grows with the batch cannot be told";
            return;
        }
        // With the peak at most kMaxShare of the GPU, this is at least kTargetShare / kMaxShare (1.7x).
        const double growth = (target / slack - double(fixed)) / double(variable);
        const std::optional<int64_t> batch = programFact(m, kBatchFact);
        const bool knownBatch = batch && *batch > 0;
        int64_t fits = 0;
        if (knownBatch) {
            fits = int64_t(std::floor(double(*batch) * growth));
            if (fits >= 16) fits -= fits % 8; // a multiple of 8: tensor-core friendly shapes
        }

        Finding f;
        f.severity = Severity::Info;
        const std::string estimate = knownBatch
            ? "batch " + std::to_string(*batch) + " -> about " + std::to_string(fits)
            : "about " + times(growth) + " the batch";
        f.title = "GPU memory peaks at " + formatBytes(held) + " of " + formatBytes(p.capacityBytes) + " ("
            + formatPercent(share) + ") per step: " + estimate + " would fit";
        Evidence& e = f.evidence;
        e.facts = { { "device", gpuText(m, p.device, p.capacityBytes) },
            { "steady-state peak reserved",
                r.exact() ? formatBytes(r.peakBytes) + " (" + formatPercent(double(r.peakBytes) / p.capacityBytes)
                        + " of the GPU)"
                          : std::string("not recorded") },
            { "steady-state peak allocated", a.exact() ? formatBytes(a.peakBytes) : std::string("not recorded") } };
        const bool readPeaks = a.windowPeaks > 0 || r.windowPeaks > 0;
        if (readPeaks)
            e.facts.emplace_back("read from",
                "the caching allocator's peaks, read after each optimizer step "
                "(torch.cuda.max_memory_allocated / max_memory_reserved)");
        if (a.exact()) {
            e.facts.emplace_back("allocated between steps (weights, optimizer state...)", formatBytes(fixed));
            e.facts.emplace_back("grows within a step (activations, temporaries)", formatBytes(variable));
        }
        // Where to look: the allocation that reached the allocated peak (the reserved level often holds from
        // before the first step, reached by no event in the steady state).
        const MemoryTotalPeak& peak = a.exact() ? a : r;
        const Step& peakStep = context.steps().detection.steps[std::min(peak.peakStep, context.stepCount() - 1)];
        e.facts.emplace_back("steps",
            std::to_string(p.steps - p.firstSteadyStep) + " in the steady state"
                + (p.firstSteadyStep ? " (the first left out as warm-up)" : "") + "; the "
                + (a.exact() ? "allocated" : "reserved") + " peak in step " + std::to_string(peakStep.number));
        e.facts.emplace_back("batch size",
            knownBatch ? std::to_string(*batch) + " (the DataLoader's)" : std::string("not recorded in the trace"));
        if (knownBatch)
            e.facts.emplace_back("memory per sample", formatBytes(int64_t(double(variable) / double(*batch))));
        e.facts.emplace_back("estimate",
            "filling " + formatPercent(kTargetShare) + " of the GPU allows " + times(growth) + " the batch"
                + (knownBatch ? ": " + std::to_string(fits) : std::string()));
        e.spans.push_back({ peakStep.startNs, peakStep.endNs });
        if (peak.peakRow != kNoRow) e.events.push_back({ EventTable::MemoryEvent, peak.peakRow });
        e.eventsTotal = e.events.size();

        f.detail = std::string(readPeaks ? "The caching allocator's peaks, read after each optimizer step, reach "
                                         : "The caching allocator's totals in the trace's memory events peak at ")
            + heldText
            + " in the steady state. The memory that grows with the batch is the allocated peak above what stays "
              "allocated between steps; scaling it until the GPU is "
            + formatPercent(kTargetShare) + " full (room for the CUDA context, fragmentation and cuDNN workspaces) "
            + (knownBatch ? "gives a batch of about " + std::to_string(fits) + " instead of " + std::to_string(*batch)
                          : "allows about " + times(growth) + " the batch")
            + ". A larger batch runs larger kernels and fewer steps per epoch (less launch, Python and optimizer "
              "overhead per sample); mixed precision lowers memory further. It changes training: scale the "
              "learning rate with the batch (linearly for SGD), warm it up over the first epochs and decay it, "
              "retune weight decay, and for very large batches use a layer-wise adaptive optimizer (LARS, "
              "LAMB/NVLAMB, NovoGrad). Check the accuracy reached, not only the speed.";
        const std::string factor = number(growth);
        const std::string now = knownBatch ? std::to_string(*batch) : "64";
        f.fixPython = fixPython(now, knownBatch ? std::to_string(fits) : "int(base_batch * " + factor + ")");
        f.fixCpp = fixCpp(now, knownBatch ? std::to_string(fits) : "static_cast<int64_t>(base_batch * " + factor + ")");
        outcome.findings.push_back(std::move(f));
    }
};

} // namespace

std::unique_ptr<Rule> makeMemoryHeadroom() {
    return std::make_unique<MemoryHeadroom>();
}

} // namespace tuneup::rules
