#pragma once
// Renders an AdviceReport for people and machines: terminal text that fits a screen, JSON with a
// schema version (stable for CI), Markdown, a self-contained HTML page with charts, and JUnit XML.

#include "advise/advisor.h"
#include "bench/bench_result.h"

#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

namespace tuneup::analysis {

struct ReportContext {
    std::vector<std::string> inputs; // the files, in job order
    std::string toolVersion;
    bool color = false; // ANSI colours in text (a terminal)
    const BenchResult* bench = nullptr; // tuneup advise --bench: measured gains beside the estimates
    std::optional<Severity> failOn; // tuneup advise --fail-on: what the JUnit report counts as a failure
};

// Version of the JSON report's layout; bumped on incompatible changes.
inline constexpr int kJsonReportSchemaVersion = 1;

void writeTextReport(std::ostream& out, const AdviceReport& report, const ReportContext& context);
void writeJsonReport(std::ostream& out, const AdviceReport& report, const ReportContext& context);
void writeMarkdownReport(std::ostream& out, const AdviceReport& report, const ReportContext& context);
void writeHtmlReport(std::ostream& out, const AdviceReport& report, const ReportContext& context);
// One test case per rule; failures: findings at or above context.failOn (none without it).
void writeJunitReport(std::ostream& out, const AdviceReport& report, const ReportContext& context);

// The formats `tuneup advise --format` knows, one line each in report_formats.cpp.
struct ReportFormat {
    std::string_view name; // "json"
    std::string_view alias; // another name it answers to ("md"), or empty
    void (*write)(std::ostream& out, const AdviceReport& report, const ReportContext& context);
    bool forTerminal = false; // may use colours on a terminal
};
const std::vector<ReportFormat>& reportFormats();
const ReportFormat* findReportFormat(std::string_view name); // nullptr when unknown
std::string reportFormatNames(); // "text, json, markdown, html"

} // namespace tuneup::analysis
