// Every report `tuneup advise` writes can be read on another machine: no path of the machine tuneup
// was built on (its sources, its build tree) appears in any format, and the HTML report carries the
// rules' documentation inside it, once per rule, as safe HTML.

#include "html_test_support.h"
#include "report/rule_docs.h"

#include <gtest/gtest.h>

using namespace tuneup;

namespace {

size_t count(const std::string& text, std::string_view what) {
    size_t n = 0;
    for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + what.size()))
        ++n;
    return n;
}

class ReportPortable : public ::testing::Test {
protected:
    void SetUp() override { m_input = htmltest::writeRun(m_dir.path()); }

    std::string report(const std::string& format) {
        std::string error;
        std::string text = htmltest::advise(m_input, format, m_dir.path(), error);
        EXPECT_TRUE(error.empty()) << error;
        return text;
    }

    test::TempDir m_dir { "tuneup_report_portable" };
    std::string m_input;
};

} // namespace

TEST_F(ReportPortable, NoPathOfTheBuildMachineInAnyFormat) {
    for (const std::string format : { "text", "json", "markdown", "html", "junit" }) {
        std::string text = report(format);
        ASSERT_FALSE(text.empty()) << format;
        // The input's own path (the user's file) is the report's to show; nothing else of this machine's.
        for (size_t at = text.find(m_dir.path()); at != std::string::npos; at = text.find(m_dir.path()))
            text.erase(at, m_dir.path().size());
        EXPECT_EQ(text.find(TUNEUP_SOURCE_DIR), std::string::npos) << format << ": the source tree\n" << text;
        EXPECT_EQ(text.find(TUNEUP_BINARY_DIR), std::string::npos) << format << ": the build tree\n" << text;
        EXPECT_EQ(text.find("/work/"), std::string::npos) << format << "\n" << text;
    }
    // Where the other formats name a rule's documentation, they name it as it is everywhere.
    EXPECT_NE(report("json").find("\"doc\": \"rules/pageable-memcpy.md\""), std::string::npos);
    EXPECT_NE(report("markdown").find("rules/pageable-memcpy.md"), std::string::npos);
}

TEST_F(ReportPortable, HtmlCarriesEachRulesDocOnce) {
    const std::string html = report("html");
    ASSERT_FALSE(analysis::builtinRuleDoc("pageable-memcpy").empty());
    ASSERT_NE(html.find("id=\"finding-1\""), std::string::npos) << html;
    for (const char* rule : { "pageable-memcpy", "gpu-idle" }) {
        const std::string open = std::string("<details class=\"doc\" id=\"doc-") + rule + "\">";
        EXPECT_EQ(count(html, open), 1u) << rule;
        // The doc's heading and its text, rendered: "**What**:" as <strong>.
        const size_t at = html.find(open);
        ASSERT_NE(at, std::string::npos) << rule;
        const std::string doc = html.substr(at, html.find("</details>", at) - at);
        EXPECT_NE(doc.find(std::string("<h4>") + rule + "</h4>"), std::string::npos) << doc;
        EXPECT_NE(doc.find("<p><strong>What</strong>:"), std::string::npos) << doc;
        EXPECT_NE(doc.find("<pre><code class=\"language-python\">"), std::string::npos) << doc;
    }
    // The text of pageable-memcpy.md's fix, escaped as code.
    EXPECT_NE(html.find("pin_memory=True"), std::string::npos);
    // Links only to the web; none to a file.
    EXPECT_EQ(html.find("href=\"rules/"), std::string::npos);
    EXPECT_EQ(html.find("href=\"../"), std::string::npos);
    EXPECT_EQ(html.find("href=\"/"), std::string::npos);
}
