#include "steps/step_detector.h"

#include "units.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <functional>
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
        return "iteration ranges (step, iteration N, train_step, ...)";
    case StepSource::OptimizerRanges:
        return "optimizer ranges (one Optimizer.zero_grad/step per step)";
    case StepSource::KernelPattern:
        return "the repeating kernel pattern";
    case StepSource::None:
        return "none";
    case StepSource::WholeWindow:
        return "none found: the whole window as one span";
    case StepSource::FrameworkRanges:
        return "a framework's iteration ranges";
    case StepSource::FrameworkMarks:
        return "a framework's ranges opened once per iteration";
    }
    return "none";
}

bool lastStepRunsToTheEnd(StepSource s) {
    return s == StepSource::OptimizerRanges || s == StepSource::FrameworkMarks;
}

namespace {

// A range that marks a step, and the text of the step's number in its name ("" when it has none).
struct RangeMatch {
    bool matches = false;
    std::string_view number;
};

// NAME or NAME#N.
RangeMatch namedRange(std::string_view name, std::string_view wanted) {
    if (name == wanted) return { true, {} };
    if (name.size() > wanted.size() && name.starts_with(wanted) && name[wanted.size()] == '#')
        return { true, name.substr(wanted.size() + 1) };
    return {};
}

bool startsWithNoCase(std::string_view text, std::string_view prefix) {
    return text.size() >= prefix.size() && std::equal(prefix.begin(), prefix.end(), text.begin(), [](char p, char t) {
        return p == std::tolower(static_cast<unsigned char>(t));
    });
}

bool isDigit(char c) {
    return c >= '0' && c <= '9';
}

// How people and frameworks name one training iteration, whatever the case: the word alone ("step",
// "Iteration"), the word and '#' ("step#3"), or the word, separators and a number, then anything
// ("Step 12", "iteration_5", "iteration[5,37)", "iter 7 - overlap", "train_step_3"). "step_size",
// "iterator" or "Optimizer.step" are not iterations.
RangeMatch iterationRange(std::string_view name) {
    for (std::string_view word :
        { "step", "iteration", "iter", "train_step", "train step", "training_step", "training step" }) {
        if (!startsWithNoCase(name, word)) continue;
        std::string_view rest = name.substr(word.size());
        if (rest.empty()) return { true, {} };
        if (rest.front() == '#') return { true, rest.substr(1) };
        const size_t digits = rest.find_first_not_of(" _-:[");
        if (digits == 0 || digits == std::string_view::npos || !isDigit(rest[digits])) continue;
        rest.remove_prefix(digits);
        return { true, rest.substr(0, std::find_if_not(rest.begin(), rest.end(), isDigit) - rest.begin()) };
    }
    return {};
}

// Steps from annotations that `match`; nested matches (a step inside a step) keep the outer one.
template <class Match> std::vector<Step> stepsFromRanges(const TraceModel& model, Match match) {
    std::vector<Step> steps;
    const auto& a = model.annotations;
    for (size_t i = 0; i < a.size(); ++i) {
        const RangeMatch m = match(model.str(a.name[i]));
        if (!m.matches || a.endNs[i] <= a.startNs[i]) continue;
        if (!steps.empty() && a.startNs[i] < steps.back().endNs)
            continue; // nested in (or overlapping) the previous step
        Step step;
        step.number = int64_t(steps.size());
        // "NAME#12": 12; a suffix that is not a number, or too long for one, keeps the index.
        int64_t number = 0;
        const std::string_view digits = m.number;
        const auto [end, error] = std::from_chars(digits.data(), digits.data() + digits.size(), number);
        if (!digits.empty() && error == std::errc() && end == digits.data() + digits.size() && digits.front() != '-')
            step.number = number;
        step.startNs = a.startNs[i];
        step.endNs = a.endNs[i];
        step.annotation = RowIndex(i);
        steps.push_back(step);
    }
    return steps;
}

std::vector<Step> stepsFromRanges(const TraceModel& model, std::string_view wanted) {
    return stepsFromRanges(model, [wanted](std::string_view name) { return namedRange(name, wanted); });
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
        result.steps = stepsFromRanges(model, userRange);
        if (result.steps.empty()) result.detail = "no range named \"" + std::string(userRange) + "\" in the trace";
        return result;
    }
    using Finder = std::function<std::vector<Step>()>;
    auto named
        = [&model](std::string_view name) -> Finder { return [&model, name] { return stepsFromRanges(model, name); }; };
    auto between = [&model](std::string_view prefix) -> Finder {
        return [&model, prefix] { return stepsBetween(model, prefix); };
    };
    const struct Candidate {
        StepSource source;
        std::string_view detail;
        Finder find;
    } candidates[] = {
        { StepSource::ProfilerStep, "ProfilerStep", named("ProfilerStep") },
        { StepSource::BootstrapRange, "tuneup.step", named("tuneup.step") },
        { StepSource::StepRange, "", [&model] { return stepsFromRanges(model, iterationRange); } },
        { StepSource::FrameworkRanges, "PyTorch Lightning's [pl][profile]run_training_batch",
            named("[pl][profile]run_training_batch") },
        { StepSource::OptimizerRanges, "Optimizer.zero_grad", between("Optimizer.zero_grad") },
        { StepSource::OptimizerRanges, "Optimizer.step", between("Optimizer.step") },
        // Ranges frameworks open once per iteration, from each to the next.
        { StepSource::FrameworkMarks, "FSDP2's FSDP::root_pre_forward, once per iteration",
            between("FSDP::root_pre_forward") },
        { StepSource::FrameworkMarks, "DeepSpeed ZeRO-3's optimizer step, once per iteration",
            between("DeepSpeedZeroOptimizer_Stage3.step") },
        { StepSource::FrameworkMarks,
            "DeepSpeedEngine.forward: with gradient accumulation each step is one micro-batch",
            between("DeepSpeedEngine.forward") },
        { StepSource::KernelPattern, "", [&model] { return stepsFromKernelPattern(model); } },
    };
    for (const Candidate& c : candidates) {
        result.steps = c.find();
        if (result.steps.empty()) continue;
        result.source = c.source;
        // Iteration ranges are named in many ways: say which name was found.
        const RowIndex first = result.steps.front().annotation;
        result.detail = c.detail.empty() && first != kNoRow
            ? std::string(model.str(model.annotations.name[size_t(first)]))
            : std::string(c.detail);
        return result;
    }
    result.detail = "no step ranges (ProfilerStep#N, tuneup.step, step, iteration N), no optimizer or framework "
                    "ranges and no repeating kernel pattern; name the step range with --step-range";
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
