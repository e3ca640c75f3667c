#pragma once
// Two runs compared as `tuneup compare BASE NEW` compares them (models/compare_data.h): the verdict in
// words and why — or, when the environment changed, what changed and a way to compare anyway — then the
// step time and the breakdown per step side by side (a table and stacked bars), the kernels per call and
// per step with their verdicts, the findings that appeared, were resolved or persist, and the environment
// and settings of both sides.

#include "models/compare_data.h"

#include <QDialog>

class QChartView;
class QCheckBox;
class QLabel;
class QLineEdit;
class QSortFilterProxyModel;
class QTabWidget;
class QTableView;
class QTableWidget;

namespace tuneup::gui {

class CompareKernelModel;

class CompareDialog : public QDialog {
    Q_OBJECT
public:
    explicit CompareDialog(QWidget* parent = nullptr);
    void setComparison(Comparison comparison);
    // Judge the same runs again, comparing them even though their environment changed (--allow-env-change).
    void setAllowEnvChange(bool allow);

    const Comparison& comparison() const { return m_comparison; }
    QLabel* verdict() const { return m_verdict; }
    QLabel* why() const { return m_why; }
    QCheckBox* compareAnyway() const { return m_anyway; }
    QTableWidget* summary() const { return m_summary; }
    QTableWidget* findings() const { return m_findings; }
    QTableWidget* environment() const { return m_environment; }
    QTableView* kernels() const { return m_kernels; }
    CompareKernelModel* kernelModel() const { return m_model; }
    QTabWidget* tabs() const { return m_tabs; }

private:
    void refresh();
    void fillVerdict();

    Comparison m_comparison;
    CompareKernelModel* m_model;
    QSortFilterProxyModel* m_proxy;
    QLabel* m_verdict;
    QLabel* m_why;
    QCheckBox* m_anyway;
    QTabWidget* m_tabs;
    QTableWidget* m_summary;
    QChartView* m_chart;
    QLineEdit* m_filter;
    QTableView* m_kernels;
    QTableWidget* m_findings;
    QTableWidget* m_environment;
};

} // namespace tuneup::gui
