#include "views/kernel_view.h"

#include "models/kernel_table_model.h"

#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QSortFilterProxyModel>
#include <QTableView>
#include <QVBoxLayout>

namespace tuneup::gui {

KernelView::KernelView(QWidget* parent)
    : QWidget(parent)
    , m_model(new KernelTableModel(this))
    , m_proxy(new QSortFilterProxyModel(this))
    , m_filter(new QLineEdit(this))
    , m_table(new QTableView(this)) {
    m_proxy->setSourceModel(m_model);
    m_proxy->setSortRole(KernelTableModel::SortRole);
    m_proxy->setFilterKeyColumn(KernelTableModel::Name);
    m_proxy->setFilterRole(KernelTableModel::FullNameRole);
    m_proxy->setFilterCaseSensitivity(Qt::CaseInsensitive);
    m_filter->setPlaceholderText(tr("Filter kernels by name"));
    m_filter->setClearButtonEnabled(true);
    m_filter->setObjectName(QStringLiteral("kernelFilter"));
    m_table->setModel(m_proxy);
    m_table->setObjectName(QStringLiteral("kernelTable"));
    m_table->setSortingEnabled(true);
    m_table->sortByColumn(KernelTableModel::Total, Qt::DescendingOrder);
    m_table->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_table->setEditTriggers(QAbstractItemView::NoEditTriggers);
    m_table->setAlternatingRowColors(true);
    m_table->setWordWrap(false);
    m_table->verticalHeader()->hide();
    m_table->verticalHeader()->setDefaultSectionSize(m_table->fontMetrics().height() + 6);
    m_table->horizontalHeader()->setSectionResizeMode(KernelTableModel::Name, QHeaderView::Stretch);
    m_table->setToolTip(tr("Double-click a kernel to find it on the timeline"));

    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(2, 2, 2, 2);
    layout->addWidget(m_filter);
    layout->addWidget(m_table);

    connect(m_filter, &QLineEdit::textChanged, m_proxy, &QSortFilterProxyModel::setFilterFixedString);
    connect(m_table, &QTableView::doubleClicked, this, [this](const QModelIndex& index) {
        emit kernelActivated(
            m_proxy->data(index.siblingAtColumn(KernelTableModel::Name), KernelTableModel::FullNameRole).toString());
    });
}

void KernelView::setSession(std::shared_ptr<const Session> session) {
    m_model->setSession(std::move(session));
    for (int c = KernelTableModel::Class; c < KernelTableModel::ColumnCount; ++c)
        m_table->resizeColumnToContents(c);
}

} // namespace tuneup::gui
