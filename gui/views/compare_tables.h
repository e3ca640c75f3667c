#pragma once
// The compare dialog's tables and chart, each filled from a CompareResult as the CLI's reports write it:
// no number here is computed again, only laid out.

#include "compare/comparison.h"

class QChartView;
class QTableWidget;

namespace tuneup::gui {

// Step time (median, ratio, interval, threshold, steps, rank test) and the breakdown per step, BASE
// and NEW side by side with the change.
void fillStepTable(QTableWidget* table, const analysis::CompareResult& r);
// The breakdown per measured step of both sides as stacked bars (a fresh chart; the previous is freed).
void fillBreakdownChart(QChartView* view, const analysis::CompareResult& r);
// Findings that appeared, were resolved or persist, one a row.
void fillFindingsTable(QTableWidget* table, const analysis::CompareResult& r);
// Each environment fact either side records and each setting that changed, changes marked.
void fillEnvironmentTable(QTableWidget* table, const analysis::CompareResult& r);
// Empties them all (runs that cannot be compared).
void clearCompareTables(QTableWidget* step, QChartView* chart, QTableWidget* findings, QTableWidget* environment);

} // namespace tuneup::gui
