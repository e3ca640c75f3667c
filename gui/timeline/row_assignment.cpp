#include "timeline/row_assignment.h"

#include <algorithm>
#include <limits>
#include <numeric>

namespace tuneup::gui {

std::vector<uint16_t> assignRows(std::span<const int64_t> starts, std::span<const int64_t> ends) {
    const size_t n = std::min(starts.size(), ends.size());
    std::vector<uint16_t> rows(n);
    // Events still open, innermost last. Only the innermost is popped when it has ended, so an outer
    // event that ended under a longer inner one keeps its row occupied a little longer: rows below the
    // stack's height may hold ended events, rows at or above it never hold an open one.
    struct Open {
        int64_t endNs;
        uint16_t row;
    };
    std::vector<Open> stack;
    for (size_t i = 0; i < n; ++i) {
        while (!stack.empty() && stack.back().endNs <= starts[i])
            stack.pop_back();
        const uint16_t row
            = stack.empty() ? 0 : uint16_t(std::min<int>(stack.back().row + 1, std::numeric_limits<uint16_t>::max()));
        rows[i] = row;
        stack.push_back({ ends[i], row });
    }
    return rows;
}

std::vector<uint32_t> nestingOrder(
    std::span<const int64_t> starts, std::span<const int64_t> ends, std::span<const uint8_t> rank) {
    std::vector<uint32_t> order(std::min(starts.size(), ends.size()));
    std::iota(order.begin(), order.end(), 0u);
    std::stable_sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
        if (starts[a] != starts[b]) return starts[a] < starts[b];
        if (ends[a] != ends[b]) return ends[a] > ends[b];
        return (a < rank.size() ? rank[a] : 0) < (b < rank.size() ? rank[b] : 0);
    });
    return order;
}

} // namespace tuneup::gui
