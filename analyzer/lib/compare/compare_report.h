#pragma once
// `tuneup compare`'s reports of a CompareResult: text for a terminal, versioned JSON for machines
// (docs/compare.md#json), GitHub-flavoured Markdown for a CI job summary (under 1 MiB whatever the
// traces), JUnit XML (one test case per check) and CSV of the deltas. Registered in compare_formats.cpp.

#include "compare/comparison.h"

#include <ostream>
#include <string>
#include <string_view>
#include <vector>

namespace tuneup::analysis {

// Version of the compare JSON's layout; bumped on incompatible changes.
inline constexpr int kCompareSchemaVersion = 1;

struct CompareReportContext {
    std::string toolVersion;
    bool color = false; // ANSI colours in text (a terminal)
};

void writeCompareText(std::ostream& out, const CompareResult& result, const CompareReportContext& context);
void writeCompareJson(std::ostream& out, const CompareResult& result, const CompareReportContext& context);
void writeCompareMarkdown(std::ostream& out, const CompareResult& result, const CompareReportContext& context);
void writeCompareJunit(std::ostream& out, const CompareResult& result, const CompareReportContext& context);
void writeCompareCsv(std::ostream& out, const CompareResult& result, const CompareReportContext& context);

struct CompareFormat {
    std::string_view name; // "junit"
    void (*write)(std::ostream& out, const CompareResult& result, const CompareReportContext& context);
    bool forTerminal = false;
};
const std::vector<CompareFormat>& compareFormats();
const CompareFormat* findCompareFormat(std::string_view name); // nullptr when unknown
std::string compareFormatNames(); // "text, json, markdown, junit, csv"

// What the formats write alike.
std::string ratioText(double ratio); // "0.452x"
std::string ratioIntervalText(const StepTimeComparison& s); // "0.43x-0.47x"
std::string stepTimeHeadline(const CompareResult& r); // "53.0 ms -> 23.6 ms per step (0.45x, 95% CI ...)"
std::string verdictSentence(const CompareResult& r); // the verdict and why, in one sentence
std::string sideLabel(const RunProfile& p); // the inputs as given: "slow.db", "a.db b.db"
// A breakdown part or kernel that grew with a regression by at least a tenth of the step's increase.
bool partRegressed(const CompareResult& r, int64_t baseNs, int64_t newNs);

} // namespace tuneup::analysis
