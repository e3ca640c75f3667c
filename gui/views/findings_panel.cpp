#include "views/findings_panel.h"

#include "models/findings_model.h"
#include "views/finding_page.h"
#include "views/markdown_page.h"

#include <QDesktopServices>
#include <QHeaderView>
#include <QLabel>
#include <QScrollBar>
#include <QSplitter>
#include <QTableView>
#include <QTextBrowser>
#include <QVBoxLayout>

namespace tuneup::gui {

FindingsPanel::FindingsPanel(QWidget* parent)
    : QWidget(parent)
    , m_model(new FindingsModel(this))
    , m_header(new QLabel(this))
    , m_table(new QTableView(this))
    , m_page(new QTextBrowser(this))
    , m_splitter(new QSplitter(Qt::Vertical, this)) {
    m_table->setModel(m_model);
    m_table->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_table->setSelectionMode(QAbstractItemView::SingleSelection);
    m_table->setEditTriggers(QAbstractItemView::NoEditTriggers);
    m_table->setWordWrap(false);
    m_table->setAlternatingRowColors(true);
    m_table->verticalHeader()->hide();
    m_table->verticalHeader()->setDefaultSectionSize(m_table->fontMetrics().height() + 6);
    m_table->horizontalHeader()->setStretchLastSection(true);
    m_table->horizontalHeader()->setHighlightSections(false);
    m_table->setObjectName(QStringLiteral("findingsTable"));
    // Links are handled here (linkActivated): the page's own source links are no URL a browser could open.
    m_page->setOpenLinks(false);
    m_page->setObjectName(QStringLiteral("findingPage"));
    m_header->setObjectName(QStringLiteral("findingsHeader"));
    m_header->setContentsMargins(4, 2, 4, 2);

    m_splitter->addWidget(m_table);
    m_splitter->addWidget(m_page);
    m_splitter->setStretchFactor(0, 1);
    m_splitter->setStretchFactor(1, 2);
    m_splitter->setChildrenCollapsible(false);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->setSpacing(2);
    layout->addWidget(m_header);
    layout->addWidget(m_splitter);

    connect(
        m_table->selectionModel(), &QItemSelectionModel::currentRowChanged, this, [this](const QModelIndex& current) {
            showPage();
            emit findingChosen(m_model->finding(current.row()));
        });
    connect(m_page, &QTextBrowser::anchorClicked, this, &FindingsPanel::linkActivated);
}

void FindingsPanel::setSession(std::shared_ptr<const Session> session) {
    m_session = std::move(session);
    m_model->setSession(m_session);
    const int n = m_model->rowCount();
    m_header->setText(n ? tr("<b>Findings</b> (%1), largest gain first").arg(n) : tr("<b>Findings</b>: none"));
    m_table->resizeColumnsToContents();
    showPage();
}

void FindingsPanel::chooseRow(int row) {
    if (row < 0 || row >= m_model->rowCount()) {
        m_table->selectionModel()->clear();
        m_table->setCurrentIndex(QModelIndex());
        return;
    }
    m_table->selectRow(row);
    m_table->setCurrentIndex(m_model->index(row, FindingsModel::Title));
}

int FindingsPanel::chosenRow() const {
    const QModelIndex current = m_table->currentIndex();
    return current.isValid() ? current.row() : -1;
}

const analysis::Finding* FindingsPanel::chosenFinding() const {
    return m_model->finding(chosenRow());
}

void FindingsPanel::showPage() {
    if (!m_session) {
        m_page->clear();
        return;
    }
    const analysis::Finding* f = chosenFinding();
    showMarkdown(*m_page, f ? findingMarkdown(*f, *m_session) : overviewMarkdown(*m_session));
    m_page->verticalScrollBar()->setValue(0);
}

void FindingsPanel::linkActivated(const QUrl& url) {
    if (const auto site = sourceLinkIndex(url)) {
        const analysis::Finding* f = chosenFinding();
        if (f && *site < f->sources.size()) emit sourceActivated(*f, *site);
        return;
    }
    // What setOpenExternalLinks did before: web links open in the browser. A link within the page (a
    // rule doc's "#section") scrolls to it; relative links to files of tuneup's sources lead nowhere here.
    if (url.scheme() == QLatin1String("http") || url.scheme() == QLatin1String("https")
        || url.scheme() == QLatin1String("mailto"))
        QDesktopServices::openUrl(url);
    else if (url.scheme().isEmpty() && url.path().isEmpty() && url.hasFragment())
        m_page->scrollToAnchor(url.fragment());
}

} // namespace tuneup::gui
