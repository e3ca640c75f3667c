// The HTML report in a real browser: headless Chromium loads a report `tuneup advise` wrote and dumps
// the DOM it built. The page runs without a console message (no script error), holds every finding
// with its title and its rule's doc, and Chromium built exactly the elements the report wrote: markup
// the parser had to repair (a tag left open, a block inside a <p>) would add, drop or move elements.
// Skipped with a message where no Chromium is installed; failed under CI=true, where install-deps
// installs chromium-headless-shell.

#include "ci.h"
#include "html_test_support.h"

#include <fstream>
#include <gtest/gtest.h>
#include <map>
#include <rapidjson/document.h>
#include <regex>

using namespace tuneup;

namespace {

struct Loaded {
    int code = -1;
    std::string dom;
    std::vector<std::string> console; // the page's console messages (script errors among them)
};

// Chromium, headless, loads `file` and prints its DOM; its log (stderr) carries the page's console.
Loaded load(const std::string& chromium, const std::string& file) {
    const test::ProgramResult r = test::runProgram(chromium,
        { "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--enable-logging=stderr", "--v=0",
            "--dump-dom", "file://" + file });
    Loaded loaded { r.code, r.out, {} };
    std::istringstream log(r.err);
    for (std::string line; std::getline(log, line);)
        if (line.find(":CONSOLE") != std::string::npos) loaded.console.push_back(line);
    return loaded;
}

// How many of each element a page's markup opens (<name ...>), without those a parser adds by itself.
std::map<std::string, int> elements(const std::string& html) {
    std::map<std::string, int> counts;
    static const std::regex open("<([a-zA-Z][a-zA-Z0-9]*)[\\s/>]");
    for (auto it = std::sregex_iterator(html.begin(), html.end(), open); it != std::sregex_iterator(); ++it) {
        std::string name = (*it)[1];
        for (char& c : name)
            c = char(std::tolower(static_cast<unsigned char>(c)));
        if (name != "tbody" && name != "html" && name != "head" && name != "body") ++counts[name];
    }
    return counts;
}

std::string chromiumOrSkipMessage(std::string& message) {
    const std::string chromium = htmltest::findChromium();
    if (chromium.empty())
        message = "no headless Chromium (chromium-headless-shell, chromium) on PATH and no $TUNEUP_CHROMIUM: "
                  "scripts/install-deps.sh installs chromium-headless-shell";
    return chromium;
}

} // namespace

#define TUNEUP_REQUIRE_CHROMIUM(var)                                                                                   \
    std::string skipMessage;                                                                                           \
    const std::string var = chromiumOrSkipMessage(skipMessage);                                                        \
    if (var.empty()) {                                                                                                 \
        if (test::inCi()) FAIL() << skipMessage << "; CI=true requires it";                                            \
        GTEST_SKIP() << skipMessage;                                                                                   \
    }

TEST(HtmlInBrowser, TheCheckSeesAScriptErrorAndARepairedPage) {
    TUNEUP_REQUIRE_CHROMIUM(chromium);
    // What the test below must catch, shown on a page that has it.
    const test::TempDir dir("tuneup_browser_control");
    const std::string page = "<!DOCTYPE html><html><body><p>a<ul><li>b</li></ul></p><script>undefinedFunction();"
                             "</script></body></html>";
    std::ofstream(dir.path() + "/bad.html") << page;
    const Loaded loaded = load(chromium, dir.path() + "/bad.html");
    ASSERT_EQ(loaded.code, 0);
    ASSERT_EQ(loaded.console.size(), 1u) << loaded.dom;
    EXPECT_NE(loaded.console.front().find("Uncaught ReferenceError"), std::string::npos) << loaded.console.front();
    // The <ul> cannot sit in a <p>: the parser closed it, and the stray </p> became a second, empty one.
    EXPECT_EQ(elements(page)["p"], 1);
    EXPECT_EQ(elements(loaded.dom)["p"], 2) << loaded.dom;
}

TEST(HtmlInBrowser, TheReportLoadsCleanWithItsFindingsAndDocs) {
    TUNEUP_REQUIRE_CHROMIUM(chromium);
    const test::TempDir dir("tuneup_browser");
    const std::string input = htmltest::writeRun(dir.path());
    std::string error;
    const std::string html = htmltest::advise(input, "html", dir.path(), error);
    ASSERT_TRUE(error.empty()) << error;
    const std::string json = htmltest::advise(input, "json", dir.path(), error);
    ASSERT_TRUE(error.empty()) << error;
    rapidjson::Document report;
    ASSERT_FALSE(report.Parse(json.c_str()).HasParseError());
    const auto& findings = report["findings"].GetArray();
    ASSERT_GE(findings.Size(), 2u);

    const Loaded loaded = load(chromium, dir.path() + "/report.html");
    ASSERT_EQ(loaded.code, 0);
    ASSERT_FALSE(loaded.dom.empty());
    EXPECT_TRUE(loaded.console.empty()) << loaded.console.front();
    // Every element the report wrote, and no other: nothing the parser had to repair.
    const auto wrote = elements(html), built = elements(loaded.dom);
    EXPECT_EQ(wrote, built);
    // Each finding as an article, with its title, and each rule's doc folded inside the first of its findings.
    size_t articles = 0;
    for (size_t at = loaded.dom.find("<article class=\"finding"); at != std::string::npos;
         at = loaded.dom.find("<article class=\"finding", at + 1))
        ++articles;
    EXPECT_EQ(articles, findings.Size());
    for (rapidjson::SizeType i = 0; i < findings.Size(); ++i) {
        const auto& f = findings[i];
        // The title as a serialised DOM writes text: &, < and > as entities.
        std::string title;
        for (const char c : std::string(f["title"].GetString()))
            title += c == '&' ? "&amp;" : c == '<' ? "&lt;" : c == '>' ? "&gt;" : std::string(1, c);
        EXPECT_NE(loaded.dom.find("<h3>" + std::to_string(i + 1) + ". " + title + "</h3>"), std::string::npos) << title;
        const std::string rule = f["rule"].GetString();
        const size_t doc = loaded.dom.find("<details class=\"doc\" id=\"doc-" + rule + "\">");
        ASSERT_NE(doc, std::string::npos) << rule;
        EXPECT_LT(loaded.dom.rfind("<article", doc), doc);
        EXPECT_GT(loaded.dom.find("</article>", doc), loaded.dom.find("</details>", doc)) << rule;
        EXPECT_NE(loaded.dom.find("<h4>" + rule + "</h4>", doc), std::string::npos) << rule;
    }
}
