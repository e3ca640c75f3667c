#include "report/measured_gain.h"

#include <cmath>
#include <cstdio>

namespace tuneup::analysis {

namespace {

std::string times(double x) {
    char text[32];
    snprintf(text, sizeof text, x >= 10 ? "%.1fx" : "%.2fx", x);
    return text;
}

} // namespace

const BenchCandidate* measuredFor(const ReportContext& context, const Finding& f) {
    return context.bench ? context.bench->forFinding(f.ruleId) : nullptr;
}

std::string measuredGainText(const ReportContext& context, const Finding& f) {
    const BenchCandidate* c = measuredFor(context, f);
    if (!c) return "";
    std::string text;
    switch (c->verdict) {
    case BenchVerdict::Faster:
    case BenchVerdict::Slower:
    case BenchVerdict::Same:
    case BenchVerdict::Inconclusive:
        if (!c->speedup) return "";
        text = times(*c->speedup) + " " + std::string(benchVerdictName(c->verdict));
        if (c->verdict == BenchVerdict::Inconclusive) text = times(*c->speedup) + ", inconclusive";
        if (c->speedupCi) text += " (95% CI " + times(c->speedupCi->first) + "-" + times(c->speedupCi->second);
        if (c->pValue) {
            char p[32];
            snprintf(p, sizeof p, *c->pValue < 0.001 ? ", p < 0.001" : ", p = %.2g", *c->pValue);
            text += p;
        }
        text += c->speedupCi ? ")" : "";
        break;
    case BenchVerdict::Failed:
        text = "the fix's runs failed";
        break;
    case BenchVerdict::NotApplied:
        text = "the fix did not apply";
        break;
    }
    text += " with " + c->name + ", measured by tuneup bench";
    if (c->estimatedSpeedup) text += "; estimated " + times(*c->estimatedSpeedup);
    return text;
}

} // namespace tuneup::analysis
