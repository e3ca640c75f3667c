#pragma once
// A stable sort for rows that arrive nearly in order, as a trace's do (each thread's or stream's events in
// time order, the threads in blocks): the runs already in order are found and merged, n log(runs)
// instead of n log n. Rows in no order fall back to std::stable_sort.

#include <algorithm>
#include <cstddef>
#include <vector>

namespace tuneup::analysis {

// Sorts `rows` stably by `less`; returns false, leaving them as they were, when they are in as many runs
// as `mostRuns` or more (the caller then sorts them its own way).
template <class Row, class Less> bool mergeRuns(std::vector<Row>& rows, Less less, size_t mostRuns) {
    std::vector<size_t> bounds { 0 }; // where each run starts, then the end
    for (size_t i = 1; i < rows.size(); ++i)
        if (less(rows[i], rows[i - 1])) {
            if (bounds.size() >= mostRuns) return false;
            bounds.push_back(i);
        }
    bounds.push_back(rows.size());
    if (bounds.size() <= 2) return true; // one run: in order already
    std::vector<Row> merged(rows.size());
    while (bounds.size() > 2) { // pairs of neighbouring runs, until one is left
        std::vector<size_t> next { 0 };
        for (size_t r = 0; r + 1 < bounds.size(); r += 2) {
            const size_t from = bounds[r], middle = bounds[r + 1];
            const size_t to = r + 2 < bounds.size() ? bounds[r + 2] : middle; // a last run alone is copied
            // std::merge takes the first range's row on ties: stable.
            std::merge(rows.begin() + long(from), rows.begin() + long(middle), rows.begin() + long(middle),
                rows.begin() + long(to), merged.begin() + long(from), less);
            next.push_back(to);
        }
        rows.swap(merged);
        bounds.swap(next);
    }
    return true;
}

// Sorts `rows` stably by `less`, merging their runs when they are few (nearly in order).
template <class Row, class Less> void stableSortRuns(std::vector<Row>& rows, Less less) {
    if (!mergeRuns(rows, less, std::max<size_t>(rows.size() / 16, 2))) std::stable_sort(rows.begin(), rows.end(), less);
}

} // namespace tuneup::analysis
