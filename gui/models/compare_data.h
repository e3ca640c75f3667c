#pragma once
// Two opened runs as the compare dialog shows them: analyzer/lib/compare's comparison (compareJobs), the
// very one `tuneup compare BASE NEW` reports — the verdict with its ratio, interval and threshold, the
// breakdown per step side by side, the kernels per call and per step, the findings that appeared or were
// resolved, the settings and environment that changed. The GUI computes none of these numbers itself
// (tests/gui/same_comparison_test.cpp holds them to the CLI's JSON). No Qt.

#include "app/session.h"
#include "compare/compare_jobs.h"

#include <memory>
#include <string>

namespace tuneup::gui {

struct Comparison {
    std::string baseLabel, newLabel; // the sessions' titles: "run.db", "run.rank0.db +7"
    // Null when the runs cannot be compared (`error` says why). Shared with the dialog's models, which
    // read its result; recompare() judges it again.
    std::shared_ptr<analysis::JobComparison> runs;
    std::string error; // a side without training steps: which, and what to do
    const analysis::CompareResult* result() const { return runs ? &runs->result() : nullptr; }
    // The environment changed: the verdict is incomparable unless compared anyway (--allow-env-change).
    bool environmentChanged() const { return runs && !runs->result().environment.changed.empty(); }
};

// BASE is the run open in the window, NEW the one opened to compare with it; `allowEnvChange` is
// `tuneup compare --allow-env-change`.
Comparison compareSessions(const Session& base, const Session& now, bool allowEnvChange = false);

} // namespace tuneup::gui
