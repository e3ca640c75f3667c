#pragma once
// Two runs side by side: step time statistics and the median step's breakdown for A and B (a table and
// stacked bars), and the kernels whose time per step changed most, filterable and sortable.

#include "models/compare_data.h"

#include <QDialog>

class QChartView;
class QLineEdit;
class QSortFilterProxyModel;
class QTableView;
class QTableWidget;

namespace tuneup::gui {

class CompareKernelModel;

class CompareDialog : public QDialog {
    Q_OBJECT
public:
    explicit CompareDialog(QWidget* parent = nullptr);
    void setComparison(Comparison comparison);

    const Comparison& comparison() const;
    QTableWidget* summary() const { return m_summary; }
    QTableView* kernels() const { return m_kernels; }
    CompareKernelModel* kernelModel() const { return m_model; }

private:
    void fillSummary();
    void fillChart();

    CompareKernelModel* m_model;
    QSortFilterProxyModel* m_proxy;
    QTableWidget* m_summary;
    QChartView* m_chart;
    QLineEdit* m_filter;
    QTableView* m_kernels;
};

} // namespace tuneup::gui
