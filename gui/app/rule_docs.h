#pragma once
// A rule's documentation (rules/<id>.md): compiled into the executable (analysis report/rule_docs.h),
// so an installed or copied tuneup-gui always has it; a user rule's doc is its own .sql file.

#include "advise/finding.h"

#include <QString>

namespace tuneup::gui {

// The Markdown of the finding's rule doc, "" when there is none.
QString ruleDoc(const analysis::Finding& finding);
// The embedded doc of a built-in rule by id, "" when unknown.
QString builtinRuleDoc(const QString& ruleId);

} // namespace tuneup::gui
