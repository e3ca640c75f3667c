#include "models/compare_data.h"

namespace tuneup::gui {

using namespace analysis;

Comparison compareSessions(const Session& base, const Session& now, bool allowEnvChange) {
    Comparison c;
    c.baseLabel = base.title();
    c.newLabel = now.title();
    CompareOptions options;
    options.allowEnvChange = allowEnvChange;
    try {
        c.runs = compareJobs(*base.job, base.inputs, *now.job, now.inputs, options);
    } catch (const CompareInputError& e) {
        c.error = e.what();
    }
    return c;
}

} // namespace tuneup::gui
