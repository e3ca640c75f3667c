#pragma once
// The findings of a session, ranked by estimated gain per step (largest first), one row each:
// severity, rule, gain, title. The finding behind a row comes back with finding(row).

#include "app/session.h"

#include <QAbstractTableModel>
#include <QPixmap>
#include <memory>
#include <vector>

namespace tuneup::gui {

class FindingsModel : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column { Severity, Rule, Gain, Title, ColumnCount };
    enum Role { SortRole = Qt::UserRole + 1 }; // numbers for sorting: severity, gain in ns

    explicit FindingsModel(QObject* parent = nullptr);

    void setSession(std::shared_ptr<const Session> session);
    const analysis::Finding* finding(int row) const;
    // The row of the finding, -1 when it is not in the model.
    int rowOf(const analysis::Finding* finding) const;

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

private:
    std::shared_ptr<const Session> m_session;
    std::vector<const analysis::Finding*> m_findings;
    mutable QPixmap m_dots[3];
};

// "61.2 ms (40%)", "—" when the rule gave no gain.
QString gainText(const analysis::Finding& finding);
// Colour of a severity (red, orange, blue), shared by the list and the finding's page.
QColor severityColor(analysis::Severity severity);

} // namespace tuneup::gui
