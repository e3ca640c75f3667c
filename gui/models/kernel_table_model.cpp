#include "models/kernel_table_model.h"

#include "timeline/time_mapping.h"

namespace tuneup::gui {

KernelTableModel::KernelTableModel(QObject* parent)
    : QAbstractTableModel(parent) {
}

void KernelTableModel::setSession(std::shared_ptr<const Session> session) {
    beginResetModel();
    m_session = std::move(session);
    endResetModel();
}

const KernelRow* KernelTableModel::kernel(int row) const {
    if (!m_session || row < 0 || size_t(row) >= m_session->kernels.size()) return nullptr;
    return &m_session->kernels[size_t(row)];
}

int KernelTableModel::rowCount(const QModelIndex& parent) const {
    return parent.isValid() || !m_session ? 0 : int(m_session->kernels.size());
}

int KernelTableModel::columnCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : ColumnCount;
}

QVariant KernelTableModel::data(const QModelIndex& index, int role) const {
    const KernelRow* k = index.isValid() ? kernel(index.row()) : nullptr;
    if (!k) return {};
    const double share = m_session->kernelTotalNs > 0 ? double(k->totalNs) / double(m_session->kernelTotalNs) : 0.0;
    auto duration = [](int64_t ns) { return QString::fromStdString(formatDuration(ns)); };
    switch (role) {
    case Qt::DisplayRole:
        switch (index.column()) {
        case Name:
            return QString::fromStdString(k->shortName);
        case Class:
            return QString::fromStdString(std::string(analysis::kernelClassName(k->kernelClass)));
        case Count:
            return QString::number(k->count);
        case Total:
            return duration(k->totalNs);
        case Mean:
            return duration(k->meanNs());
        case Min:
            return duration(k->minNs);
        case Max:
            return duration(k->maxNs);
        case Share:
            return QStringLiteral("%1%").arg(share * 100, 0, 'f', 1);
        }
        break;
    case SortRole:
        switch (index.column()) {
        case Name:
            return QString::fromStdString(k->shortName);
        case Class:
            return QString::fromStdString(std::string(analysis::kernelClassName(k->kernelClass)));
        case Count:
            return qlonglong(k->count);
        case Total:
            return qlonglong(k->totalNs);
        case Mean:
            return qlonglong(k->meanNs());
        case Min:
            return qlonglong(k->minNs);
        case Max:
            return qlonglong(k->maxNs);
        case Share:
            return share;
        }
        break;
    case FullNameRole:
        return QString::fromStdString(k->name);
    case Qt::ToolTipRole:
        if (index.column() == Name) return QString::fromStdString(k->name);
        break;
    case Qt::TextAlignmentRole:
        if (index.column() >= Count) return int(Qt::AlignRight | Qt::AlignVCenter);
        break;
    default:
        break;
    }
    return {};
}

QVariant KernelTableModel::headerData(int section, Qt::Orientation orientation, int role) const {
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole) return {};
    switch (section) {
    case Name:
        return tr("Kernel");
    case Class:
        return tr("Class");
    case Count:
        return tr("Count");
    case Total:
        return tr("Total");
    case Mean:
        return tr("Mean");
    case Min:
        return tr("Min");
    case Max:
        return tr("Max");
    case Share:
        return tr("Share");
    }
    return {};
}

} // namespace tuneup::gui
