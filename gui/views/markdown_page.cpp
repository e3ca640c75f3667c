#include "views/markdown_page.h"

#include <QFontDatabase>
#include <QFontMetricsF>
#include <QTextBlock>
#include <QTextBrowser>
#include <QTextCursor>
#include <QTextDocument>

namespace tuneup::gui {

void showMarkdown(QTextBrowser& view, const QString& markdown) {
    view.setLineWrapMode(QTextEdit::WidgetWidth);
    view.setWordWrapMode(QTextOption::WrapAtWordBoundaryOrAnywhere);
    view.setMarkdown(markdown);
    // A wrapped line of code continues indented (a hanging indent), so that it reads as one line.
    const double indent
        = QFontMetricsF(QFontDatabase::systemFont(QFontDatabase::FixedFont)).horizontalAdvance(QStringLiteral("    "));
    QTextDocument* document = view.document();
    QTextCursor cursor(document);
    cursor.beginEditBlock();
    for (QTextBlock block = document->begin(); block.isValid(); block = block.next()) {
        QTextBlockFormat format = block.blockFormat();
        if (!format.nonBreakableLines()) continue;
        format.setNonBreakableLines(false);
        format.setBackground(QColor(0xea, 0xed, 0xf1));
        format.setLeftMargin(format.leftMargin() + indent + 4);
        format.setTextIndent(-indent);
        cursor.setPosition(block.position());
        cursor.setBlockFormat(format);
    }
    cursor.endEditBlock();
    document->setModified(false);
}

} // namespace tuneup::gui
