#include "steps/step_detector.h"

#include "units.h"

#include <algorithm>
#include <charconv>
#include <map>
#include <unordered_map>

namespace tuneup::analysis {

std::string_view stepSourceName(StepSource s) {
    switch (s) {
    case StepSource::UserRange:
        return "the range given with --step-range";
    case StepSource::ProfilerStep:
        return "ProfilerStep#N ranges";
    case StepSource::BootstrapRange:
        return "tuneup.step ranges (Python bootstrap)";
    case StepSource::StepRange:
        return "ranges named \"step\"";
    case StepSource::OptimizerRanges:
        return "optimizer ranges (one Optimizer.zero_grad/step per step)";
    case StepSource::KernelPattern:
        return "the repeating kernel pattern";
    case StepSource::None:
        return "none";
    case StepSource::WholeWindow:
        return "none found: the whole window as one span";
    }
    return "none";
}

namespace {

bool matchesRange(std::string_view name, std::string_view wanted) {
    return name == wanted || (name.size() > wanted.size() && name.starts_with(wanted) && name[wanted.size()] == '#');
}

// Steps from annotations whose name matches; nested matches (a step inside a step) keep the outer one.
std::vector<Step> stepsFromRanges(const TraceModel& model, std::string_view wanted, bool numbered) {
    std::vector<Step> steps;
    const auto& a = model.annotations;
    for (size_t i = 0; i < a.size(); ++i) {
        const std::string_view name = model.str(a.name[i]);
        if (!matchesRange(name, wanted) || a.endNs[i] <= a.startNs[i]) continue;
        if (!steps.empty() && a.startNs[i] < steps.back().endNs)
            continue; // nested in (or overlapping) the previous step
        Step step;
        step.number = int64_t(steps.size());
        if (numbered && name.size() > wanted.size() + 1) {
            // "NAME#12": 12; a suffix that is not a number, or too long for one, keeps the index.
            const std::string_view digits = name.substr(wanted.size() + 1);
            int64_t number = 0;
            const auto [end, error] = std::from_chars(digits.data(), digits.data() + digits.size(), number);
            if (error == std::errc() && end == digits.data() + digits.size() && digits.front() != '-')
                step.number = number;
        }
        step.startNs = a.startNs[i];
        step.endNs = a.endNs[i];
        step.annotation = RowIndex(i);
        steps.push_back(step);
    }
    return steps;
}

// Steps bounded by a range that occurs once per iteration: each step runs from one occurrence's
// start to the next one's start; the last ends where the trace's CPU activity ends.
std::vector<Step> stepsBetween(const TraceModel& model, std::string_view prefix) {
    std::vector<int64_t> starts;
    std::vector<RowIndex> rows;
    const auto& a = model.annotations;
    for (size_t i = 0; i < a.size(); ++i)
        if (model.str(a.name[i]).starts_with(prefix) && (starts.empty() || a.startNs[i] >= starts.back())) {
            starts.push_back(a.startNs[i]);
            rows.push_back(RowIndex(i));
        }
    std::vector<Step> steps;
    if (starts.size() < 2) return steps;
    const auto span = model.span();
    for (size_t i = 0; i < starts.size(); ++i) {
        Step step;
        step.number = int64_t(i);
        step.startNs = starts[i];
        step.endNs = i + 1 < starts.size() ? starts[i + 1] : (span ? span->endNs : starts[i]);
        step.annotation = rows[i];
        if (step.endNs > step.startNs) steps.push_back(step);
    }
    return steps;
}

// The repeating kernel pattern: the kernel name that occurs most often at a constant distance (in
// kernels) from its previous occurrence marks the start of each step. Of names that occur equally
// often, the one that comes first: the step starts with its first kernel, and the choice does not
// depend on the order of a hash map.
std::vector<Step> stepsFromKernelPattern(const TraceModel& model) {
    const auto& k = model.kernels;
    std::vector<Step> steps;
    if (k.size() < 8) return steps;
    std::unordered_map<StringId, std::vector<size_t>> positions;
    for (size_t i = 0; i < k.size(); ++i)
        positions[k.name[i]].push_back(i);
    StringId best = 0;
    size_t bestCount = 0, bestFirst = 0;
    for (const auto& [name, where] : positions) {
        if (where.size() < 3 || where.size() > k.size() / 4) continue;
        std::map<size_t, size_t> gaps;
        for (size_t i = 1; i < where.size(); ++i)
            ++gaps[where[i] - where[i - 1]];
        const auto common = std::max_element(
            gaps.begin(), gaps.end(), [](const auto& x, const auto& y) { return x.second < y.second; });
        // Regular: at least 90% of the gaps are the same, and the period spans several kernels.
        const bool regular = common->first >= 4 && common->second * 10 >= (where.size() - 1) * 9;
        if (regular && (where.size() > bestCount || (where.size() == bestCount && where.front() < bestFirst))) {
            best = name;
            bestCount = where.size();
            bestFirst = where.front();
        }
    }
    if (!bestCount) return steps;
    const auto& where = positions[best];
    for (size_t i = 0; i + 1 < where.size(); ++i) {
        Step step;
        step.number = int64_t(i);
        step.startNs = k.startNs[where[i]];
        step.endNs = k.startNs[where[i + 1]];
        steps.push_back(step);
    }
    return steps;
}

} // namespace

StepDetection detectSteps(const TraceModel& model, std::string_view userRange) {
    StepDetection result;
    if (!userRange.empty()) {
        result.source = StepSource::UserRange;
        result.detail = std::string(userRange);
        result.steps = stepsFromRanges(model, userRange, true);
        if (result.steps.empty()) result.detail = "no range named \"" + std::string(userRange) + "\" in the trace";
        return result;
    }
    struct Candidate {
        StepSource source;
        std::string_view name;
        bool numbered;
    };
    for (const Candidate& c : { Candidate { StepSource::ProfilerStep, "ProfilerStep", true },
             Candidate { StepSource::BootstrapRange, "tuneup.step", true },
             Candidate { StepSource::StepRange, "step", true } }) {
        result.steps = stepsFromRanges(model, c.name, c.numbered);
        if (!result.steps.empty()) {
            result.source = c.source;
            result.detail = std::string(c.name);
            return result;
        }
    }
    for (std::string_view prefix : { "Optimizer.zero_grad", "Optimizer.step" }) {
        result.steps = stepsBetween(model, prefix);
        if (!result.steps.empty()) {
            result.source = StepSource::OptimizerRanges;
            result.detail = std::string(prefix);
            return result;
        }
    }
    result.steps = stepsFromKernelPattern(model);
    if (!result.steps.empty()) {
        result.source = StepSource::KernelPattern;
        return result;
    }
    result.detail = "no step ranges (ProfilerStep#N, tuneup.step, step), no optimizer ranges and no repeating "
                    "kernel pattern; name the step range with --step-range";
    // No steps is not no analysis: a GPU busy 2% of a one-second capture is a finding whatever the steps.
    if (const auto window = model.span(); window && window->endNs > window->startNs) {
        result.source = StepSource::WholeWindow;
        result.steps.push_back({ 0, window->startNs, window->endNs, kNoRow });
        result.detail
            += "; the whole window, " + formatDuration(window->endNs - window->startNs) + ", is analysed as one span";
    }
    return result;
}

} // namespace tuneup::analysis
