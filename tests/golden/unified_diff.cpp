#include "unified_diff.h"

#include <algorithm>
#include <cstdint>
#include <vector>

namespace tuneup::golden {

namespace {

std::vector<std::string_view> splitLines(std::string_view text) {
    std::vector<std::string_view> lines;
    while (!text.empty()) {
        const size_t end = text.find('\n');
        lines.push_back(text.substr(0, end));
        if (end == std::string_view::npos) break;
        text.remove_prefix(end + 1);
    }
    return lines;
}

enum class Op : uint8_t { Same, Removed, Added };
struct Edit {
    Op op;
    size_t before, after; // line numbers (0-based) in each text; the one the op does not touch is where it stands
};

// Longest common subsequence of the lines between the common head and tail. Golden reports differ in a
// few places, so the part left is small; past kMaxCells the whole middle is shown as replaced.
std::vector<Edit> editScript(const std::vector<std::string_view>& a, const std::vector<std::string_view>& b) {
    size_t head = 0;
    while (head < a.size() && head < b.size() && a[head] == b[head])
        ++head;
    size_t tail = 0;
    while (tail < a.size() - head && tail < b.size() - head && a[a.size() - 1 - tail] == b[b.size() - 1 - tail])
        ++tail;
    const size_t n = a.size() - head - tail, m = b.size() - head - tail;

    std::vector<Edit> edits;
    for (size_t i = 0; i < head; ++i)
        edits.push_back({ Op::Same, i, i });
    constexpr size_t kMaxCells = 16u << 20;
    if (n * m <= kMaxCells) {
        // lcs[i][j]: the LCS of a[head+i..] and b[head+j..].
        std::vector<uint32_t> lcs((n + 1) * (m + 1), 0);
        auto at = [&](size_t i, size_t j) -> uint32_t& { return lcs[i * (m + 1) + j]; };
        for (size_t i = n; i-- > 0;)
            for (size_t j = m; j-- > 0;)
                at(i, j) = a[head + i] == b[head + j] ? at(i + 1, j + 1) + 1 : std::max(at(i + 1, j), at(i, j + 1));
        size_t i = 0, j = 0;
        while (i < n || j < m) {
            if (i < n && j < m && a[head + i] == b[head + j]) {
                edits.push_back({ Op::Same, head + i++, head + j++ });
            } else if (i < n && (j == m || at(i + 1, j) >= at(i, j + 1))) {
                edits.push_back({ Op::Removed, head + i++, head + j }); // removals first, as diff -u
            } else {
                edits.push_back({ Op::Added, head + i, head + j++ });
            }
        }
    } else {
        for (size_t i = 0; i < n; ++i)
            edits.push_back({ Op::Removed, head + i, head });
        for (size_t j = 0; j < m; ++j)
            edits.push_back({ Op::Added, head + n, head + j });
    }
    for (size_t t = 0; t < tail; ++t)
        edits.push_back({ Op::Same, head + n + t, head + m + t });
    return edits;
}

// "@@ -3,7 +3,6 @@": first line (1-based) and count; an empty range names the line before it.
std::string range(size_t first, size_t count) {
    return std::to_string(count == 0 ? first : first + 1) + "," + std::to_string(count);
}

} // namespace

std::string unifiedDiff(std::string_view before, std::string_view after, std::string_view beforeName,
    std::string_view afterName, size_t maxLines, size_t context) {
    if (before == after) return {};
    const auto a = splitLines(before), b = splitLines(after);
    const std::vector<Edit> edits = editScript(a, b);

    std::vector<std::string> lines { "--- " + std::string(beforeName), "+++ " + std::string(afterName) };
    size_t e = 0;
    while (e < edits.size()) {
        while (e < edits.size() && edits[e].op == Op::Same)
            ++e;
        if (e == edits.size()) break;
        // A hunk: from `context` lines before this change to `context` lines after the last change that
        // lies within 2 * context lines of the previous one.
        const size_t start = e >= context ? e - context : 0;
        size_t end = e;
        while (end < edits.size()) {
            size_t same = 0;
            while (end + same < edits.size() && edits[end + same].op == Op::Same)
                ++same;
            if (end + same == edits.size() || same > 2 * context) {
                end += std::min(same, context);
                break;
            }
            end += same + 1;
        }
        size_t beforeCount = 0, afterCount = 0;
        for (size_t i = start; i < end; ++i) {
            beforeCount += edits[i].op != Op::Added;
            afterCount += edits[i].op != Op::Removed;
        }
        lines.push_back(
            "@@ -" + range(edits[start].before, beforeCount) + " +" + range(edits[start].after, afterCount) + " @@");
        for (size_t i = start; i < end; ++i) {
            const Edit& d = edits[i];
            if (d.op == Op::Added)
                lines.push_back("+" + std::string(b[d.after]));
            else
                lines.push_back((d.op == Op::Same ? " " : "-") + std::string(a[d.before]));
        }
        e = end;
    }

    std::string out;
    for (size_t i = 0; i < lines.size() && i < maxLines; ++i)
        out += lines[i] + "\n";
    if (lines.size() > maxLines) out += "... (" + std::to_string(lines.size() - maxLines) + " more lines of diff)\n";
    return out;
}

} // namespace tuneup::golden
