// MainWindow::openSource: a finding's "Where in the code" link opens the file at the line where the
// file is on this machine, and otherwise says so in the status bar rather than doing nothing.

#include "app/main_window.h"
#include "report/report_helpers.h"
#include "report/source_file.h"
#include "views/source_view.h"

#include <QStatusBar>

namespace tuneup::gui {

using analysis::findSourceFile;
using analysis::readSourceText;
using analysis::sourceFolders;
using analysis::SourceText;

void MainWindow::openSource(const analysis::Finding& finding, size_t site) {
    if (!m_session || site >= finding.sources.size()) return;
    const analysis::SourceSite& source = finding.sources[site];
    const QString name = QString::fromStdString(source.file);
    // Relative names are looked for beside the trace of the finding's rank (a recording made in the
    // project's folder), then in the current directory.
    std::string traceFile;
    const analysis::AdviceReport& report = m_session->report();
    if (const analysis::RankSummary* rank = analysis::rankOf(report, finding)) {
        const size_t model = size_t(rank - report.ranks.data());
        if (model < m_session->files.size()) traceFile = m_session->files[model];
    }
    const auto path = findSourceFile(source.file, sourceFolders(traceFile));
    constexpr int kShownMs = 10'000;
    if (!path) {
        statusBar()->showMessage(std::filesystem::path(source.file).is_absolute()
                ? tr("%1 is not on this machine").arg(name)
                : tr("%1 is not on this machine (looked beside the trace and in the current directory)").arg(name),
            kShownMs);
        return;
    }
    SourceText text;
    try {
        text = readSourceText(*path);
    } catch (const std::exception& e) {
        statusBar()->showMessage(tr("cannot read %1").arg(QString::fromStdString(e.what())), kShownMs);
        return;
    }
    if (!m_source) m_source = new SourceView(this);
    m_source->showSource(QString::fromStdString(path->string()), name, QString::fromStdString(text.text),
        text.truncated, int(source.line));
    statusBar()->showMessage(tr("%1, line %2").arg(QString::fromStdString(path->string())).arg(source.line), kShownMs);
}

} // namespace tuneup::gui
