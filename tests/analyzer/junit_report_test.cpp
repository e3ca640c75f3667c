// `tuneup advise --format junit` (analyzer/lib/report/junit_report.cpp) on a report of two ranks: one
// test case per rule however many ranks ran it, a rule as far as any rank got (raised, clean, not
// applicable, not evaluated), failures only at or above --fail-on, text from traces escaped.

#include "report/report.h"

#include <gtest/gtest.h>
#include <sstream>

namespace tuneup::analysis {
namespace {

Finding finding(const std::string& rule, Severity severity, const std::string& title, int rank) {
    Finding f;
    f.ruleId = rule;
    f.severity = severity;
    f.title = title;
    f.rank = rank;
    return f;
}

AdviceReport twoRanks() {
    AdviceReport r;
    r.ranks.resize(2);
    r.ranks[0].rank = 0;
    r.ranks[1].rank = 1;
    const auto add = [&r](const std::string& rule, RuleStatus status, const std::string& reason, int rank,
                         std::vector<Finding> findings = {}) {
        RuleOutcome o;
        o.ruleId = rule;
        o.status = status;
        o.reason = reason;
        o.findings = std::move(findings);
        r.outcomes.push_back(std::move(o));
        r.outcomeRank.push_back(rank);
    };
    add("pageable-memcpy", RuleStatus::Raised, "", 0,
        { finding("pageable-memcpy", Severity::Warning, "copies from <pageable> memory & \"more\"", 0) });
    add("pageable-memcpy", RuleStatus::Clean, "no copies", 1);
    add("sync-in-loop", RuleStatus::NotEvaluated, "needs GPU kernel activity", 0);
    add("sync-in-loop", RuleStatus::NotEvaluated, "needs GPU kernel activity", 1);
    add("amp-unused", RuleStatus::NotApplicable, "no tensor cores", 0);
    add("amp-unused", RuleStatus::Clean, "bf16 GEMMs", 1);
    add("rank-straggler", RuleStatus::Raised, "", -1,
        { finding("rank-straggler", Severity::Error, "rank 1 is slow", -1) });
    return r;
}

std::string junit(const AdviceReport& report, std::optional<Severity> failOn) {
    ReportContext context;
    context.inputs = { "a.db", "b.db" };
    context.failOn = failOn;
    std::ostringstream out;
    writeJunitReport(out, report, context);
    return out.str();
}

TEST(JunitReport, OneCasePerRuleFailingAtOrAboveFailOn) {
    const AdviceReport report = twoRanks();
    const std::string warning = junit(report, Severity::Warning);
    EXPECT_NE(warning.find("<testsuite name=\"tuneup advise a.db b.db\" tests=\"4\" failures=\"2\" errors=\"0\" "
                           "skipped=\"1\">"),
        std::string::npos)
        << warning;
    EXPECT_NE(warning.find("name=\"pageable-memcpy\">\n      <failure message=\"copies from &lt;pageable&gt; memory "
                           "&amp; &quot;more&quot;\" type=\"warning\">"),
        std::string::npos)
        << warning;
    EXPECT_NE(warning.find("(rank 0)"), std::string::npos) << warning; // which rank raised it
    EXPECT_NE(warning.find("name=\"sync-in-loop\">\n      <skipped message=\"not evaluated: needs GPU kernel"),
        std::string::npos);
    // Not applicable on one rank, clean on the other: clean.
    EXPECT_NE(warning.find("name=\"amp-unused\">\n      <system-out>clean: bf16 GEMMs"), std::string::npos) << warning;

    EXPECT_NE(junit(report, Severity::Error).find("tests=\"4\" failures=\"1\""), std::string::npos);
    const std::string none = junit(report, std::nullopt);
    EXPECT_NE(none.find("tests=\"4\" failures=\"0\""), std::string::npos);
    EXPECT_EQ(none.find("<failure"), std::string::npos);
    EXPECT_NE(none.find("<system-out>warning: copies from"), std::string::npos); // still reported
}

TEST(JunitReport, IsRegisteredAsAReportFormat) {
    const ReportFormat* format = findReportFormat("junit");
    ASSERT_NE(format, nullptr);
    EXPECT_EQ(format->write, &writeJunitReport);
    EXPECT_NE(reportFormatNames().find("junit"), std::string::npos);
}

} // namespace
} // namespace tuneup::analysis
