// `tuneup history show --format html`: one self-contained page (no script, no external file) with each
// environment's trend drawn as an SVG chart — the median step of every run, its p10-p90 band — and the
// runs in a table below it.

#include "compare/compare_report.h"
#include "compare/history.h"
#include "report/xml_text.h"
#include "stats/descriptive.h"
#include "units.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>

namespace tuneup::analysis {

namespace {

constexpr double kWidth = 720, kHeight = 240, kLeft = 70, kRight = 20, kTop = 20, kBottom = 40;

std::string number(double v) {
    char buffer[32];
    snprintf(buffer, sizeof buffer, "%.1f", v);
    return buffer;
}

std::string ms(double v) {
    return formatDuration(int64_t(std::llround(v * 1e6)));
}

void chart(std::ostream& out, const std::vector<const HistoryEntry*>& runs) {
    std::vector<stats::Distribution> d;
    double top = 0;
    for (const HistoryEntry* e : runs) {
        d.push_back(stats::describe(e->profile.stepMs));
        top = std::max(top, d.back().p90);
    }
    top = top > 0 ? top * 1.1 : 1;
    const double plotW = kWidth - kLeft - kRight, plotH = kHeight - kTop - kBottom;
    const auto x
        = [&](size_t i) { return kLeft + (runs.size() > 1 ? plotW * double(i) / double(runs.size() - 1) : plotW / 2); };
    const auto y = [&](double v) { return kTop + plotH * (1 - v / top); };
    out << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << kWidth << "\" height=\"" << kHeight
        << "\" role=\"img\" aria-label=\"median step per run\">\n";
    for (int tick = 0; tick <= 4; ++tick) {
        const double v = top * tick / 4;
        out << "<line x1=\"" << kLeft << "\" x2=\"" << kWidth - kRight << "\" y1=\"" << number(y(v)) << "\" y2=\""
            << number(y(v)) << "\" stroke=\"#ddd\"/><text x=\"" << kLeft - 6 << "\" y=\"" << number(y(v) + 4)
            << "\" text-anchor=\"end\" font-size=\"11\">" << xmlText(ms(v)) << "</text>\n";
    }
    // The p10-p90 band, then the medians.
    std::string band, line;
    for (size_t i = 0; i < runs.size(); ++i)
        band += (i ? " " : "") + number(x(i)) + "," + number(y(d[i].p90));
    for (size_t i = runs.size(); i-- > 0;)
        band += " " + number(x(i)) + "," + number(y(d[i].p10));
    for (size_t i = 0; i < runs.size(); ++i)
        line += (i ? " " : "") + number(x(i)) + "," + number(y(d[i].median));
    out << "<polygon points=\"" << band << "\" fill=\"#4e79a7\" fill-opacity=\"0.2\"/>\n";
    out << "<polyline points=\"" << line << "\" fill=\"none\" stroke=\"#4e79a7\" stroke-width=\"2\"/>\n";
    for (size_t i = 0; i < runs.size(); ++i)
        out << "<circle cx=\"" << number(x(i)) << "\" cy=\"" << number(y(d[i].median))
            << "\" r=\"3\" fill=\"#4e79a7\"><title>" << xmlText(runs[i]->label + ": " + ms(d[i].median))
            << "</title></circle><text x=\"" << number(x(i)) << "\" y=\"" << kHeight - kBottom + 16
            << "\" text-anchor=\"middle\" font-size=\"10\">" << xmlText(runs[i]->label.substr(0, 12)) << "</text>\n";
    out << "</svg>\n";
}

} // namespace

void writeHistoryHtml(std::ostream& out, const std::vector<HistoryEntry>& history) {
    out << "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>tuneup history</title>\n"
           "<style>body{font-family:sans-serif;margin:2em}table{border-collapse:collapse}"
           "td,th{padding:2px 10px;border-bottom:1px solid #eee;text-align:left}td.n{text-align:right}</style>"
           "</head><body>\n<h1>tuneup history</h1>\n";
    if (history.empty()) out << "<p>No runs yet.</p>\n";
    std::map<std::string, std::vector<const HistoryEntry*>> groups;
    std::vector<std::string> order;
    for (const HistoryEntry& e : history) {
        if (!groups.count(e.fingerprint)) order.push_back(e.fingerprint);
        groups[e.fingerprint].push_back(&e);
    }
    for (const std::string& fingerprint : order) {
        const std::vector<const HistoryEntry*>& runs = groups[fingerprint];
        out << "<h2>" << xmlText(fingerprint.empty() ? "environment not recorded" : fingerprint) << "</h2>\n";
        out << "<p>Median step per run, with the band from its 10th to its 90th percentile step.</p>\n";
        chart(out, runs);
        out << "<table><tr><th>id</th><th>added</th><th>label</th><th>steps</th><th>median</th><th>p10</th>"
               "<th>p90</th><th>vs the run before</th><th>findings</th></tr>\n";
        double previous = 0;
        for (const HistoryEntry* e : runs) {
            const stats::Distribution d = stats::describe(e->profile.stepMs);
            std::string findings;
            for (const FindingRef& f : e->profile.findings)
                findings += (findings.empty() ? "" : ", ") + f.ruleId;
            out << "<tr><td class=\"n\">" << e->id << "</td><td>" << xmlText(e->addedAt) << "</td><td>"
                << xmlText(e->label) << "</td><td class=\"n\">" << d.n << "</td><td class=\"n\">" << ms(d.median)
                << "</td><td class=\"n\">" << ms(d.p10) << "</td><td class=\"n\">" << ms(d.p90)
                << "</td><td class=\"n\">" << (previous > 0 ? ratioText(d.median / previous) : "") << "</td><td>"
                << xmlText(findings) << "</td></tr>\n";
            previous = d.median;
        }
        out << "</table>\n";
    }
    out << "</body></html>\n";
}

} // namespace tuneup::analysis
