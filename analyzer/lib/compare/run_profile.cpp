#include "compare/run_profile.h"

#include "bench/bench_measure.h"
#include "report/report_helpers.h"

#include <algorithm>
#include <limits>
#include <map>
#include <unordered_map>

namespace tuneup::analysis {

std::string normalisedKernelName(std::string_view name) {
    return shortKernelName(name, std::numeric_limits<size_t>::max());
}

namespace {

// Kernel times of a damaged trace can sum past int64: the sum stops at its largest value.
int64_t saturatingAdd(int64_t a, int64_t b) {
    int64_t sum = 0;
    return __builtin_add_overflow(a, b, &sum) ? (b > 0 ? INT64_MAX : INT64_MIN) : sum;
}

// The steps of one rank that compare may measure: all found, less the last when it is no step boundary.
size_t usableSteps(const StepDetection& detection, bool* lastDropped) {
    // Nothing marked steps (the whole window as one span): there is no step time to compare.
    if (detection.source == StepSource::WholeWindow) return 0;
    size_t n = detection.steps.size();
    // Steps found where each begins (the optimizer's ranges, ...) run from one to the next: the last runs to
    // the end of the recording (bench drops it too: bench_measure.h runSteps).
    if (n > 0 && lastStepRunsToTheEnd(detection.source)) {
        --n;
        *lastDropped = true;
    }
    return n;
}

void addBreakdown(StepBreakdown& sum, const StepBreakdown& b) {
    for (const auto& [name, field] : kStepBreakdownFields)
        sum.*field += b.*field;
}

StepBreakdown dividedBreakdown(const StepBreakdown& sum, size_t n) {
    StepBreakdown mean;
    if (n == 0) return mean;
    for (const auto& [name, field] : kStepBreakdownFields)
        mean.*field = sum.*field / int64_t(n);
    return mean;
}

struct KernelAccumulator {
    std::map<std::string, KernelStat> byName;
    KernelStat& of(std::string_view rawName) {
        std::string name = normalisedKernelName(rawName);
        auto [it, fresh] = byName.try_emplace(name);
        if (fresh) {
            it->second.name = std::move(name);
            it->second.kernelClass = classifyKernel(rawName);
        }
        return it->second;
    }
};

// The kernels that started inside a rank's measured steps, one call at a time.
void addKernelsInSteps(KernelAccumulator& acc, const TraceModel& model, int64_t startNs, int64_t endNs) {
    const KernelTable& k = model.kernels;
    std::unordered_map<StringId, KernelStat*> byId; // each distinct name normalised once
    for (size_t i = 0; i < k.size(); ++i) {
        if (k.startNs[i] < startNs || k.startNs[i] >= endNs) continue;
        KernelStat*& stat = byId[k.name[i]];
        if (!stat) stat = &acc.of(model.str(k.name[i]));
        const int64_t ns = std::max<int64_t>(0, k.endNs[i] - k.startNs[i]);
        ++stat->calls;
        stat->totalNs = saturatingAdd(stat->totalNs, ns);
        stat->callUs.push_back(double(ns) / 1e3);
    }
}

std::vector<FindingRef> raisedFindings(const AdviceReport& report) {
    std::vector<FindingRef> out;
    for (const Finding* f : report.ranked()) {
        const bool seen
            = std::any_of(out.begin(), out.end(), [&](const FindingRef& r) { return r.ruleId == f->ruleId; });
        if (seen) continue; // ranked(): the first of a rule has its largest gain
        out.push_back({ f->ruleId, f->severity, f->title, f->gain ? f->gain->perStepNs : 0 });
    }
    return out;
}

} // namespace

RunProfile profileJob(const Job& job, std::vector<std::string> inputs) {
    RunProfile p;
    p.inputs = std::move(inputs);
    for (const JobFile& f : job.ranks)
        p.files.push_back(f.path);
    for (const JobFile& f : job.summaries)
        p.files.push_back(f.path);
    const std::vector<RankSummary>& ranks = job.report.ranks;
    p.ranks = ranks.size();
    p.findings = raisedFindings(job.report);
    p.environment = jobEnvironment(job);
    if (!ranks.empty()) p.settings = ranks.front().settings;
    if (ranks.empty()) return p;

    // The job's steps: step i lasts as long as its slowest rank's step i.
    size_t steps = SIZE_MAX;
    for (const RankSummary& r : ranks)
        steps = std::min(steps, usableSteps(r.steps.detection, &p.lastStepDropped));
    p.stepSource = std::string(stepSourceName(ranks.front().steps.detection.source));
    for (const RankSummary& r : ranks)
        if (r.steps.detection.source != ranks.front().steps.detection.source)
            p.notes.push_back("ranks found their steps differently (" + p.stepSource + " and "
                + std::string(stepSourceName(r.steps.detection.source)) + ")");
    for (const RankSummary& r : ranks)
        if (usableSteps(r.steps.detection, &p.lastStepDropped) != steps) {
            p.notes.push_back(
                "ranks hold different numbers of steps: the first " + std::to_string(steps) + " of each are compared");
            break;
        }
    p.stepsFound = steps;
    std::vector<double> all(steps, 0.0);
    for (const RankSummary& r : ranks)
        for (size_t i = 0; i < steps; ++i)
            all[i] = std::max(all[i], double(r.steps.detection.steps[i].durationNs()) / 1e6);
    p.warmupSteps = detectWarmup(all).steps;
    p.stepMs.assign(all.begin() + ptrdiff_t(p.warmupSteps), all.end());
    const size_t first = p.warmupSteps;

    // Where the measured steps' time goes, and the kernels that ran in them.
    StepBreakdown sum;
    size_t counted = 0;
    for (const RankSummary& r : ranks)
        for (size_t i = first; i < steps && i < r.steps.perStep.size(); ++i) {
            addBreakdown(sum, r.steps.perStep[i]);
            ++counted;
        }
    p.perStep = dividedBreakdown(sum, counted);
    p.hasGpuWork = p.perStep.computeNs + p.perStep.communicationNs + p.perStep.memcpyNs + p.perStep.memsetNs > 0;

    KernelAccumulator kernels;
    if (!job.models.empty() && job.models.size() == ranks.size() && first < steps) {
        for (size_t r = 0; r < ranks.size(); ++r) {
            const auto& s = ranks[r].steps.detection.steps;
            addKernelsInSteps(kernels, job.models[r], s[first].startNs, s[steps - 1].endNs);
        }
        p.kernelSteps = (steps - first) * ranks.size();
    } else {
        // Summaries keep each rank's top kernels over its whole trace, not per step.
        for (const RankSummary& r : ranks)
            for (const KernelTotal& k : r.topKernels) {
                KernelStat& stat = kernels.of(k.name);
                stat.calls += k.count;
                stat.totalNs = saturatingAdd(stat.totalNs, k.totalNs);
            }
        size_t allSteps = 0;
        for (const RankSummary& r : ranks)
            allSteps += r.steps.detection.steps.size();
        p.kernelSteps = allSteps;
        p.kernelsWholeTrace = true;
        p.notes.push_back("kernels: the top " + std::to_string(kTopKernels)
            + " of each rank over the whole trace (the job was read as summaries), per step over all its steps");
    }
    for (auto& [name, k] : kernels.byName)
        p.kernels.push_back(std::move(k));
    std::sort(p.kernels.begin(), p.kernels.end(), [](const KernelStat& a, const KernelStat& b) {
        return a.totalNs != b.totalNs ? a.totalNs > b.totalNs : a.name < b.name;
    });
    return p;
}

} // namespace tuneup::analysis
