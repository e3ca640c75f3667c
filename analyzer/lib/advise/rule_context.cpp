#include "advise/rule_context.h"

#include "saturating.h"

#include <cstdio>

namespace tuneup::analysis {

std::string_view inputName(Input input) {
    switch (input) {
    case Input::GpuKernels:
        return "GPU kernel activity";
    case Input::Memcpys:
        return "memory copy activity";
    case Input::CpuOps:
        return "framework operators (torch.profiler cpu_op events)";
    case Input::InputShapes:
        return "operator input shapes (record_shapes=True) or GEMM/convolution shapes recorded by tuneup record";
    case Input::Steps:
        return "training steps (ProfilerStep#N, step ranges, optimizer ranges or a repeating kernel pattern)";
    case Input::OptimizerRanges:
        return "optimizer ranges (Optimizer.zero_grad / Optimizer.step)";
    case Input::DataLoaderRanges:
        return "DataLoader ranges (enumerate(DataLoader)...__next__, or DataLoader.next)";
    case Input::DeviceProperties:
        return "GPU properties (model, compute capability)";
    case Input::TorchFlags:
        return "torch settings read from the process (tuneup record with the torch probes)";
    case Input::Collectives:
        return "collective communication (NCCL kernels or record_param_comms)";
    case Input::MultipleRanks:
        return "traces of two or more ranks";
    case Input::MemoryUsage:
        return "GPU memory events (tuneup record, torch.profiler with profile_memory=True, or nsys profile "
               "--cuda-memory-usage=true)";
    }
    return "?";
}

bool RuleContext::has(Input input) const {
    return hasInput(m_rank, m_jobRanks, input);
}

Gain RuleContext::gain(int64_t perStepNs, std::string model, std::string confidence) const {
    Gain g;
    g.perStepNs = perStepNs;
    g.stepShare = stepNs() > 0 ? double(perStepNs) / double(stepNs()) : 0.0;
    g.model = std::move(model);
    g.confidence = std::move(confidence);
    return g;
}

int64_t RuleContext::totalStepNs() const {
    int64_t total = 0;
    for (const Step& step : steps().detection.steps)
        total = saturatingAdd(total, step.durationNs()); // steps of a damaged trace can sum past int64
    return total;
}

Gain RuleContext::gainOverSteps(int64_t totalNs, std::string model, std::string confidence) const {
    Gain g = gain(perStep(totalNs), std::move(model), std::move(confidence));
    const int64_t total = totalStepNs();
    g.stepShare = total > 0 ? double(totalNs) / double(total) : 0.0;
    return g;
}

namespace {
template <class Predicate> bool anyAnnotation(const TraceModel& model, Predicate matches) {
    for (size_t i = 0; i < model.annotations.size(); ++i)
        if (matches(model.str(model.annotations.name[i]))) return true;
    return false;
}
} // namespace

bool hasInput(const RankAnalysis& rank, size_t jobRanks, Input input) {
    const TraceModel& m = *rank.model;
    switch (input) {
    case Input::GpuKernels:
        return !m.kernels.empty();
    case Input::Memcpys:
        return !m.memcpys.empty();
    case Input::CpuOps:
        return !m.cpuOps.empty();
    case Input::InputShapes:
        // The agent's interposers record GEMM and convolution shapes as the libraries saw them.
        if (!m.gemmCalls.empty() || !m.convCalls.empty()) return true;
        for (size_t i = 0; i < m.cpuOps.size(); ++i)
            if (m.cpuOps.inputDims[i] != kEmptyString) return true;
        return false;
    case Input::Steps:
        return !rank.steps.detection.steps.empty();
    case Input::OptimizerRanges:
        return anyAnnotation(
            m, [](std::string_view name) { return name.find("Optimizer.") != std::string_view::npos; });
    case Input::DataLoaderRanges:
        return anyAnnotation(m, isDataLoaderWait);
    case Input::DeviceProperties:
        for (const auto& d : m.devices)
            if (d.computeMajor > 0) return true;
        return false;
    case Input::TorchFlags:
        // Recorded by the agent's torch probes (FrameworkFlagTable); Kineto and nsys traces have none.
        return !m.frameworkFlags.empty();
    case Input::Collectives:
        return !m.collectives.empty();
    case Input::MultipleRanks:
        return jobRanks > 1;
    case Input::MemoryUsage:
        for (const int32_t device : m.memoryEvents.device)
            if (device != kHostMemory) return true;
        return !m.memoryPeaks.empty();
    }
    return false;
}

std::optional<int64_t> programFact(const TraceModel& model, std::string_view name) {
    const auto& f = model.programFacts;
    for (size_t i = f.size(); i-- > 0;)
        if (model.str(f.name[i]) == name) return f.value[i];
    return std::nullopt;
}

std::vector<ProgramFact> programFactSeries(const TraceModel& model, std::string_view name) {
    std::vector<ProgramFact> series;
    const auto& f = model.programFacts;
    for (size_t i = 0; i < f.size(); ++i)
        if (model.str(f.name[i]) == name) series.push_back(f.row(i));
    return series;
}

FlagSummary frameworkFlag(const TraceModel& model, std::string_view name) {
    FlagSummary summary;
    const auto& f = model.frameworkFlags;
    for (size_t i = 0; i < f.size(); ++i) {
        if (model.str(f.name[i]) != name) continue;
        if (summary.observations++ == 0) summary.firstRow = RowIndex(i);
        const int64_t v = f.value[i];
        (v > 0 ? summary.everOn : v == 0 ? summary.everOff : summary.everUnknown) = true;
        summary.lastValue = v;
    }
    return summary;
}

} // namespace tuneup::analysis
