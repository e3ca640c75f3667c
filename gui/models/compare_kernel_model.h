#pragma once
// The kernels of a comparison (CompareResult::kernels, the top movers per step), one row per normalised
// name: time per call on each side, its ratio and verdict (slower, faster, same, added, removed — judged
// per call, as `tuneup compare` judges it), time and calls per step. Sortable through a proxy on SortRole.

#include "compare/comparison.h"

#include <QAbstractTableModel>

namespace tuneup::gui {

class CompareKernelModel : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column {
        Name,
        Class,
        Verdict,
        PerCallBase,
        PerCallNew,
        PerCallRatio,
        PerStepBase,
        PerStepNew,
        PerStepDelta,
        CallsBase,
        CallsNew,
        ColumnCount
    };
    enum Role { SortRole = Qt::UserRole + 1 };

    explicit CompareKernelModel(QObject* parent = nullptr);
    // `result` must outlive the model's use of it, or be replaced first; null empties the model.
    void setResult(const analysis::CompareResult* result);
    const analysis::KernelDelta* kernel(int row) const;

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

private:
    const analysis::CompareResult* m_result = nullptr;
};

// Microseconds for people, as the CLI's reports write them: "52.1 us", "1.30 ms".
QString microseconds(double us);

} // namespace tuneup::gui
