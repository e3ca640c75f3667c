#pragma once
// Renders an AdviceReport for people and machines: terminal text that fits a screen, JSON with a
// schema version (stable for CI), Markdown, and a self-contained HTML page with charts.

#include "advise/advisor.h"

#include <ostream>
#include <string>
#include <string_view>
#include <vector>

namespace tuneup::analysis {

enum class ReportFormat { Text, Json, Markdown, Html };
std::optional<ReportFormat> parseReportFormat(std::string_view text);

struct ReportContext {
    std::vector<std::string> inputs; // the files, in job order
    std::string toolVersion;
    bool color = false; // ANSI colours in text (a terminal)
    std::string docsDir; // where rules/<id>.md live, for links
};

// Version of the JSON report's layout; bumped on incompatible changes.
inline constexpr int kJsonReportSchemaVersion = 1;

void writeTextReport(std::ostream& out, const AdviceReport& report, const ReportContext& context);
void writeJsonReport(std::ostream& out, const AdviceReport& report, const ReportContext& context);
void writeMarkdownReport(std::ostream& out, const AdviceReport& report, const ReportContext& context);
void writeHtmlReport(std::ostream& out, const AdviceReport& report, const ReportContext& context);

} // namespace tuneup::analysis
