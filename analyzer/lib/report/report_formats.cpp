#include "report/report.h"

namespace tuneup::analysis {

const std::vector<ReportFormat>& reportFormats() {
    static const std::vector<ReportFormat> kFormats {
        { "text", "", writeTextReport, true },
        { "json", "", writeJsonReport },
        { "markdown", "md", writeMarkdownReport },
        { "html", "", writeHtmlReport },
        { "junit", "", writeJunitReport },
    };
    return kFormats;
}

const ReportFormat* findReportFormat(std::string_view name) {
    for (const ReportFormat& format : reportFormats())
        if (format.name == name || (!format.alias.empty() && format.alias == name)) return &format;
    return nullptr;
}

std::string reportFormatNames() {
    std::string names;
    for (const ReportFormat& format : reportFormats())
        names += (names.empty() ? "" : ", ") + std::string(format.name);
    return names;
}

} // namespace tuneup::analysis
