#pragma once
// A small, safe subset of Markdown as HTML, for documentation embedded in the HTML report (the rules'
// docs): ATX headings, paragraphs, fenced code blocks, bullet and numbered lists (nested by indent),
// horizontal rules, and inline code, **strong**, *emphasis* and links. Everything else is text:
// every character is escaped (raw HTML shows as written), links keep only http(s) targets (a relative
// link, meaningless inside a mailed report, is its text alone), and no attribute but href and class is
// ever written.

#include <string>
#include <string_view>

namespace tuneup::analysis {

// `headingShift` moves headings down (1: "# x" becomes <h2>), to nest them under the page's own; the
// deepest is <h6>.
std::string markdownToHtml(std::string_view markdown, int headingShift = 0);

} // namespace tuneup::analysis
