#include "views/source_view.h"

#include <QFontDatabase>
#include <QLabel>
#include <QPlainTextEdit>
#include <QTextBlock>
#include <QVBoxLayout>

namespace tuneup::gui {

SourceView::SourceView(QWidget* parent)
    : QDialog(parent)
    , m_header(new QLabel(this))
    , m_editor(new QPlainTextEdit(this)) {
    setObjectName(QStringLiteral("sourceView"));
    setModal(false);
    resize(900, 640);
    m_header->setObjectName(QStringLiteral("sourceHeader"));
    m_header->setTextInteractionFlags(Qt::TextSelectableByMouse); // the path, to copy into an editor
    m_header->setWordWrap(true);
    m_editor->setObjectName(QStringLiteral("sourceText"));
    m_editor->setReadOnly(true);
    m_editor->setTextInteractionFlags(Qt::TextSelectableByMouse | Qt::TextSelectableByKeyboard);
    // Code as written: monospace, lines unwrapped (indentation is Python's syntax).
    m_editor->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
    m_editor->setLineWrapMode(QPlainTextEdit::NoWrap);
    auto* layout = new QVBoxLayout(this);
    layout->addWidget(m_header);
    layout->addWidget(m_editor, 1);
}

void SourceView::showSource(const QString& path, const QString& name, const QString& text, bool truncated, int line) {
    setWindowTitle(tr("%1:%2 — tuneup").arg(name).arg(line));
    m_editor->setPlainText(text);
    const QTextBlock block = line > 0 ? m_editor->document()->findBlockByNumber(line - 1) : QTextBlock();
    // A file cut at its last whole line ends in '\n', which leaves an empty last block: not a line of it.
    const bool shown = block.isValid() && !(block == m_editor->document()->lastBlock() && block.text().isEmpty());
    m_line = shown ? line : 0;
    QString header = tr("<b>%1</b>, line %2").arg(path.toHtmlEscaped()).arg(line);
    if (truncated) header += tr(" · only the file's first 8 MB are shown");
    if (!shown) header += tr(" · <span style='color:#b00'>the file shown has no line %1</span>").arg(line);
    m_header->setText(header);
    QList<QTextEdit::ExtraSelection> highlight;
    if (shown) {
        QTextEdit::ExtraSelection selection;
        selection.format.setBackground(QColor(0xff, 0xf0, 0xa0));
        selection.format.setProperty(QTextFormat::FullWidthSelection, true);
        selection.cursor = QTextCursor(block);
        highlight << selection;
        m_editor->setTextCursor(QTextCursor(block));
    }
    m_editor->setExtraSelections(highlight);
    show();
    raise();
    activateWindow();
    // After show(): centring needs the viewport's final height.
    if (shown) m_editor->centerCursor();
}

} // namespace tuneup::gui
