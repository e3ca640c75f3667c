#pragma once
// The kernel deltas of a comparison, one row per kernel name: time per step in run A and in run B,
// the change and its ratio. Sortable through a proxy on SortRole.

#include "models/compare_data.h"

#include <QAbstractTableModel>

namespace tuneup::gui {

class CompareKernelModel : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column { Name, Class, A, B, Delta, Change, CountA, CountB, ColumnCount };
    enum Role { SortRole = Qt::UserRole + 1 };

    explicit CompareKernelModel(QObject* parent = nullptr);
    void setComparison(Comparison comparison);
    const Comparison& comparison() const { return m_comparison; }

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

private:
    Comparison m_comparison;
};

// "+12.5%", "new", "gone"
QString changeText(int64_t a, int64_t b);

} // namespace tuneup::gui
