#include "report/markdown_html.h"

#include "report/xml_text.h"

#include <algorithm>
#include <vector>

namespace tuneup::analysis {

namespace {

bool isPunctuation(char c) {
    return (c >= '!' && c <= '/') || (c >= ':' && c <= '@') || (c >= '[' && c <= '`') || (c >= '{' && c <= '~');
}

bool isWebLink(std::string_view target) {
    return target.starts_with("https://") || target.starts_with("http://");
}

std::string inlineHtml(std::string_view s);

// A link's "[text](target)" at `i` (on '['): its length, 0 when there is none there.
size_t linkAt(std::string_view s, size_t i, std::string& out) {
    int depth = 0;
    size_t close = std::string_view::npos;
    for (size_t k = i; k < s.size(); ++k) {
        if (s[k] == '\\') {
            ++k;
            continue;
        }
        if (s[k] == '[') ++depth;
        if (s[k] == ']' && --depth == 0) {
            close = k;
            break;
        }
    }
    if (close == std::string_view::npos || close + 1 >= s.size() || s[close + 1] != '(') return 0;
    size_t end = close + 2; // the target ends at the ')' that balances: "(javascript:alert(1))" is one
    for (int open = 1; end < s.size(); ++end) {
        if (s[end] == '(') ++open;
        if (s[end] == ')' && --open == 0) break;
    }
    if (end >= s.size()) return 0;
    const std::string_view text = s.substr(i + 1, close - i - 1);
    std::string_view target = s.substr(close + 2, end - close - 2);
    if (target.size() >= 2 && target.front() == '<' && target.back() == '>')
        target = target.substr(1, target.size() - 2);
    if (isWebLink(target) && target.find_first_of(" \t\"") == std::string_view::npos)
        out += "<a href=\"" + xmlText(target) + "\">" + inlineHtml(text) + "</a>";
    else
        out += inlineHtml(text);
    return end + 1 - i;
}

// Text, `code`, **strong**, *emphasis*, [links](https://…), <https://…> and \-escapes.
std::string inlineHtml(std::string_view s) {
    std::string out;
    std::string text; // plain text waiting to be escaped
    auto flush = [&] {
        out += xmlText(text);
        text.clear();
    };
    for (size_t i = 0; i < s.size();) {
        const char c = s[i];
        if (c == '\\' && i + 1 < s.size() && isPunctuation(s[i + 1])) {
            text += s[i + 1];
            i += 2;
            continue;
        }
        if (c == '`') {
            const size_t run = std::min(s.find_first_not_of('`', i), s.size()) - i;
            const std::string fence(run, '`');
            const size_t close = s.find(fence, i + run);
            if (close != std::string_view::npos) {
                flush();
                std::string_view code = s.substr(i + run, close - i - run);
                if (code.size() >= 2 && code.front() == ' ' && code.back() == ' ')
                    code = code.substr(1, code.size() - 2);
                out += "<code>" + xmlText(code) + "</code>";
                i = close + run;
                continue;
            }
            text.append(fence);
            i += run;
            continue;
        }
        if (c == '*') {
            const bool strong = s.substr(i).starts_with("**");
            const std::string_view mark = strong ? "**" : "*";
            const size_t close = s.find(mark, i + mark.size());
            // Emphasis opens before a non-space and closes after one: "2 * 3 * 4" stays text.
            if (close != std::string_view::npos && close > i + mark.size() && s[i + mark.size()] != ' '
                && s[close - 1] != ' ') {
                flush();
                const char* tag = strong ? "strong" : "em";
                out += std::string("<") + tag + ">" + inlineHtml(s.substr(i + mark.size(), close - i - mark.size()))
                    + "</" + tag + ">";
                i = close + mark.size();
                continue;
            }
        }
        if (c == '[') {
            std::string link;
            if (const size_t n = linkAt(s, i, link)) {
                flush();
                out += link;
                i += n;
                continue;
            }
        }
        if (c == '<') {
            const size_t close = s.find('>', i);
            if (close != std::string_view::npos && isWebLink(s.substr(i + 1, close - i - 1))
                && s.substr(i + 1, close - i - 1).find_first_of(" \t\"") == std::string_view::npos) {
                flush();
                const std::string url = xmlText(s.substr(i + 1, close - i - 1));
                out += "<a href=\"" + url + "\">" + url + "</a>";
                i = close + 1;
                continue;
            }
        }
        text += c;
        ++i;
    }
    flush();
    return out;
}

size_t indentOf(std::string_view line) {
    size_t n = 0;
    for (char c : line) {
        if (c == ' ')
            ++n;
        else if (c == '\t')
            n += 4;
        else
            break;
    }
    return n;
}

std::string_view trimmed(std::string_view s) {
    const size_t start = s.find_first_not_of(" \t");
    if (start == std::string_view::npos) return {};
    return s.substr(start, s.find_last_not_of(" \t\r") - start + 1);
}

// A list item's marker ("- ", "* ", "+ ", "1. ", "1) ") at the start of trimmed `s`: its length, or 0.
size_t itemMarker(std::string_view s, bool& ordered) {
    if (s.size() >= 2 && (s[0] == '-' || s[0] == '*' || s[0] == '+') && s[1] == ' ') {
        ordered = false;
        return 2;
    }
    size_t digits = 0;
    while (digits < s.size() && digits < 9 && s[digits] >= '0' && s[digits] <= '9')
        ++digits;
    if (digits && digits + 1 < s.size() && (s[digits] == '.' || s[digits] == ')') && s[digits + 1] == ' ') {
        ordered = true;
        return digits + 2;
    }
    return 0;
}

bool isRule(std::string_view t) {
    if (t.size() < 3) return false;
    const char c = t[0];
    if (c != '-' && c != '*' && c != '_') return false;
    return std::all_of(t.begin(), t.end(), [c](char x) { return x == c || x == ' '; });
}

class Renderer {
public:
    explicit Renderer(int headingShift)
        : m_shift(headingShift) { }

    void line(std::string_view raw) {
        const std::string_view t = trimmed(raw);
        if (m_fence.size()) {
            if (t.starts_with(m_fence) && trimmed(t.substr(m_fence.size())).empty()) {
                m_out += "</code></pre>\n";
                m_fence.clear();
            } else {
                // Lines of a code block inside a list keep their text past the list's indent.
                const size_t drop = std::min(indentOf(raw), m_fenceIndent);
                m_out += xmlText(raw.substr(std::min(drop, raw.size()))) + "\n";
            }
            return;
        }
        if (t.empty()) {
            closeParagraph();
            m_blank = true;
            return;
        }
        if (t.starts_with("```") || t.starts_with("~~~")) {
            closeParagraph();
            if (!m_lists.empty() && indentOf(raw) <= m_lists.back().indent) closeLists(0); // not the item's
            const size_t n = t.find_first_not_of(t[0]);
            m_fence = std::string(t.substr(0, n == std::string_view::npos ? t.size() : n));
            m_fenceIndent = indentOf(raw);
            std::string language;
            for (char c : trimmed(t.substr(m_fence.size())))
                if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '+' || c == '-'
                    || c == '_')
                    language += c;
                else
                    break;
            m_out += language.empty() ? "<pre><code>" : "<pre><code class=\"language-" + language + "\">";
            m_blank = false;
            return;
        }
        if (t.starts_with('#')) {
            const size_t level = t.find_first_not_of('#');
            if (level <= 6 && level < t.size() && t[level] == ' ') {
                closeParagraph();
                closeLists(0);
                const int h = std::min(6, int(level) + m_shift);
                std::string_view text = trimmed(t.substr(level));
                while (text.ends_with('#'))
                    text = trimmed(text.substr(0, text.size() - 1));
                m_out += "<h" + std::to_string(h) + ">" + inlineHtml(text) + "</h" + std::to_string(h) + ">\n";
                return;
            }
        }
        if (isRule(t) && !m_paragraph.size()) {
            closeLists(0);
            m_out += "<hr>\n";
            return;
        }
        bool ordered = false;
        if (const size_t marker = itemMarker(t, ordered)) {
            closeParagraph();
            const size_t indent = indentOf(raw);
            while (!m_lists.empty() && indent < m_lists.back().indent)
                closeList();
            if (!m_lists.empty() && indent == m_lists.back().indent && m_lists.back().ordered != ordered) closeList();
            if (m_lists.empty() || indent > m_lists.back().indent) {
                m_out += ordered ? "<ol>\n" : "<ul>\n";
                m_lists.push_back({ indent, ordered, false });
            }
            if (m_lists.back().itemOpen) m_out += "</li>\n";
            m_out += "<li>";
            m_lists.back().itemOpen = true;
            m_paragraph = std::string(t.substr(marker));
            m_inItem = true;
            m_blank = false;
            return;
        }
        // Text right after a list item continues it. After a blank line, text indented past the item's
        // marker is a paragraph of the item; text that is not ends the lists.
        if (!m_lists.empty() && m_blank) {
            if (indentOf(raw) <= m_lists.back().indent)
                closeLists(0);
            else
                m_inItem = false;
        }
        if (!m_paragraph.empty()) m_paragraph += '\n';
        m_paragraph += t;
        m_blank = false;
    }

    std::string finish() {
        if (m_fence.size()) m_out += "</code></pre>\n";
        m_fence.clear();
        closeParagraph();
        closeLists(0);
        return std::move(m_out);
    }

private:
    struct List {
        size_t indent;
        bool ordered;
        bool itemOpen;
    };

    void closeParagraph() {
        if (m_paragraph.empty()) return;
        // Inside a list item the text is the item's; elsewhere a paragraph.
        if (m_inItem && !m_lists.empty())
            m_out += inlineHtml(m_paragraph);
        else
            m_out += "<p>" + inlineHtml(m_paragraph) + "</p>\n";
        m_paragraph.clear();
    }
    void closeList() {
        if (m_lists.back().itemOpen) m_out += "</li>\n";
        m_out += m_lists.back().ordered ? "</ol>\n" : "</ul>\n";
        m_lists.pop_back();
    }
    void closeLists(size_t keep) {
        closeParagraph();
        while (m_lists.size() > keep)
            closeList();
        if (m_lists.empty()) m_inItem = false;
    }

    int m_shift;
    std::string m_out;
    std::string m_paragraph;
    std::string m_fence; // "```" while in a code block
    size_t m_fenceIndent = 0;
    std::vector<List> m_lists;
    bool m_inItem = false;
    bool m_blank = false;
};

} // namespace

std::string markdownToHtml(std::string_view markdown, int headingShift) {
    Renderer r(headingShift);
    size_t start = 0;
    while (start < markdown.size()) {
        size_t end = markdown.find('\n', start);
        if (end == std::string_view::npos) end = markdown.size();
        r.line(markdown.substr(start, end - start));
        start = end + 1;
    }
    return r.finish();
}

} // namespace tuneup::analysis
