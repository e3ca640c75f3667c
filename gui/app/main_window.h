#pragma once
// The window: findings on the left, the timeline in the middle, and under it the selected event's
// details, the step breakdown chart and the kernel table. Files load in the background with progress
// and cancel; a file that cannot be read gets an error dialog that says why. Window geometry, splitter
// positions and recent files are kept in QSettings. Layout and settings in main_window.cpp; menus,
// actions and loading in main_window_actions.cpp; opening a finding's source file in
// main_window_source.cpp.

#include "app/session.h"

#include <QMainWindow>
#include <QPointer>
#include <memory>

class QLabel;
class QLineEdit;
class QMenu;
class QProgressDialog;
class QSplitter;
class QTabWidget;

namespace tuneup::gui {

class BreakdownChart;
class CompareDialog;
class DetailsPane;
class FindingsPanel;
class KernelView;
class LoadJob;
class SourceView;
class TimelineView;

struct WindowOptions {
    std::string stepRange; // --step-range
    std::string userRules; // --rules
};

class MainWindow : public QMainWindow {
    Q_OBJECT
public:
    explicit MainWindow(WindowOptions options = {}, QWidget* parent = nullptr);
    ~MainWindow() override;

    // Opens files as one job (in the background); `compare`: as run B of a comparison with the open one.
    void openFiles(const QStringList& files, bool compare = false);
    bool isLoading() const;
    void cancelLoading();

    std::shared_ptr<const Session> session() const { return m_session; }
    TimelineView* timeline() const { return m_timeline; }
    FindingsPanel* findings() const { return m_findings; }
    DetailsPane* details() const { return m_details; }
    BreakdownChart* breakdown() const { return m_breakdown; }
    KernelView* kernels() const { return m_kernels; }
    QTabWidget* bottomTabs() const { return m_tabs; }
    CompareDialog* compareDialog() const { return m_compare; }
    QLineEdit* searchBox() const { return m_search; }
    SourceView* sourceView() const { return m_source; } // null until a source was opened

    // Chooses a finding (row of the ranked list): selects and zooms to its evidence.
    void chooseFinding(int row);
    // Opens the file of finding.sources[site] at its line, or says in the status bar that it is not here
    // (main_window_source.cpp).
    void openSource(const analysis::Finding& finding, size_t site);

signals:
    void sessionLoaded();
    void loadFailed(const QString& title, const QString& message);
    void comparisonShown();

protected:
    void closeEvent(QCloseEvent* event) override;
    void dragEnterEvent(QDragEnterEvent* event) override;
    void dropEvent(QDropEvent* event) override;

private:
    // main_window.cpp
    void buildLayout();
    void restoreSettings();
    void saveSettings();
    void setSession(std::shared_ptr<const Session> session);
    void showFinding(const analysis::Finding* finding);
    void updateStatus();

    // main_window_actions.cpp
    void buildMenus();
    void rebuildRecentMenu();
    void openDialog(bool compare);
    void startJob(const QStringList& files, bool compare);
    void jobFinished(std::shared_ptr<const Session> session, bool compare);
    void showError(const QString& title, const QString& message);
    void showShortcuts();
    void showAbout();

    WindowOptions m_options;
    std::shared_ptr<const Session> m_session;
    TimelineView* m_timeline = nullptr;
    FindingsPanel* m_findings = nullptr;
    DetailsPane* m_details = nullptr;
    BreakdownChart* m_breakdown = nullptr;
    KernelView* m_kernels = nullptr;
    QTabWidget* m_tabs = nullptr;
    QSplitter* m_mainSplitter = nullptr;
    QSplitter* m_centreSplitter = nullptr;
    QLineEdit* m_search = nullptr;
    QLabel* m_matches = nullptr;
    QLabel* m_status = nullptr;
    QMenu* m_recentMenu = nullptr;
    LoadJob* m_job = nullptr;
    QPointer<QProgressDialog> m_progress;
    CompareDialog* m_compare = nullptr;
    SourceView* m_source = nullptr;
};

} // namespace tuneup::gui
