// The Markdown subset the HTML report embeds the rules' docs in (report/markdown_html.h): each
// construct, and that nothing in the text can add markup, scripts or non-web links to the page.

#include "all_rules.h"
#include "report/markdown_html.h"
#include "report/rule_docs.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <gtest/gtest.h>
#include <string>
#include <vector>

using tuneup::analysis::builtinRuleDoc;
using tuneup::analysis::markdownToHtml;

TEST(MarkdownHtml, HeadingsShiftedAndParagraphsJoined) {
    EXPECT_EQ(markdownToHtml("# Title\n\nOne line\nand the next.\n\nAnother."),
        "<h1>Title</h1>\n<p>One line\nand the next.</p>\n<p>Another.</p>\n");
    EXPECT_EQ(markdownToHtml("# a\n### b ##\n######## not a heading", 3),
        "<h4>a</h4>\n<h6>b</h6>\n<p>######## not a heading</p>\n");
    EXPECT_EQ(markdownToHtml("#no space"), "<p>#no space</p>\n");
}

TEST(MarkdownHtml, InlineCodeStrongEmphasis) {
    EXPECT_EQ(markdownToHtml("**What**: `x < y` and *so* on"),
        "<p><strong>What</strong>: <code>x &lt; y</code> and <em>so</em> on</p>\n");
    EXPECT_EQ(markdownToHtml("``a ` b`` 2 * 3 * 4"), "<p><code>a ` b</code> 2 * 3 * 4</p>\n");
    EXPECT_EQ(markdownToHtml("an `unclosed code span"), "<p>an `unclosed code span</p>\n");
    EXPECT_EQ(markdownToHtml("\\*not emphasis\\* and \\`not code\\`"), "<p>*not emphasis* and `not code`</p>\n");
    EXPECT_EQ(markdownToHtml("snake_case_names stay"), "<p>snake_case_names stay</p>\n");
}

TEST(MarkdownHtml, FencedCodeKeepsItsText) {
    EXPECT_EQ(markdownToHtml("Fix:\n```python\nif a < b and c > d:\n    x = \"&\"\n```\nafter"),
        "<p>Fix:</p>\n<pre><code class=\"language-python\">if a &lt; b and c &gt; d:\n    x = &quot;&amp;&quot;\n"
        "</code></pre>\n<p>after</p>\n");
    // A fence of four closes only on four; the language keeps only its name's characters.
    EXPECT_EQ(
        markdownToHtml("````c++\" onload=\"x\n```\n````"), "<pre><code class=\"language-c++\">```\n</code></pre>\n");
    // An unclosed block ends with the text.
    EXPECT_EQ(markdownToHtml("```\n# not a heading"), "<pre><code># not a heading\n</code></pre>\n");
}

TEST(MarkdownHtml, ListsNestAndContinue) {
    EXPECT_EQ(markdownToHtml("Before:\n- one\n  continued\n- two\n\nAfter."),
        "<p>Before:</p>\n<ul>\n<li>one\ncontinued</li>\n<li>two</li>\n</ul>\n<p>After.</p>\n");
    EXPECT_EQ(markdownToHtml("1. first\n2. second\n   - inner\n3. third"),
        "<ol>\n<li>first</li>\n<li>second<ul>\n<li>inner</li>\n</ul>\n</li>\n<li>third</li>\n</ol>\n");
    EXPECT_EQ(markdownToHtml("- a\n\n  more of a\n- b"), "<ul>\n<li>a<p>more of a</p>\n</li>\n<li>b</li>\n</ul>\n");
    EXPECT_EQ(markdownToHtml("---\n* x"), "<hr>\n<ul>\n<li>x</li>\n</ul>\n");
}

TEST(MarkdownHtml, LinksOnlyToTheWeb) {
    EXPECT_EQ(markdownToHtml("[the guide](https://pytorch.org/tutorials/a?b=1&c=2)"),
        "<p><a href=\"https://pytorch.org/tutorials/a?b=1&amp;c=2\">the guide</a></p>\n");
    EXPECT_EQ(
        markdownToHtml("<http://example.com/x>"), "<p><a href=\"http://example.com/x\">http://example.com/x</a></p>\n");
    // Relative links (meaningless in a mailed report) and other schemes keep only their text.
    EXPECT_EQ(markdownToHtml("[schema](../docs/schema.md#x) [run](javascript:alert(1)) [f](file:///etc/passwd)"),
        "<p>schema run f</p>\n");
    // A quote cannot end the attribute.
    EXPECT_EQ(markdownToHtml("[x](https://a.b/\"onmouseover=\"alert(1))"), "<p>x</p>\n");
}

TEST(MarkdownHtml, RawHtmlIsText) {
    const std::string html = markdownToHtml("<script>alert(1)</script>\n<img src=x onerror=alert(1)>\n"
                                            "# <b>bold</b>\n- <iframe>\n`<style>`\n[<svg onload=x>](https://x.y)");
    EXPECT_EQ(html.find("<script"), std::string::npos) << html;
    EXPECT_EQ(html.find("<img"), std::string::npos) << html;
    EXPECT_EQ(html.find("<b>"), std::string::npos) << html;
    EXPECT_EQ(html.find("<iframe"), std::string::npos) << html;
    EXPECT_EQ(html.find("<style"), std::string::npos) << html;
    EXPECT_EQ(html.find("<svg"), std::string::npos) << html;
    EXPECT_NE(html.find("&lt;script&gt;alert(1)&lt;/script&gt;"), std::string::npos) << html;
    // Bytes that are not UTF-8 become U+FFFD.
    EXPECT_EQ(markdownToHtml("a\xff"
                             "b"),
        "<p>a\xef\xbf\xbd"
        "b</p>\n");
}

TEST(MarkdownHtml, EveryRuleDocRendersBalanced) {
    // Each built-in rule's doc: as many closing tags as opening ones, per element the subset writes.
    const auto rules = tuneup::rules::builtinRules();
    ASSERT_GE(rules.size(), 20u);
    for (const auto& r : rules) {
        const std::string rule(r->info().id);
        const std::string_view doc = builtinRuleDoc(rule);
        ASSERT_FALSE(doc.empty()) << rule;
        const std::string html = markdownToHtml(doc, 3);
        for (const char* tag : { "p", "ul", "ol", "li", "pre", "code", "strong", "em", "a", "h4", "h5" }) {
            size_t open = 0, close = 0;
            for (size_t at = html.find(std::string("<") + tag); at != std::string::npos;
                 at = html.find(std::string("<") + tag, at + 1))
                open += html[at + 1 + std::strlen(tag)] == '>' || html[at + 1 + std::strlen(tag)] == ' ';
            for (size_t at = html.find(std::string("</") + tag + ">"); at != std::string::npos;
                 at = html.find(std::string("</") + tag + ">", at + 1))
                ++close;
            EXPECT_EQ(open, close) << rule << " <" << tag << ">";
        }
    }
    EXPECT_TRUE(builtinRuleDoc("no-such-rule").empty());
    EXPECT_TRUE(builtinRuleDoc("README").empty());
}

TEST(MarkdownHtml, NoOtherMarkupFromAnyText) {
    // Text made of Markdown's and HTML's special characters, at random (fixed seed): the output holds no
    // element but those of the subset, and no attribute but href and class.
    const std::string alphabet = "*_`[]()<>#-+1. \n\\\"'&=:/abchjpstx";
    uint32_t seed = 12345;
    auto next = [&] { return seed = seed * 1664525u + 1013904223u; };
    const std::vector<std::string> allowed
        = { "p", "h1", "h2", "h3", "h4", "h5", "h6", "ul", "ol", "li", "pre", "code", "strong", "em", "a", "hr" };
    for (int round = 0; round < 3000; ++round) {
        std::string text(next() % 80, ' ');
        for (char& c : text)
            c = alphabet[next() % alphabet.size()];
        const std::string html = markdownToHtml(text);
        for (size_t at = html.find('<'); at != std::string::npos; at = html.find('<', at + 1)) {
            size_t name = at + 1 + (html[at + 1] == '/');
            size_t end = html.find_first_of(" >", name);
            ASSERT_NE(end, std::string::npos) << text;
            const std::string tag = html.substr(name, end - name);
            ASSERT_NE(std::find(allowed.begin(), allowed.end(), tag), allowed.end()) << tag << " from: " << text;
            const size_t close = html.find('>', at);
            const std::string attributes = html.substr(end, close - end);
            ASSERT_TRUE(attributes.empty() || attributes.starts_with(" href=\"https://")
                || attributes.starts_with(" href=\"http://") || attributes.starts_with(" class=\"language-"))
                << attributes << " from: " << text;
            ASSERT_EQ(std::count(attributes.begin(), attributes.end(), '"'), attributes.empty() ? 0 : 2)
                << attributes << " from: " << text;
        }
    }
}
