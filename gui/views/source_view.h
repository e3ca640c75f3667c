#pragma once
// A source file of the user's, read-only, opened from a finding's "Where in the code": the line the
// finding points at highlighted and scrolled into view, in a window beside the main one (not modal: the
// user reads the code and the timeline together). One view is reused for every site opened.

#include <QDialog>

class QLabel;
class QPlainTextEdit;

namespace tuneup::gui {

class SourceView : public QDialog {
    Q_OBJECT
public:
    explicit SourceView(QWidget* parent = nullptr);

    // Shows `text` (the file at `path`, maybe only its start: `truncated`) with line `line` (1-based)
    // highlighted and centred; `name` is how the finding names the file.
    void showSource(const QString& path, const QString& name, const QString& text, bool truncated, int line);

    QPlainTextEdit* editor() const { return m_editor; }
    QLabel* header() const { return m_header; }
    // The highlighted line (1-based), 0 when the line lies beyond the text shown.
    int highlightedLine() const { return m_line; }

private:
    QLabel* m_header;
    QPlainTextEdit* m_editor;
    int m_line = 0;
};

} // namespace tuneup::gui
