// `tuneup compare --format csv`: every delta as a row, for a spreadsheet or a dashboard.
// Columns: section, name, class, unit, base, new, delta, ratio, verdict. Empty cells: not measured.

#include "compare/compare_report.h"
#include "utf8.h"

#include <cmath>
#include <cstdio>

namespace tuneup::analysis {

namespace {

// RFC 4180: a field with a comma, quote or line break is quoted, its quotes doubled.
std::string field(std::string_view raw) {
    std::string s = validUtf8(raw);
    if (s.find_first_of(",\"\n\r") == std::string::npos) return s;
    std::string out = "\"";
    for (char c : s)
        out += c == '"' ? std::string("\"\"") : std::string(1, c);
    return out + "\"";
}

std::string num(double v) {
    if (!std::isfinite(v)) return {};
    char buffer[40];
    snprintf(buffer, sizeof buffer, "%.6g", v);
    return buffer;
}

void row(std::ostream& out, std::string_view section, std::string_view name, std::string_view cls,
    std::string_view unit, std::optional<double> base, std::optional<double> now, std::string_view verdict) {
    std::string ratio, delta;
    if (base && now) {
        delta = num(*now - *base);
        if (*base > 0) ratio = num(*now / *base);
    }
    out << field(section) << "," << field(name) << "," << field(cls) << "," << unit << "," << (base ? num(*base) : "")
        << "," << (now ? num(*now) : "") << "," << delta << "," << ratio << "," << field(verdict) << "\n";
}

} // namespace

void writeCompareCsv(std::ostream& out, const CompareResult& r, const CompareReportContext&) {
    out << "section,name,class,unit,base,new,delta,ratio,verdict\n";
    const StepTimeComparison& s = r.stepTime;
    const auto measured = [](double v) { return v > 0 ? std::optional<double>(v) : std::nullopt; };
    row(out, "step_time", "median step", "", "ms", measured(s.baseMs), measured(s.newMs), verdictName(r.verdict));
    if (r.breakdownRecorded)
        for (const BreakdownDelta& b : r.breakdown)
            row(out, "breakdown", b.key, "", "ms/step", double(b.baseNs) / 1e6, double(b.newNs) / 1e6,
                partRegressed(r, b.baseNs, b.newNs) ? "grew" : "");
    for (const KernelClassDelta& c : r.kernelClasses)
        row(out, "kernel_class", kernelClassName(c.kernelClass), "", "us/step", double(c.baseNs) / 1e3,
            double(c.newNs) / 1e3, "");
    for (const KernelDelta& k : r.kernels) {
        const std::string_view cls = kernelClassName(k.kernelClass), change = kernelChangeName(k.change);
        row(out, "kernel_per_call", k.name, cls, "us/call", k.baseCalls ? std::optional(k.basePerCallUs) : std::nullopt,
            k.newCalls ? std::optional(k.newPerCallUs) : std::nullopt, change);
        row(out, "kernel_per_step", k.name, cls, "us/step", k.basePerStepUs, k.newPerStepUs, change);
        row(out, "kernel_calls", k.name, cls, "calls/step", k.baseCallsPerStep, k.newCallsPerStep, "");
    }
    for (const FindingRef& f : r.appeared)
        row(out, "finding", f.ruleId, "", "", std::nullopt, std::nullopt, "appeared");
    for (const FindingRef& f : r.resolved)
        row(out, "finding", f.ruleId, "", "", std::nullopt, std::nullopt, "resolved");
    for (const EnvironmentChange& c : r.environment.changed)
        row(out, "environment", c.key + ": " + c.base + " -> " + c.now, "", "", std::nullopt, std::nullopt, "changed");
}

} // namespace tuneup::analysis
