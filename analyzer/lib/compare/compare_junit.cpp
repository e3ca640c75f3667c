// `tuneup compare --format junit`: one test case per check, for CI systems that show JUnit results.
// Checks: the environment, the step time, each part of the step breakdown, each finding that appeared
// (a failure) or was resolved. Inconclusive and incomparable step times are "skipped", with why.

#include "compare/compare_report.h"
#include "report/xml_text.h"
#include "units.h"

#include <sstream>

namespace tuneup::analysis {

namespace {

struct TestCase {
    std::string classname, name;
    enum { Pass, Fail, Skip } outcome = Pass;
    std::string message; // failure or skip
    std::string output; // system-out: the numbers
};

} // namespace

void writeCompareJunit(std::ostream& out, const CompareResult& r, const CompareReportContext&) {
    std::vector<TestCase> cases;
    {
        TestCase t { "tuneup.compare", "environment", TestCase::Pass, "", "" };
        for (const EnvironmentFact& f : r.newEnvironment)
            t.output += std::string(environmentLabel(f.key)) + ": " + f.value + "\n";
        if (!r.environment.changed.empty()) {
            t.outcome = r.verdict == Verdict::Incomparable ? TestCase::Fail : TestCase::Pass;
            for (const EnvironmentChange& c : r.environment.changed)
                t.message += (t.message.empty() ? "" : "; ") + std::string(environmentLabel(c.key))
                    + " changed: " + c.base + " -> " + c.now;
            if (t.outcome == TestCase::Pass) t.output = "allowed (--allow-env-change): " + t.message + "\n" + t.output;
        }
        cases.push_back(std::move(t));
    }
    {
        TestCase t { "tuneup.compare", "step time", TestCase::Pass, "", "" };
        t.output = stepTimeHeadline(r) + "\n" + verdictSentence(r) + "\n";
        for (const std::string& c : r.causes)
            t.output += "why: " + c + "\n";
        if (r.verdict == Verdict::Regressed) {
            t.outcome = TestCase::Fail;
            t.message = "regressed: " + stepTimeHeadline(r);
        } else if (r.verdict == Verdict::Inconclusive || r.verdict == Verdict::Incomparable) {
            t.outcome = TestCase::Skip;
            t.message = std::string(verdictName(r.verdict)) + ": " + verdictSentence(r);
        }
        cases.push_back(std::move(t));
    }
    if (r.breakdownRecorded)
        for (const BreakdownDelta& b : r.breakdown) {
            TestCase t { "tuneup.compare.breakdown", b.label, TestCase::Pass, "", "" };
            t.output = formatDuration(b.baseNs) + " -> " + formatDuration(b.newNs) + " per step\n";
            if (partRegressed(r, b.baseNs, b.newNs)) {
                t.outcome = TestCase::Fail;
                t.message
                    = b.label + " grew " + formatDuration(b.baseNs) + " -> " + formatDuration(b.newNs) + " per step";
            }
            cases.push_back(std::move(t));
        }
    for (const FindingRef& f : r.appeared)
        cases.push_back(
            { "tuneup.compare.findings", f.ruleId, TestCase::Fail, "appeared: " + f.title, f.title + "\n" });
    for (const FindingRef& f : r.resolved)
        cases.push_back({ "tuneup.compare.findings", f.ruleId, TestCase::Pass, "", "resolved: " + f.title + "\n" });

    size_t failures = 0, skipped = 0;
    for (const TestCase& t : cases) {
        failures += t.outcome == TestCase::Fail;
        skipped += t.outcome == TestCase::Skip;
    }
    out << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
    out << "<testsuites name=\"tuneup compare\" tests=\"" << cases.size() << "\" failures=\"" << failures
        << "\" errors=\"0\" skipped=\"" << skipped << "\">\n";
    out << "  <testsuite name=\"tuneup compare " << xmlText(sideLabel(*r.base)) << " -> " << xmlText(sideLabel(*r.now))
        << "\" tests=\"" << cases.size() << "\" failures=\"" << failures << "\" errors=\"0\" skipped=\"" << skipped
        << "\">\n";
    for (const TestCase& t : cases) {
        out << "    <testcase classname=\"" << xmlText(t.classname) << "\" name=\"" << xmlText(t.name) << "\">\n";
        if (t.outcome == TestCase::Fail)
            out << "      <failure message=\"" << xmlText(t.message) << "\" type=\"" << verdictName(r.verdict) << "\">"
                << xmlText(t.message) << "</failure>\n";
        else if (t.outcome == TestCase::Skip)
            out << "      <skipped message=\"" << xmlText(t.message) << "\"/>\n";
        if (!t.output.empty()) out << "      <system-out>" << xmlText(t.output) << "</system-out>\n";
        out << "    </testcase>\n";
    }
    out << "  </testsuite>\n</testsuites>\n";
}

} // namespace tuneup::analysis
