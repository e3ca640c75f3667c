// The HTML report: one self-contained page (inline CSS, SVG charts drawn here, the rules' docs inside, no
// script, nothing fetched, no path of the build machine), so it can be attached to a CI run or mailed and
// opened anywhere.

#include "report/markdown_html.h"
#include "report/measured_gain.h"
#include "report/report_helpers.h"
#include "report/rule_docs.h"
#include "report/source_file.h"
#include "report/xml_text.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <optional>
#include <span>

namespace tuneup::analysis {

namespace {

// The line a source site names, where its file is on this machine: beside the finding's trace or in the
// current directory, as the GUI looks (a trace from elsewhere names files of another machine).
std::optional<std::string> sourceLine(const SourceSite& site, const std::string& traceFile) {
    const auto path = findSourceFile(site.file, sourceFolders(traceFile));
    if (!path) return std::nullopt;
    try {
        return lineOf(readSourceText(*path), site.line);
    } catch (const std::exception&) {
        return std::nullopt; // unreadable: the site is still named
    }
}

std::string num(double v) {
    char text[32];
    snprintf(text, sizeof text, "%.1f", v);
    return text;
}

std::string share(int64_t part, int64_t whole) {
    return whole > 0 ? formatPercent(double(part) / double(whole)) : "-";
}

// A round axis step (1, 2 or 5 times a power of ten) giving about `ticks` ticks up to `max`.
int64_t tickStep(int64_t max, int ticks) {
    const double raw = double(std::max<int64_t>(max, 1)) / ticks;
    const double power = std::pow(10.0, std::floor(std::log10(raw)));
    for (double m : { 1.0, 2.0, 5.0, 10.0 })
        if (m * power >= raw) return std::max<int64_t>(1, int64_t(m * power));
    return std::max<int64_t>(1, int64_t(10 * power));
}

constexpr const char* kStyle = R"(
:root { --fg: #1f2328; --muted: #59636e; --line: #d1d9e0; --bg: #ffffff; --panel: #f6f8fa; }
* { box-sizing: border-box; }
body { font: 14px/1.5 -apple-system, "Segoe UI", Helvetica, Arial, sans-serif; color: var(--fg);
  background: var(--bg); max-width: 1200px; margin: 0 auto; padding: 24px; }
h1 { font-size: 26px; margin: 0 0 4px; }
h2 { font-size: 20px; border-bottom: 1px solid var(--line); padding-bottom: 4px; margin-top: 36px; }
h3 { font-size: 16px; margin: 20px 0 6px; }
h4 { font-size: 13px; margin: 12px 0 4px; color: var(--muted); }
.meta, .muted { color: var(--muted); }
nav a { margin-right: 14px; }
code, pre { font: 12.5px/1.45 ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; }
pre { background: var(--panel); border: 1px solid var(--line); border-radius: 6px; padding: 10px 12px;
  overflow-x: auto; }
table { border-collapse: collapse; margin: 8px 0; }
th, td { border-bottom: 1px solid var(--line); padding: 4px 10px; text-align: left; vertical-align: top; }
th { background: var(--panel); font-weight: 600; }
td.n, th.n { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
.chart { overflow-x: auto; }
.chart svg { display: block; }
.chart text { font: 11px sans-serif; fill: var(--muted); }
.legend { display: flex; flex-wrap: wrap; gap: 6px 16px; margin: 6px 0 12px; font-size: 12.5px; }
.legend span.sw { display: inline-block; width: 11px; height: 11px; border-radius: 2px; margin-right: 5px;
  vertical-align: -1px; }
.bar { height: 10px; background: #4e79a7; border-radius: 2px; min-width: 1px; }
td.barcell { width: 180px; }
.finding { border: 1px solid var(--line); border-left-width: 5px; border-radius: 6px; padding: 10px 16px;
  margin: 14px 0; }
.finding.error { border-left-color: #cf222e; }
.finding.warning { border-left-color: #d4a72c; }
.finding.info { border-left-color: #0969da; }
.finding h3 { margin: 6px 0; }
.badge { display: inline-block; padding: 0 8px; border-radius: 10px; font-size: 12px; font-weight: 600;
  color: #fff; }
.badge.error { background: #cf222e; }
.badge.warning { background: #9a6700; }
.badge.info { background: #0969da; }
.gain { font-weight: 600; }
details { margin: 8px 0; }
summary { cursor: pointer; color: var(--muted); }
td.kernel { max-width: 640px; overflow-wrap: anywhere; }
div.doc { border-left: 3px solid var(--line); padding: 0 0 0 14px; margin: 4px 0 0 4px; }
div.doc h4 { font-size: 15px; color: var(--fg); }
)";

void writeLegend(std::ostream& out, const std::vector<BreakdownPart>& parts) {
    out << "<div class=\"legend\">";
    for (const BreakdownPart& p : parts)
        out << "<span><span class=\"sw\" style=\"background:" << p.color << "\"></span>" << xmlText(p.label)
            << "</span>";
    out << "</div>\n";
}

std::string breakdownTooltip(std::string_view head, const StepBreakdown& b, const std::vector<BreakdownPart>& parts) {
    std::string t = std::string(head) + ": " + formatDuration(b.stepNs);
    for (const BreakdownPart& p : parts)
        if (b.*p.field > 0)
            t += "\n" + std::string(p.label) + " " + formatDuration(b.*p.field) + " (" + share(b.*p.field, b.stepNs)
                + ")";
    return t;
}

// A vertical stacked bar per step: where each step's time went on the GPU.
void writeStepChart(std::ostream& out, const RankSummary& rank) {
    const auto& steps = rank.steps.detection.steps;
    const auto& perStep = rank.steps.perStep;
    const std::vector<BreakdownPart>& parts = breakdownParts(rank.steps);
    constexpr size_t kMaxSteps = 2000; // beyond that a bar is less than a pixel even in a wide chart
    const size_t n = std::min(perStep.size(), kMaxSteps);
    int64_t maxNs = 1;
    for (size_t i = 0; i < n; ++i)
        maxNs = std::max(maxNs, perStep[i].stepNs);
    const int64_t tick = tickStep(maxNs, 4);
    const int64_t top = (maxNs + tick - 1) / tick * tick;

    const double left = 64, right = 12, plotTop = 10, plotHeight = 220, bottom = 30;
    const double slot = std::clamp(1100.0 / double(std::max<size_t>(n, 1)), 3.0, 48.0);
    const double width = left + right + std::max(slot * double(n), 360.0); // room for the labels with few steps
    const double height = plotTop + plotHeight + bottom;
    auto y = [&](int64_t ns) { return plotTop + plotHeight - plotHeight * double(ns) / double(top); };

    out << "<div class=\"chart\"><svg xmlns=\"http://www.w3.org/2000/svg\" class=\"steps\" width=\"" << num(width)
        << "\" height=\"" << num(height) << "\" role=\"img\" aria-label=\"step breakdown, one bar per step\">\n";
    for (int64_t t = 0; t <= top; t += tick)
        out << "<line x1=\"" << num(left) << "\" x2=\"" << num(width - right) << "\" y1=\"" << num(y(t)) << "\" y2=\""
            << num(y(t)) << "\" stroke=\"#d1d9e0\" stroke-width=\"" << (t ? "0.5" : "1") << "\"/><text x=\""
            << num(left - 6) << "\" y=\"" << num(y(t) + 4) << "\" text-anchor=\"end\">"
            << (t ? xmlText(formatDuration(t)) : "0") << "</text>\n";
    const double barWidth = slot >= 6 ? slot * 0.8 : slot;
    const size_t labelEvery = std::max<size_t>(1, size_t(std::ceil(40.0 / slot)));
    for (size_t i = 0; i < n; ++i) {
        const StepBreakdown& b = perStep[i];
        const double x = left + slot * double(i) + (slot - barWidth) / 2;
        out << "<g class=\"step\"><title>"
            << xmlText(breakdownTooltip("step " + std::to_string(steps[i].number), b, parts)) << "</title>";
        int64_t below = 0;
        for (const BreakdownPart& p : parts) {
            const int64_t v = b.*p.field;
            if (v <= 0) continue;
            out << "<rect class=\"" << p.key << "\" x=\"" << num(x) << "\" y=\"" << num(y(below + v)) << "\" width=\""
                << num(barWidth) << "\" height=\"" << num(y(below) - y(below + v)) << "\" fill=\"" << p.color << "\"/>";
            below += v;
        }
        out << "</g>\n";
        if (i % labelEvery == 0)
            out << "<text x=\"" << num(left + slot * (double(i) + 0.5)) << "\" y=\"" << num(plotTop + plotHeight + 16)
                << "\" text-anchor=\"middle\">" << steps[i].number << "</text>\n";
    }
    const int64_t median = rank.steps.median.stepNs;
    out << "<line x1=\"" << num(left) << "\" x2=\"" << num(width - right) << "\" y1=\"" << num(y(median)) << "\" y2=\""
        << num(y(median)) << "\" stroke=\"#1f2328\" stroke-dasharray=\"4 3\" stroke-width=\"1\"><title>median step "
        << xmlText(formatDuration(median)) << "</title></line>\n<text x=\"" << num(width - right) << "\" y=\""
        << num(y(median) - 4) << "\" text-anchor=\"end\">median " << xmlText(formatDuration(median)) << "</text>\n";
    out << "<text x=\"" << num(left - 6) << "\" y=\"" << num(plotTop + plotHeight + 16)
        << "\" text-anchor=\"end\">step</text>\n"
        << "</svg></div>\n";
    if (perStep.size() > n)
        out << "<p class=\"muted\">The first " << n << " of " << perStep.size() << " steps are shown.</p>\n";
}

// One horizontal stacked bar per rank: their median steps side by side, to spot a straggler.
void writeRankChart(std::ostream& out, const AdviceReport& report) {
    constexpr size_t kChartedRanks = 64; // more would not fit a page: the fastest, median and slowest then
    std::vector<size_t> charted = ranksDescribed(report);
    if (report.ranks.size() <= kChartedRanks) {
        charted.resize(report.ranks.size());
        for (size_t i = 0; i < charted.size(); ++i)
            charted[i] = i;
    }
    int64_t maxNs = 1;
    for (size_t i : charted)
        maxNs = std::max(maxNs, report.ranks[i].steps.median.stepNs);
    const double left = 70, right = 90, rowHeight = 22, plotWidth = 760;
    const double height = rowHeight * double(charted.size()) + 8;
    out << "<div class=\"chart\"><svg xmlns=\"http://www.w3.org/2000/svg\" class=\"ranks\" width=\""
        << num(left + plotWidth + right) << "\" height=\"" << num(height)
        << "\" role=\"img\" aria-label=\"median step per rank\">\n";
    for (size_t row = 0; row < charted.size(); ++row) {
        const RankSummary& r = report.ranks[charted[row]];
        const StepBreakdown& b = r.steps.median;
        const std::vector<BreakdownPart>& parts = breakdownParts(r.steps);
        const double y = 4 + rowHeight * double(row);
        out << "<g class=\"rank\"><title>"
            << xmlText(breakdownTooltip("rank " + std::to_string(r.rank) + " median step", b, parts))
            << "</title><text x=\"" << num(left - 8) << "\" y=\"" << num(y + 14) << "\" text-anchor=\"end\">rank "
            << r.rank << "</text>";
        double x = left;
        for (const BreakdownPart& p : parts) {
            const double w = plotWidth * double(std::max<int64_t>(b.*p.field, 0)) / double(maxNs);
            if (w <= 0) continue;
            out << "<rect class=\"" << p.key << "\" x=\"" << num(x) << "\" y=\"" << num(y) << "\" width=\"" << num(w)
                << "\" height=\"" << num(rowHeight - 6) << "\" fill=\"" << p.color << "\"/>";
            x += w;
        }
        out << "<text x=\"" << num(left + plotWidth * double(b.stepNs) / double(maxNs) + 6) << "\" y=\"" << num(y + 13)
            << "\">" << xmlText(b.stepNs ? formatDuration(b.stepNs) : "no steps") << "</text></g>\n";
    }
    out << "</svg></div>\n";
    if (charted.size() < report.ranks.size())
        out << "<p class=\"muted\">" << report.ranks.size()
            << " ranks: the fastest, the median and the slowest are shown.</p>\n";
}

void writeMedianTable(std::ostream& out, const StepBreakdown& b, const std::vector<BreakdownPart>& parts) {
    out << "<table class=\"breakdown\"><tr><th>Median step</th><th class=\"n\">time</th><th "
           "class=\"n\">share</th></tr>\n"
        << "<tr><td><b>Step</b></td><td class=\"n\"><b>" << xmlText(formatDuration(b.stepNs))
        << "</b></td><td class=\"n\">100%</td></tr>\n";
    for (const BreakdownPart& p : parts) {
        if (b.*p.field == 0 && p.key == "idle-graph") continue; // no CUDA graphs: no row of zeros
        out << "<tr><td><span class=\"legend\"><span><span class=\"sw\" style=\"background:" << p.color << "\"></span>"
            << xmlText(p.label) << "</span></span></td><td class=\"n\">" << xmlText(formatDuration(b.*p.field))
            << "</td><td class=\"n\">" << share(b.*p.field, b.stepNs) << "</td></tr>\n";
    }
    out << "</table>\n";
}

// Every event the recording or the reading lost or repaired, before the findings that rest on the rest.
void writeDataLoss(std::ostream& out, const AdviceReport& report) {
    const std::vector<DataLoss> losses = dataLoss(report);
    if (losses.empty()) return;
    const bool ranks = report.ranks.size() > 1;
    out << "<section id=\"data-loss\"><h2>Data loss</h2>\n<p>Events lost or repaired while recording or reading; "
           "the advice rests on the rest.</p>\n<table><tr><th class=\"n\">events</th><th>what</th>"
        << (ranks ? "<th>ranks</th>" : "") << "<th>why</th></tr>\n";
    for (const DataLoss& d : losses) {
        out << "<tr><td class=\"n\">" << xmlText(groupedInteger(d.count)) << "</td><td><code>" << xmlText(d.name)
            << "</code></td>";
        if (ranks) out << "<td>" << xmlText(rankList(d.ranks, report.ranks.size())) << "</td>";
        out << "<td>" << xmlText(d.description) << "</td></tr>\n";
    }
    out << "</table>\n</section>\n";
}

void writeSteps(std::ostream& out, const AdviceReport& report, const ReportContext& context) {
    out << "<section id=\"steps\"><h2>Where the step time goes</h2>\n";
    const std::vector<size_t> described = ranksDescribed(report);
    if (std::any_of(described.begin(), described.end(), [&](size_t i) { return report.ranks[i].steps.gpuActivity(); }))
        writeLegend(out, kBreakdownParts);
    if (report.ranks.size() > 1) {
        out << "<h3>Ranks compared (median step)</h3>\n";
        writeRankChart(out, report);
    }
    for (size_t i : described) {
        const RankSummary& r = report.ranks[i];
        const StepDetection& d = r.steps.detection;
        out << "<h3>" << xmlText(inputLabel(report, context, i));
        if (report.ranks.size() > 1) out << " <span class=\"muted\">rank " << r.rank << "</span>";
        out << "</h3>\n<p class=\"meta\">" << xmlText(sourceFormatName(r.format)) << ", " << r.eventCount << " events";
        if (!d.steps.empty())
            out << "; " << d.steps.size() << " steps from " << xmlText(stepSourceName(d.source)) << "; median step <b>"
                << xmlText(formatDuration(r.steps.median.stepNs)) << "</b>";
        out << "; " << (r.steps.gpuActivity() ? "GPU " + std::to_string(r.steps.device) : xmlText(kCpuOnly))
            << "</p>\n";
        if (d.steps.empty()) {
            out << "<p>No steps found: " << xmlText(d.detail) << ".</p>\n";
            continue;
        }
        if (!r.steps.gpuActivity()) {
            out << "<p>" << xmlText(kCpuOnly) << ": each step's time on the host, waiting for data or not.</p>\n";
            writeLegend(out, kHostBreakdownParts);
        }
        writeStepChart(out, r);
        writeMedianTable(out, r.steps.median, breakdownParts(r.steps));
    }
    out << "</section>\n";
}

void writeKernels(std::ostream& out, const AdviceReport& report, const ReportContext& context) {
    constexpr size_t kTop = 15;
    out << "<section id=\"kernels\"><h2>Busiest kernels</h2>\n";
    for (size_t i : ranksDescribed(report)) {
        const RankSummary& r = report.ranks[i];
        if (report.ranks.size() > 1)
            out << "<h3>" << xmlText(inputLabel(report, context, i)) << " <span class=\"muted\">rank "
                << report.ranks[i].rank << "</span></h3>\n";
        const int64_t allNs = r.kernelNs;
        const std::span<const KernelTotal> top(r.topKernels.data(), std::min(kTop, r.topKernels.size()));
        if (top.empty()) {
            out << "<p>No GPU kernels in this trace.</p>\n";
            continue;
        }
        const size_t steps = report.ranks[i].steps.detection.steps.size();
        out << "<p class=\"meta\">" << r.kernelCount << " kernel launches, " << xmlText(formatDuration(allNs))
            << " of kernel time in the trace; the " << top.size() << " with the most time:</p>\n"
            << "<table class=\"kernels\"><tr><th>Kernel</th><th class=\"n\">calls</th><th class=\"n\">total</th>"
            << (steps ? "<th class=\"n\">per step</th>" : "")
            << "<th class=\"n\">mean</th><th class=\"n\">share</th><th></th></tr>\n";
        for (const KernelTotal& k : top) {
            const std::string_view full = k.name;
            const double fraction = allNs > 0 ? double(k.totalNs) / double(allNs) : 0.0;
            const double bar = top.front().totalNs > 0 ? double(k.totalNs) / double(top.front().totalNs)
                                                       : 0.0; // the largest spans the cell
            out << "<tr><td class=\"kernel\"><code title=\"" << xmlText(full) << "\">" << xmlText(shortKernelName(full))
                << "</code></td>"
                << "<td class=\"n\">" << k.count << "</td><td class=\"n\">" << xmlText(formatDuration(k.totalNs))
                << "</td>";
            if (steps) out << "<td class=\"n\">" << xmlText(formatDuration(k.totalNs / int64_t(steps))) << "</td>";
            out << "<td class=\"n\">" << xmlText(formatDuration(k.meanNs())) << "</td><td class=\"n\">"
                << formatPercent(fraction)
                << "</td><td class=\"barcell\"><div class=\"bar\" style=\"width:" << num(100.0 * bar)
                << "%\"></div></td></tr>\n";
        }
        out << "</table>\n";
    }
    out << "</section>\n";
}

// The rule's documentation inside the page, folded (the report is read where tuneup's files are not),
// once per rule: a later finding of the rule points at the first one's. `shown`: rule -> that finding.
void writeRuleDoc(std::ostream& out, const Finding& f, size_t index, std::map<std::string, size_t>& shown) {
    const std::string_view doc = builtinRuleDoc(f.ruleId);
    if (doc.empty()) {
        if (!f.docPath.empty()) // a user rule: its own file documents it
            out << "<p class=\"muted\">A user rule, documented in <code>" << xmlText(f.docPath) << "</code>.</p>\n";
        return;
    }
    const auto [first, added] = shown.try_emplace(f.ruleId, index);
    if (!added) {
        out << "<p class=\"muted\">Documentation of <code>" << xmlText(f.ruleId) << "</code>: <a href=\"#doc-"
            << xmlText(f.ruleId) << "\">with finding " << first->second << "</a>.</p>\n";
        return;
    }
    out << "<details class=\"doc\" id=\"doc-" << xmlText(f.ruleId) << "\"><summary>Documentation of <code>"
        << xmlText(f.ruleId) << "</code></summary>\n<div class=\"doc\">\n"
        << markdownToHtml(doc, 3) << "</div></details>\n";
}

void writeFinding(std::ostream& out, size_t index, const FindingGroup& group, const AdviceReport& report,
    const ReportContext& context, std::map<std::string, size_t>& docsShown) {
    const Finding& f = *group.finding;
    const std::string severity(severityName(f.severity));
    out << "<article class=\"finding " << severity << "\" id=\"finding-" << index << "\">\n<div><span class=\"badge "
        << severity << "\">" << severity << "</span> <code>" << xmlText(f.ruleId) << "</code>";
    if (!group.ranks.empty())
        out << " <span class=\"muted\">" << xmlText(rankList(group.ranks, report.ranks.size()))
            << (group.ranks.size() > 1 ? "; shown: rank " + std::to_string(f.rank) : "") << "</span>";
    if (f.gain && f.gain->perStepNs > 0) {
        out << " · <span class=\"gain\">−" << xmlText(formatDuration(f.gain->perStepNs)) << " per step ("
            << xmlText(stepShareText(f)) << ")</span>";
        if (!f.gain->confidence.empty())
            out << " <span class=\"muted\">confidence " << xmlText(f.gain->confidence) << "</span>";
    } else {
        out << " · <span class=\"muted\">" << xmlText(stepShareText(f)) << "</span>";
    }
    if (const std::string measured = measuredGainText(context, f); !measured.empty())
        out << " · <span class=\"gain\">measured " << xmlText(measured) << "</span>";
    out << "</div>\n<h3>" << index << ". " << xmlText(f.title) << "</h3>\n";
    if (!f.detail.empty()) out << "<p>" << xmlText(f.detail) << "</p>\n";

    if (!f.sources.empty()) {
        const RankSummary* rank = rankOf(report, f);
        const std::string traceFile = rank ? rank->path : std::string();
        out << "<p>Where in the code:</p>\n<ul class=\"sources\">";
        for (const SourceSite& site : f.sources) {
            out << "<li><code>" << xmlText(sourceSiteText(site)) << "</code>";
            if (const auto text = sourceLine(site, traceFile)) out << "<pre>" << xmlText(*text) << "</pre>";
            out << "</li>";
        }
        out << "</ul>\n";
    }
    const Evidence& e = f.evidence;
    const size_t events = std::max(e.eventsTotal, e.events.size());
    if (!e.facts.empty() || events || !e.spans.empty() || (f.gain && !f.gain->model.empty())) {
        out << "<details><summary>Evidence";
        if (events) out << " (" << events << " events)";
        out << "</summary>\n";
        if (!e.facts.empty()) {
            out << "<table class=\"facts\">";
            for (const auto& [label, value] : e.facts)
                out << "<tr><th>" << xmlText(label) << "</th><td>" << xmlText(value) << "</td></tr>";
            out << "</table>\n";
        }
        const int64_t origin = traceStartNs(report, f);
        if (!e.events.empty()) {
            out << "<p>Events (" << xmlText(eventTableName(e.events.front().table)) << " rows):";
            constexpr size_t kListed = 20;
            for (size_t k = 0; k < e.events.size() && k < kListed; ++k)
                out << (k ? ", " : " ") << "#" << e.events[k].row;
            if (events > std::min(e.events.size(), kListed)) out << ", … (" << events << " in all)";
            out << "</p>\n";
        }
        if (!e.spans.empty()) {
            out << "<p>Time ranges (from the start of the trace):";
            constexpr size_t kListed = 10;
            for (size_t k = 0; k < e.spans.size() && k < kListed; ++k)
                out << (k ? "," : "") << " " << xmlText(relativeSpan(e.spans[k], origin));
            if (e.spans.size() > kListed) out << ", … (" << e.spans.size() << " in all)";
            out << "</p>\n";
        }
        if (f.gain && !f.gain->model.empty()) out << "<p>Gain model: " << xmlText(f.gain->model) << "</p>\n";
        out << "</details>\n";
    }
    if (!f.fixPython.empty())
        out << "<h4>Fix — Python</h4><pre><code class=\"language-python\">" << xmlText(f.fixPython)
            << "</code></pre>\n";
    if (!f.fixCpp.empty())
        out << "<h4>Fix — C++</h4><pre><code class=\"language-cpp\">" << xmlText(f.fixCpp) << "</code></pre>\n";
    writeRuleDoc(out, f, index, docsShown);
    out << "</article>\n";
}

void writeFindings(std::ostream& out, const AdviceReport& report, const ReportContext& context) {
    const auto findings = groupedFindings(report);
    out << "<section id=\"findings\"><h2>Findings</h2>\n";
    const std::string note = floorNote(report);
    if (findings.empty()) {
        out << "<p>No findings.</p>\n"
            << (note.empty() ? "" : "<p class=\"meta\">" + xmlText(note) + ".</p>\n") << "</section>\n";
        return;
    }
    out << "<p class=\"meta\">Ranked by estimated gain per step.</p>\n<table class=\"summary\"><tr><th "
           "class=\"n\">#</th>"
           "<th>severity</th><th>rule</th><th class=\"n\">gain/step</th><th "
           "class=\"n\">share</th><th>finding</th></tr>\n";
    for (size_t i = 0; i < findings.size(); ++i) {
        const Finding& f = *findings[i].finding;
        out << "<tr><td class=\"n\">" << i + 1 << "</td><td><span class=\"badge " << severityName(f.severity) << "\">"
            << severityName(f.severity) << "</span></td><td><code>" << xmlText(f.ruleId) << "</code>"
            << (findings[i].ranks.empty() ? ""
                                          : " <span class=\"muted\">"
                           + xmlText(rankList(findings[i].ranks, report.ranks.size())) + "</span>")
            << "</td><td class=\"n\">"
            << (f.gain && f.gain->perStepNs > 0 ? xmlText(formatDuration(f.gain->perStepNs)) : "-")
            << "</td><td class=\"n\">" << xmlText(stepShareText(f)) << "</td><td><a href=\"#finding-" << i + 1 << "\">"
            << xmlText(f.title) << "</a></td></tr>\n";
    }
    out << "</table>\n";
    if (!note.empty()) out << "<p class=\"meta\">" << xmlText(note) << ".</p>\n";
    std::map<std::string, size_t> docsShown;
    for (size_t i = 0; i < findings.size(); ++i)
        writeFinding(out, i + 1, findings[i], report, context, docsShown);
    out << "</section>\n";
}

void writeRuleList(
    std::ostream& out, std::string_view heading, std::string_view note, const std::vector<const RuleOutcome*>& rules) {
    if (rules.empty()) return;
    out << "<h3>" << xmlText(heading) << "</h3>\n";
    if (!note.empty()) out << "<p class=\"meta\">" << xmlText(note) << "</p>\n";
    out << "<table class=\"rules\">";
    for (const RuleOutcome* o : rules)
        out << "<tr><td><code>" << xmlText(o->ruleId) << "</code></td><td>" << xmlText(o->reason) << "</td></tr>";
    out << "</table>\n";
}

} // namespace

void writeHtmlReport(std::ostream& out, const AdviceReport& report, const ReportContext& context) {
    const auto findings = groupedFindings(report);
    const std::string first = report.ranks.empty() ? std::string() : inputLabel(report, context, 0);
    out << "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
           "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>tuneup advice"
        << (first.empty() ? "" : " — " + xmlText(first)) << (report.ranks.size() > 1 ? " and others" : "")
        << "</title>\n<style>" << kStyle << "</style>\n</head>\n<body>\n";
    out << "<header><h1>tuneup advice</h1>\n<p class=\"meta\">" << findings.size()
        << (findings.size() == 1 ? " finding" : " findings") << " in " << report.ranks.size()
        << (report.ranks.size() == 1 ? " trace" : " traces");
    if (report.medianStepNs() > 0) out << " · median step " << xmlText(formatDuration(report.medianStepNs()));
    if (!context.toolVersion.empty()) out << " · tuneup " << xmlText(context.toolVersion);
    out << "</p>\n<nav><a href=\"#findings\">Findings</a><a href=\"#steps\">Steps</a><a href=\"#kernels\">Kernels</a>"
           "<a href=\"#rules\">Rules</a></nav></header>\n";
    writeDataLoss(out, report);
    writeFindings(out, report, context);
    writeSteps(out, report, context);
    writeKernels(out, report, context);
    out << "<section id=\"rules\"><h2>Rules without findings</h2>\n";
    writeRuleList(
        out, "Not evaluated", "The trace lacks what these rules need.", rulesWithout(report, RuleStatus::NotEvaluated));
    writeRuleList(out, "Not applicable", "", rulesWithout(report, RuleStatus::NotApplicable));
    const auto clean = rulesWithout(report, RuleStatus::Clean);
    if (!clean.empty()) {
        out << "<details><summary>Checked, nothing found (" << clean.size() << ")</summary>\n";
        writeRuleList(out, "Checked, nothing found", "", clean);
        out << "</details>\n";
    }
    out << "</section>\n<footer class=\"muted\"><p>Generated by tuneup " << xmlText(context.toolVersion)
        << ". Measure a fix with <code>tuneup bench</code>; look at the timeline with "
           "<code>tuneup-gui</code>.</p></footer>\n"
           "</body>\n</html>\n";
}

} // namespace tuneup::analysis
