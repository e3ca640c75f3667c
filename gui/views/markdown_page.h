#pragma once
// Markdown in a QTextBrowser with nothing cut off on the right. Qt lays a code block out as
// non-breakable lines, so one long line of fix code widened the whole page and ran past its right
// edge (reachable only by scrolling every paragraph sideways). Here code blocks wrap at the view's width
// like the text around them, on a shaded background so that a wrapped line still reads as code; words
// longer than the view (kernel names, paths) break anywhere. Wrapping only changes the layout:
// selecting and copying a fix gives its lines unchanged.

#include <QString>

class QTextBrowser;

namespace tuneup::gui {

// Prepares `view` (its wrap mode) and shows `markdown` in it.
void showMarkdown(QTextBrowser& view, const QString& markdown);

} // namespace tuneup::gui
