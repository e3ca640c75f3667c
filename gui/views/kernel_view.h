#pragma once
// The kernel table with its filter box: sortable by any column, filtered by name as you type.
// Double-clicking a kernel searches for it on the timeline.

#include "app/session.h"

#include <QWidget>

class QLineEdit;
class QSortFilterProxyModel;
class QTableView;

namespace tuneup::gui {

class KernelTableModel;

class KernelView : public QWidget {
    Q_OBJECT
public:
    explicit KernelView(QWidget* parent = nullptr);
    void setSession(std::shared_ptr<const Session> session);

    KernelTableModel* model() const { return m_model; }
    QSortFilterProxyModel* proxy() const { return m_proxy; }
    QLineEdit* filterBox() const { return m_filter; }
    QTableView* table() const { return m_table; }

signals:
    void kernelActivated(const QString& fullName);

private:
    KernelTableModel* m_model;
    QSortFilterProxyModel* m_proxy;
    QLineEdit* m_filter;
    QTableView* m_table;
};

} // namespace tuneup::gui
