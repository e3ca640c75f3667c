// `tuneup compare`'s terminal report: the verdict first, then where the time moved.

#include "advise/setting_text.h"
#include "compare/compare_report.h"
#include "report/report_helpers.h"
#include "units.h"

#include <cmath>
#include <cstdio>

namespace tuneup::analysis {

namespace {

constexpr size_t kKernelsShown = 10;

std::string signedDuration(int64_t ns) {
    return (ns < 0 ? "-" : "+") + formatDuration(ns < 0 ? -ns : ns);
}

std::string us(double v) {
    return formatDuration(int64_t(std::llround(v * 1e3)));
}

std::string padded(std::string s, size_t width) {
    // Column widths in characters; kernel names may hold multi-byte "…".
    size_t chars = 0;
    for (unsigned char c : s)
        chars += (c & 0xC0) != 0x80;
    if (chars < width) s.append(width - chars, ' ');
    return s;
}

const char* colorOf(Verdict v) {
    switch (v) {
    case Verdict::Regressed:
    case Verdict::Incomparable:
        return "\033[1;31m";
    case Verdict::Improved:
        return "\033[1;32m";
    default:
        return "\033[1;33m";
    }
}

void sideLine(std::ostream& out, const char* name, const RunProfile& p) {
    out << "  " << name << " " << sideLabel(p) << ": " << p.stepMs.size() << " steps measured";
    if (p.warmupSteps) out << " (" << p.warmupSteps << " warm-up left out)";
    if (!p.stepSource.empty()) out << ", " << p.stepSource;
    if (p.ranks > 1) out << ", " << p.ranks << " ranks";
    out << "\n";
}

} // namespace

void writeCompareText(std::ostream& out, const CompareResult& r, const CompareReportContext& context) {
    const std::string verdict(verdictName(r.verdict));
    out << "tuneup compare: " << (context.color ? colorOf(r.verdict) : "") << verdict
        << (context.color ? "\033[0m" : "") << ": " << stepTimeHeadline(r) << "\n";
    out << "  " << verdictSentence(r) << "\n";
    sideLine(out, "BASE", *r.base);
    sideLine(out, "NEW ", *r.now);
    if (!r.causes.empty()) {
        out << "  why:\n";
        for (const std::string& c : r.causes)
            out << "    - " << c << "\n";
    }

    if (r.breakdownRecorded) {
        out << "\nWhere a step's time goes (mean per measured step)\n";
        out << "  " << padded("", 32) << padded("BASE", 12) << padded("NEW", 12) << "delta\n";
        for (const BreakdownDelta& b : r.breakdown) {
            if (b.baseNs == 0 && b.newNs == 0) continue;
            out << "  " << padded(b.label, 32) << padded(formatDuration(b.baseNs), 12)
                << padded(formatDuration(b.newNs), 12) << signedDuration(b.newNs - b.baseNs) << "\n";
        }
    } else {
        out << "\nNo GPU work on either side: no breakdown of the steps (it needs kernels).\n";
    }

    if (!r.kernelClasses.empty()) {
        out << "\nKernels by class (time per step)\n";
        for (const KernelClassDelta& c : r.kernelClasses)
            out << "  " << padded(std::string(kernelClassName(c.kernelClass)), 16)
                << padded(formatDuration(c.baseNs), 12) << padded(formatDuration(c.newNs), 12)
                << signedDuration(c.newNs - c.baseNs) << "\n";
        out << "\nTop movers (per step; per call: BASE -> NEW)"
            << (r.kernelsWholeTrace ? ", from the traces' top kernels" : "") << "\n";
        for (size_t i = 0; i < r.kernels.size() && i < kKernelsShown; ++i) {
            const KernelDelta& k = r.kernels[i];
            const int64_t delta = int64_t(std::llround((k.newPerStepUs - k.basePerStepUs) * 1e3));
            out << "  " << padded(signedDuration(delta), 10) << padded(std::string(kernelChangeName(k.change)), 8)
                << shortKernelName(k.name, 70) << "\n      per call " << us(k.basePerCallUs) << " -> "
                << us(k.newPerCallUs);
            if (k.perCallRatio) out << " (" << ratioText(*k.perCallRatio) << ")";
            char calls[96];
            snprintf(calls, sizeof calls, "; calls per step %.1f -> %.1f", k.baseCallsPerStep, k.newCallsPerStep);
            out << calls << "\n";
        }
        if (r.kernelNames > kKernelsShown)
            out << "  ... " << r.kernelNames - kKernelsShown
                << " more kernel names (--format json or csv: all movers)\n";
    }

    out << "\nFindings\n";
    if (r.appeared.empty() && r.resolved.empty()) out << "  none appeared or resolved\n";
    for (const FindingRef& f : r.appeared)
        out << "  appeared  " << f.ruleId << ": " << f.title << "\n";
    for (const FindingRef& f : r.resolved)
        out << "  resolved  " << f.ruleId << ": " << f.title << "\n";
    for (const FindingRef& f : r.persisting)
        out << "  still     " << f.ruleId << "\n";

    if (!r.settings.empty()) {
        out << "\nSettings the program changed\n";
        for (const SettingChange& s : r.settings) {
            const SettingText base = readableSetting(s.key, s.base), now = readableSetting(s.key, s.now);
            out << "  " << base.name << ": " << (s.base.empty() ? "-" : base.value) << " -> "
                << (s.now.empty() ? "-" : now.value) << "\n";
        }
    }

    out << "\nEnvironment\n";
    if (r.baseEnvironment.empty() && r.newEnvironment.empty())
        out << "  nothing recorded (GPU model, driver, CUDA, world size): not compared\n";
    for (const EnvironmentKey& k : kEnvironmentKeys) {
        const std::string a = environmentValue(r.baseEnvironment, k.key), b = environmentValue(r.newEnvironment, k.key);
        if (a.empty() && b.empty()) continue;
        out << "  " << padded(std::string(k.label), 18) << (a.empty() ? "(not recorded)" : a);
        if (a != b)
            out << "  ->  " << (b.empty() ? "(not recorded)" : b) << (a.empty() || b.empty() ? "" : "  CHANGED");
        out << "\n";
    }

    if (!r.notes.empty()) {
        out << "\nNotes\n";
        for (const std::string& n : r.notes)
            out << "  - " << n << "\n";
    }
}

} // namespace tuneup::analysis
