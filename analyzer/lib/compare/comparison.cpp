#include "compare/comparison.h"

#include "advise/setting_text.h"
#include "report/report_helpers.h"
#include "stats/mann_whitney.h"
#include "units.h"

#include <algorithm>
#include <cmath>
#include <map>

namespace tuneup::analysis {

std::string_view verdictName(Verdict v) {
    switch (v) {
    case Verdict::Regressed:
        return "regressed";
    case Verdict::Improved:
        return "improved";
    case Verdict::Same:
        return "same";
    case Verdict::Inconclusive:
        return "inconclusive";
    case Verdict::Incomparable:
        return "incomparable";
    }
    return "inconclusive";
}

std::string_view kernelChangeName(KernelChange c) {
    switch (c) {
    case KernelChange::Slower:
        return "slower";
    case KernelChange::Faster:
        return "faster";
    case KernelChange::Same:
        return "same";
    case KernelChange::Added:
        return "added";
    case KernelChange::Removed:
        return "removed";
    }
    return "same";
}

std::optional<double> blockNoise(const std::vector<double>& stepMs) {
    if (stepMs.size() < 2 * kMinSteps) return std::nullopt;
    const size_t blocks = std::min<size_t>(4, stepMs.size() / kMinSteps);
    stats::Runs runs(blocks);
    for (size_t i = 0; i < stepMs.size(); ++i)
        runs[std::min(blocks - 1, i * blocks / stepMs.size())].push_back(stepMs[i]);
    return stats::runToRunNoise({ &runs });
}

namespace {

std::string signedDuration(int64_t ns) {
    return (ns < 0 ? "-" : "+") + formatDuration(ns < 0 ? -ns : ns);
}

void compareStepTimes(const RunProfile& base, const RunProfile& now, const CompareOptions& options, CompareResult& r) {
    StepTimeComparison& s = r.stepTime;
    s.baseSteps = base.stepMs.size();
    s.newSteps = now.stepMs.size();
    s.confidence = options.bootstrap.confidence;
    const std::optional<double> baseNoise = blockNoise(base.stepMs), newNoise = blockNoise(now.stepMs);
    if (baseNoise || newNoise) s.noise = std::max(baseNoise.value_or(0), newNoise.value_or(0));
    stats::ComparisonOptions c;
    c.bootstrap = options.bootstrap;
    if (options.maxRegression) {
        c.minThreshold = *options.maxRegression;
        s.thresholdFrom = "--max-regression";
    } else {
        c.minThreshold = std::max(0.02, s.noise.value_or(0));
        s.thresholdFrom = s.noise && *s.noise > 0.02 ? "run noise" : "2% floor";
    }
    s.threshold = c.minThreshold;
    if (s.baseSteps == 0 || s.newSteps == 0) {
        s.why = std::string("no measured steps in ") + (s.baseSteps == 0 ? "BASE" : "NEW");
        r.stepVerdict = Verdict::Inconclusive;
        return;
    }
    // A side of several runs (a history's last runs) is resampled run by run, and their spread is noise.
    const stats::Comparison cmp
        = stats::compareRuns({ now.stepMs }, base.runs.size() > 1 ? base.runs : stats::Runs { base.stepMs }, c);
    if (cmp.threshold > s.threshold) {
        s.threshold = cmp.threshold;
        s.noise = std::max(s.noise.value_or(0), cmp.noise.value_or(0));
        s.thresholdFrom = "run-to-run noise of BASE's runs";
    }
    s.baseMs = cmp.denominator.median;
    s.newMs = cmp.numerator.median;
    s.pValue = cmp.test.pValue;
    if (cmp.ratio.valid) {
        s.ratio = cmp.ratio.ratio;
        s.low = cmp.ratio.low;
        s.high = cmp.ratio.high;
    }
    if (std::min(s.baseSteps, s.newSteps) < kMinSteps) {
        r.stepVerdict = Verdict::Inconclusive;
        s.why = "fewer than " + std::to_string(kMinSteps) + " measured steps on a side: no interval can be trusted";
        return;
    }
    if (base.stepMs == now.stepMs) {
        // The same measurements on both sides (a run against itself): no change, whatever the interval's
        // width — resampling one sample twice is not two runs.
        r.stepVerdict = Verdict::Same;
        s.identical = true;
        return;
    }
    switch (cmp.change) {
    case stats::Change::Higher:
        r.stepVerdict = Verdict::Regressed;
        break;
    case stats::Change::Lower:
        r.stepVerdict = Verdict::Improved;
        break;
    case stats::Change::Same:
        r.stepVerdict = Verdict::Same;
        break;
    case stats::Change::Inconclusive:
        r.stepVerdict = Verdict::Inconclusive;
        s.why = std::string(cmp.why);
        if (cmp.ratio.valid)
            s.stepsToDecide
                = stats::samplesToDecide(s.ratio, s.low, s.high, s.threshold, std::min(s.baseSteps, s.newSteps));
        break;
    }
}

void compareBreakdowns(const RunProfile& base, const RunProfile& now, CompareResult& r) {
    r.breakdownRecorded = base.hasGpuWork || now.hasGpuWork;
    for (const BreakdownPart& part : kBreakdownParts)
        r.breakdown.push_back(
            { std::string(part.key), std::string(part.label), base.perStep.*part.field, now.perStep.*part.field });
}

void compareKernels(const RunProfile& base, const RunProfile& now, double threshold, CompareResult& r) {
    r.kernelsWholeTrace = base.kernelsWholeTrace || now.kernelsWholeTrace;
    std::map<std::string, std::pair<const KernelStat*, const KernelStat*>> byName;
    for (const KernelStat& k : base.kernels)
        byName[k.name].first = &k;
    for (const KernelStat& k : now.kernels)
        byName[k.name].second = &k;
    r.kernelNames = byName.size();
    const auto perStep = [](int64_t v, size_t steps) { return steps ? double(v) / double(steps) : 0.0; };

    std::map<KernelClass, KernelClassDelta> classes;
    std::vector<KernelDelta> all;
    for (const auto& [name, sides] : byName) {
        const auto [b, n] = sides;
        KernelDelta d;
        d.name = name;
        d.kernelClass = (b ? b : n)->kernelClass;
        d.baseCalls = b ? b->calls : 0;
        d.newCalls = n ? n->calls : 0;
        d.basePerCallUs = d.baseCalls ? double(b->totalNs) / 1e3 / double(d.baseCalls) : 0;
        d.newPerCallUs = d.newCalls ? double(n->totalNs) / 1e3 / double(d.newCalls) : 0;
        d.basePerStepUs = b ? perStep(b->totalNs, base.kernelSteps) / 1e3 : 0;
        d.newPerStepUs = n ? perStep(n->totalNs, now.kernelSteps) / 1e3 : 0;
        d.baseCallsPerStep = perStep(d.baseCalls, base.kernelSteps);
        d.newCallsPerStep = perStep(d.newCalls, now.kernelSteps);
        KernelClassDelta& c = classes[d.kernelClass];
        c.kernelClass = d.kernelClass;
        c.baseNs += int64_t(std::llround(d.basePerStepUs * 1e3));
        c.newNs += int64_t(std::llround(d.newPerStepUs * 1e3));
        c.baseCalls += d.baseCallsPerStep;
        c.newCalls += d.newCallsPerStep;
        if (!d.baseCalls)
            d.change = KernelChange::Added;
        else if (!d.newCalls)
            d.change = KernelChange::Removed;
        else {
            d.perCallRatio = d.newPerCallUs / d.basePerCallUs;
            // Per call, so that a window holding fewer layers is not read as a faster kernel; a change must
            // clear the step verdict's band and, where every call was read, the rank test.
            bool significant = true;
            if (!b->callUs.empty() && !n->callUs.empty()) {
                d.pValue = stats::mannWhitney(n->callUs, b->callUs).pValue;
                significant = *d.pValue < 0.05;
            }
            if (*d.perCallRatio > 1 + threshold && significant)
                d.change = KernelChange::Slower;
            else if (*d.perCallRatio < 1 / (1 + threshold) && significant)
                d.change = KernelChange::Faster;
        }
        all.push_back(std::move(d));
    }
    const auto moved = [](const KernelDelta& d) { return std::abs(d.newPerStepUs - d.basePerStepUs); };
    std::stable_sort(
        all.begin(), all.end(), [&](const KernelDelta& a, const KernelDelta& b) { return moved(a) > moved(b); });
    if (all.size() > kMaxKernelDeltas) all.resize(kMaxKernelDeltas);
    r.kernels = std::move(all);
    for (auto& [cls, delta] : classes)
        r.kernelClasses.push_back(delta);
    std::stable_sort(r.kernelClasses.begin(), r.kernelClasses.end(),
        [](const auto& a, const auto& b) { return std::llabs(a.newNs - a.baseNs) > std::llabs(b.newNs - b.baseNs); });
}

void compareFindings(const RunProfile& base, const RunProfile& now, CompareResult& r) {
    const auto in = [](const std::vector<FindingRef>& list, const std::string& rule) {
        return std::any_of(list.begin(), list.end(), [&](const FindingRef& f) { return f.ruleId == rule; });
    };
    for (const FindingRef& f : now.findings)
        (in(base.findings, f.ruleId) ? r.persisting : r.appeared).push_back(f);
    for (const FindingRef& f : base.findings)
        if (!in(now.findings, f.ruleId)) r.resolved.push_back(f);
}

void compareSettings(const RunProfile& base, const RunProfile& now, CompareResult& r) {
    std::vector<std::string> keys;
    for (const auto& [k, v] : base.settings)
        keys.push_back(k);
    for (const auto& [k, v] : now.settings)
        if (std::find(keys.begin(), keys.end(), k) == keys.end()) keys.push_back(k);
    const auto value = [](const RunProfile& p, const std::string& key) {
        for (const auto& [k, v] : p.settings)
            if (k == key) return v;
        return std::string();
    };
    for (const std::string& key : keys)
        if (const std::string a = value(base, key), b = value(now, key); a != b) r.settings.push_back({ key, a, b });
}

// In words, what moved the step time in the direction of the verdict, largest first.
void nameCauses(CompareResult& r) {
    const bool slower = r.stepVerdict == Verdict::Regressed;
    const bool faster = r.stepVerdict == Verdict::Improved;
    if (!slower && !faster) return;
    const int64_t stepDeltaNs = int64_t(std::llround((r.stepTime.newMs - r.stepTime.baseMs) * 1e6));
    // Parts and classes that moved by at least a tenth of the step time's change, the same way.
    const auto counts = [&](int64_t delta) {
        return (slower ? delta > 0 : delta < 0) && std::llabs(delta) * 10 >= std::llabs(stepDeltaNs);
    };
    const std::vector<FindingRef>& findings = faster ? r.resolved : r.appeared;
    for (const FindingRef& f : findings)
        r.causes.push_back(f.ruleId + (faster ? " resolved" : " appeared") + " (" + f.title + ")");
    if (r.breakdownRecorded) {
        std::vector<const BreakdownDelta*> parts;
        for (const BreakdownDelta& b : r.breakdown)
            if (counts(b.newNs - b.baseNs)) parts.push_back(&b);
        std::sort(parts.begin(), parts.end(), [](const auto* a, const auto* b) {
            return std::llabs(a->newNs - a->baseNs) > std::llabs(b->newNs - b->baseNs);
        });
        for (const BreakdownDelta* b : parts)
            r.causes.push_back(b->label + " " + signedDuration(b->newNs - b->baseNs) + " per step ("
                + formatDuration(b->baseNs) + " -> " + formatDuration(b->newNs) + ")");
        for (const KernelClassDelta& c : r.kernelClasses)
            if (counts(c.newNs - c.baseNs))
                r.causes.push_back(std::string(kernelClassName(c.kernelClass)) + " kernels "
                    + signedDuration(c.newNs - c.baseNs) + " per step");
    }
    for (const SettingChange& s : r.settings) {
        const SettingText base = readableSetting(s.key, s.base), now = readableSetting(s.key, s.now);
        r.causes.push_back("setting " + base.name + " changed: " + (s.base.empty() ? "(not recorded)" : base.value)
            + " -> " + (s.now.empty() ? "(not recorded)" : now.value));
    }
}

void addNotes(const RunProfile& base, const RunProfile& now, CompareResult& r) {
    for (const auto& [side, p] : { std::pair { "BASE", &base }, std::pair { "NEW", &now } }) {
        const size_t n = p->stepMs.size();
        if (n < kFewSteps)
            r.notes.push_back(std::string(side) + " has only " + std::to_string(n) + " measured step"
                + (n == 1 ? "" : "s") + ": a verdict on so few steps is weak; record at least 20 steps");
        if (p->warmupSteps)
            r.notes.push_back(std::string(side) + ": the first " + std::to_string(p->warmupSteps)
                + " step(s) were left out as warm-up (slower than every later step)");
        for (const std::string& note : p->notes)
            r.notes.push_back(std::string(side) + ": " + note);
    }
    if (!base.stepSource.empty() && !now.stepSource.empty() && base.stepSource != now.stepSource)
        r.notes.push_back("the sides found their steps differently (BASE: " + base.stepSource
            + "; NEW: " + now.stepSource + "): step times may not cover the same work");
    if (base.ranks != now.ranks)
        r.notes.push_back("BASE has " + std::to_string(base.ranks) + " rank(s), NEW " + std::to_string(now.ranks)
            + ": step times are the slowest rank's, kernels per step per rank");
    for (const EnvironmentChange& c : r.environment.oneSided)
        r.notes.push_back(std::string(environmentLabel(c.key)) + " is recorded on one side only ("
            + (c.base.empty() ? "NEW: " + c.now : "BASE: " + c.base) + "): not compared");
}

} // namespace

CompareResult compareProfiles(const RunProfile& base, const RunProfile& now, const CompareOptions& options) {
    CompareResult r;
    r.base = &base;
    r.now = &now;
    r.baseEnvironment = base.environment;
    r.newEnvironment = now.environment;
    r.environment = diffEnvironments(base.environment, now.environment);
    compareStepTimes(base, now, options, r);
    compareBreakdowns(base, now, r);
    compareKernels(base, now, r.stepTime.threshold, r);
    compareFindings(base, now, r);
    compareSettings(base, now, r);
    nameCauses(r);
    addNotes(base, now, r);
    r.verdict = !r.environment.changed.empty() && !options.allowEnvChange ? Verdict::Incomparable : r.stepVerdict;
    return r;
}

} // namespace tuneup::analysis
