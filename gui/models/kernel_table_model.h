#pragma once
// The kernel table: one row per kernel name over the job (count, total, mean, min, max, share of all
// kernel time), for a QSortFilterProxyModel that sorts on SortRole and filters on the name column.

#include "app/session.h"

#include <QAbstractTableModel>
#include <memory>

namespace tuneup::gui {

class KernelTableModel : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column { Name, Class, Count, Total, Mean, Min, Max, Share, ColumnCount };
    enum Role { SortRole = Qt::UserRole + 1, FullNameRole };

    explicit KernelTableModel(QObject* parent = nullptr);

    void setSession(std::shared_ptr<const Session> session);
    const KernelRow* kernel(int row) const;

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

private:
    std::shared_ptr<const Session> m_session;
};

} // namespace tuneup::gui
