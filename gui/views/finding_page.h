#pragma once
// The text beside the findings list, as Markdown for a QTextBrowser: for a finding, its gain, how it
// was measured, its evidence, the fix in Python and C++ and then the rule's documentation; with no
// finding chosen, the overview: steps, where the median step goes, and the rules without findings.
// "Where in the code" lists the finding's source sites as links (sourceLink) that the findings panel
// turns into opening the file.

#include "app/session.h"

#include <QString>
#include <QUrl>
#include <optional>

namespace tuneup::gui {

QString findingMarkdown(const analysis::Finding& finding, const Session& session);
QString overviewMarkdown(const Session& session);

// The link to a finding's sources[index]: by index, so that no path has to survive Markdown and URL
// syntax (spaces, parentheses); sourceLinkIndex reads it back, nullopt for any other link.
QUrl sourceLink(size_t index);
std::optional<size_t> sourceLinkIndex(const QUrl& url);

} // namespace tuneup::gui
