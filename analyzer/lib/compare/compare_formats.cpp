#include "compare/compare_report.h"
#include "units.h"

#include <cmath>
#include <cstdio>

namespace tuneup::analysis {

const std::vector<CompareFormat>& compareFormats() {
    static const std::vector<CompareFormat> kFormats {
        { "text", writeCompareText, true },
        { "json", writeCompareJson },
        { "markdown", writeCompareMarkdown },
        { "junit", writeCompareJunit },
        { "csv", writeCompareCsv },
    };
    return kFormats;
}

const CompareFormat* findCompareFormat(std::string_view name) {
    if (name == "md") name = "markdown";
    for (const CompareFormat& f : compareFormats())
        if (f.name == name) return &f;
    return nullptr;
}

std::string compareFormatNames() {
    std::string names;
    for (const CompareFormat& f : compareFormats())
        names += (names.empty() ? "" : ", ") + std::string(f.name);
    return names;
}

std::string ratioText(double ratio) {
    if (!(ratio > 0) || !std::isfinite(ratio)) return "n/a";
    char buffer[32];
    snprintf(buffer, sizeof buffer, ratio < 10 ? "%.3fx" : "%.1fx", ratio);
    return buffer;
}

std::string ratioIntervalText(const StepTimeComparison& s) {
    if (!(s.low > 0)) return "n/a";
    return ratioText(s.low) + "-" + ratioText(s.high);
}

namespace {
std::string ms(double v) {
    return formatDuration(int64_t(std::llround(v * 1e6)));
}
} // namespace

std::string stepTimeHeadline(const CompareResult& r) {
    const StepTimeComparison& s = r.stepTime;
    if (!(s.ratio > 0)) return "step time not measured";
    return ms(s.baseMs) + " -> " + ms(s.newMs) + " per step (median; " + ratioText(s.ratio) + ", "
        + formatPercent(s.confidence) + " CI " + ratioIntervalText(s) + ")";
}

std::string verdictSentence(const CompareResult& r) {
    const StepTimeComparison& s = r.stepTime;
    const std::string band = "the threshold " + formatPercent(s.threshold) + " (" + s.thresholdFrom + ")";
    switch (r.verdict) {
    case Verdict::Regressed:
        return "NEW is slower: the whole interval lies beyond " + band;
    case Verdict::Improved:
        return "NEW is faster: the whole interval lies beyond " + band;
    case Verdict::Same:
        if (s.identical) return "BASE and NEW hold the very same step times (a run against itself): the same";
        return "no change beyond " + band + ": the whole interval lies inside it";
    case Verdict::Inconclusive: {
        std::string out = "cannot tell yet: " + (s.why.empty() ? std::string("the interval straddles ") + band : s.why);
        if (s.why.find("threshold") != std::string::npos) out += " (" + band + ")";
        if (s.stepsToDecide)
            out += "; about " + std::to_string(*s.stepsToDecide) + " measured steps per run would decide";
        else if (s.ratio > 0 && s.why.find("fewer than") == std::string::npos)
            out += "; the change is about as large as the threshold: more steps would hardly decide";
        return out;
    }
    case Verdict::Incomparable: {
        std::string out = "the runs are not comparable: ";
        for (size_t i = 0; i < r.environment.changed.size(); ++i) {
            const EnvironmentChange& c = r.environment.changed[i];
            out += (i ? "; " : "") + std::string(environmentLabel(c.key)) + " " + c.base + " -> " + c.now;
        }
        return out + " (--allow-env-change compares them anyway: the step time alone says "
            + std::string(verdictName(r.stepVerdict)) + ")";
    }
    }
    return {};
}

std::string sideLabel(const RunProfile& p) {
    std::string out;
    for (const std::string& input : p.inputs)
        out += (out.empty() ? "" : " ") + input;
    return out;
}

bool partRegressed(const CompareResult& r, int64_t baseNs, int64_t newNs) {
    if (r.stepVerdict != Verdict::Regressed) return false;
    const double stepDeltaNs = (r.stepTime.newMs - r.stepTime.baseMs) * 1e6;
    return newNs > baseNs && double(newNs - baseNs) * 10 >= std::abs(stepDeltaNs);
}

} // namespace tuneup::analysis
