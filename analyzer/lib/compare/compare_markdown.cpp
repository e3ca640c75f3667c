// `tuneup compare --format markdown`: a GitHub job summary or pull-request comment. Small whatever the
// traces: a bounded number of rows per table and bounded text per cell (under 1 MiB; tested).

#include "advise/setting_text.h"
#include "compare/compare_report.h"
#include "report/report_helpers.h"
#include "units.h"
#include "utf8.h"

#include <cmath>
#include <cstdio>

namespace tuneup::analysis {

namespace {

constexpr size_t kKernelRows = 15;
constexpr size_t kListItems = 20; // causes, findings, settings, notes: each
constexpr size_t kCellChars = 300;

// One line of inline text: Markdown punctuation escaped, HTML-significant characters as entities
// (GitHub renders raw HTML, so a kernel's "<float>" would vanish), cut to kCellChars.
std::string md(std::string_view raw) {
    std::string s = validUtf8(raw);
    if (s.size() > kCellChars) {
        size_t cut = kCellChars;
        while (cut > 0 && (static_cast<unsigned char>(s[cut]) & 0xC0) == 0x80)
            --cut;
        s = s.substr(0, cut) + "…";
    }
    return markdownText(s);
}

std::string signedDuration(int64_t ns) {
    return (ns < 0 ? "−" : "+") + formatDuration(ns < 0 ? -ns : ns);
}

std::string us(double v) {
    return formatDuration(int64_t(std::llround(v * 1e3)));
}

template <typename List, typename Write> void bounded(std::ostream& out, const List& list, Write write) {
    for (size_t i = 0; i < list.size() && i < kListItems; ++i)
        write(list[i]);
    if (list.size() > kListItems) out << "- … " << list.size() - kListItems << " more (see the JSON report)\n";
}

} // namespace

void writeCompareMarkdown(std::ostream& out, const CompareResult& r, const CompareReportContext&) {
    out << "## tuneup compare: **" << verdictName(r.verdict) << "**\n\n";
    out << md(stepTimeHeadline(r)) << "  \n" << md(verdictSentence(r)) << "\n\n";
    out << "| | BASE | NEW |\n|---|---|---|\n";
    out << "| run | " << md(sideLabel(*r.base)) << " | " << md(sideLabel(*r.now)) << " |\n";
    out << "| steps measured | " << r.base->stepMs.size() << " | " << r.now->stepMs.size() << " |\n";
    out << "| median step | " << formatDuration(int64_t(std::llround(r.stepTime.baseMs * 1e6))) << " | "
        << formatDuration(int64_t(std::llround(r.stepTime.newMs * 1e6))) << " |\n\n";

    if (!r.causes.empty()) {
        out << "**Why**\n\n";
        bounded(out, r.causes, [&](const std::string& c) { out << "- " << md(c) << "\n"; });
        out << "\n";
    }

    if (r.breakdownRecorded) {
        out << "### Where a step's time goes (mean per measured step)\n\n| part | BASE | NEW | delta "
               "|\n|---|---:|---:|---:|\n";
        for (const BreakdownDelta& b : r.breakdown)
            if (b.baseNs || b.newNs)
                out << "| " << md(b.label) << " | " << formatDuration(b.baseNs) << " | " << formatDuration(b.newNs)
                    << " | " << signedDuration(b.newNs - b.baseNs) << " |\n";
        out << "\n";
    }

    if (!r.kernels.empty()) {
        out << "### Kernels: top movers per step\n\n"
               "| kernel | class | per step BASE → NEW | per call BASE → NEW | calls per step | verdict |\n"
               "|---|---|---:|---:|---:|---|\n";
        for (size_t i = 0; i < r.kernels.size() && i < kKernelRows; ++i) {
            const KernelDelta& k = r.kernels[i];
            char calls[64];
            snprintf(calls, sizeof calls, "%.1f → %.1f", k.baseCallsPerStep, k.newCallsPerStep);
            out << "| " << md(shortKernelName(k.name, 80)) << " | " << kernelClassName(k.kernelClass) << " | "
                << us(k.basePerStepUs) << " → " << us(k.newPerStepUs) << " | " << us(k.basePerCallUs) << " → "
                << us(k.newPerCallUs) << " | " << calls << " | " << kernelChangeName(k.change) << " |\n";
        }
        if (r.kernelNames > kKernelRows)
            out << "\n" << r.kernelNames - kKernelRows << " more kernel names: see the JSON or CSV report.\n";
        out << "\n";
    }

    out << "### Findings\n\n";
    if (r.appeared.empty() && r.resolved.empty()) out << "None appeared or resolved.\n";
    bounded(out, r.appeared,
        [&](const FindingRef& f) { out << "- appeared: `" << md(f.ruleId) << "` " << md(f.title) << "\n"; });
    bounded(out, r.resolved,
        [&](const FindingRef& f) { out << "- resolved: `" << md(f.ruleId) << "` " << md(f.title) << "\n"; });
    out << "\n";

    if (!r.settings.empty()) {
        out << "### Settings the program changed\n\n";
        bounded(out, r.settings, [&](const SettingChange& s) {
            const SettingText base = readableSetting(s.key, s.base), now = readableSetting(s.key, s.now);
            out << "- " << md(base.name) << ": " << md(s.base.empty() ? "-" : base.value) << " → "
                << md(s.now.empty() ? "-" : now.value) << "\n";
        });
        out << "\n";
    }

    out << "### Environment\n\n";
    if (r.baseEnvironment.empty() && r.newEnvironment.empty())
        out << "Nothing recorded (GPU model, driver, CUDA, world size): not compared.\n\n";
    else
        out << "| | BASE | NEW |\n|---|---|---|\n";
    for (const EnvironmentKey& k : kEnvironmentKeys) {
        const std::string a = environmentValue(r.baseEnvironment, k.key), b = environmentValue(r.newEnvironment, k.key);
        if (a.empty() && b.empty()) continue;
        const bool changed = a != b && !a.empty() && !b.empty();
        out << "| " << k.label << " | " << md(a.empty() ? "not recorded" : a) << " | " << (changed ? "**" : "")
            << md(b.empty() ? "not recorded" : b) << (changed ? "** (changed)" : "") << " |\n";
    }
    out << "\n";

    if (!r.notes.empty()) {
        out << "<details><summary>Notes</summary>\n\n";
        bounded(out, r.notes, [&](const std::string& n) { out << "- " << md(n) << "\n"; });
        out << "\n</details>\n";
    }
}

} // namespace tuneup::analysis
