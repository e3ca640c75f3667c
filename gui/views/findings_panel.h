#pragma once
// The findings list, ranked by gain, above the chosen finding's page (evidence, fix, rule doc). With
// no finding chosen the page is the run's overview. Activating a "Where in the code" link on the page
// emits sourceActivated; the window opens the file.

#include "app/session.h"

#include <QWidget>

class QLabel;
class QSplitter;
class QTableView;
class QTextBrowser;
class QUrl;

namespace tuneup::gui {

class FindingsModel;

class FindingsPanel : public QWidget {
    Q_OBJECT
public:
    explicit FindingsPanel(QWidget* parent = nullptr);

    void setSession(std::shared_ptr<const Session> session);
    // Chooses the finding in `row` (of the ranked list), -1 for none; emits findingChosen.
    void chooseRow(int row);
    int chosenRow() const;
    const analysis::Finding* chosenFinding() const;

    FindingsModel* model() const { return m_model; }
    QTableView* table() const { return m_table; }
    QTextBrowser* page() const { return m_page; }
    QSplitter* splitter() const { return m_splitter; }

signals:
    void findingChosen(const analysis::Finding* finding); // null: none
    // A link to finding.sources[site] was activated (clicked, or Enter on it).
    void sourceActivated(const analysis::Finding& finding, size_t site);

private:
    void showPage();
    void linkActivated(const QUrl& url);

    std::shared_ptr<const Session> m_session;
    FindingsModel* m_model;
    QLabel* m_header;
    QTableView* m_table;
    QTextBrowser* m_page;
    QSplitter* m_splitter;
};

} // namespace tuneup::gui
