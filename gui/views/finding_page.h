#pragma once
// The text beside the findings list, as Markdown for a QTextBrowser: for a finding, its gain, how it
// was measured, its evidence, the fix in Python and C++ and then the rule's documentation; with no
// finding chosen, the overview: steps, where the median step goes, and the rules without findings.

#include "app/session.h"

#include <QString>

namespace tuneup::gui {

QString findingMarkdown(const analysis::Finding& finding, const Session& session);
QString overviewMarkdown(const Session& session);

} // namespace tuneup::gui
