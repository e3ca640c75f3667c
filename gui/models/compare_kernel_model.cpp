#include "models/compare_kernel_model.h"

#include "timeline/time_mapping.h"

#include <QColor>

namespace tuneup::gui {

QString changeText(int64_t a, int64_t b) {
    if (a == 0 && b == 0) return QStringLiteral("—");
    if (a == 0) return QStringLiteral("new");
    if (b == 0) return QStringLiteral("gone");
    const double pct = (double(b) / double(a) - 1.0) * 100.0;
    return QStringLiteral("%1%2%").arg(pct >= 0 ? "+" : "").arg(pct, 0, 'f', std::abs(pct) < 10 ? 1 : 0);
}

namespace {
QString signedDuration(int64_t ns) {
    return QString::fromStdString((ns > 0 ? "+" : ns < 0 ? "−" : "") + formatDuration(ns < 0 ? -ns : ns));
}
} // namespace

CompareKernelModel::CompareKernelModel(QObject* parent)
    : QAbstractTableModel(parent) {
}

void CompareKernelModel::setComparison(Comparison comparison) {
    beginResetModel();
    m_comparison = std::move(comparison);
    endResetModel();
}

int CompareKernelModel::rowCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : int(m_comparison.kernels.size());
}

int CompareKernelModel::columnCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : ColumnCount;
}

QVariant CompareKernelModel::data(const QModelIndex& index, int role) const {
    if (!index.isValid() || index.row() < 0 || size_t(index.row()) >= m_comparison.kernels.size()) return {};
    const KernelDelta& k = m_comparison.kernels[size_t(index.row())];
    switch (role) {
    case Qt::DisplayRole:
        switch (index.column()) {
        case Name:
            return QString::fromStdString(k.shortName);
        case Class:
            return QString::fromStdString(std::string(analysis::kernelClassName(k.kernelClass)));
        case A:
            return QString::fromStdString(formatDuration(k.aNs));
        case B:
            return QString::fromStdString(formatDuration(k.bNs));
        case Delta:
            return signedDuration(k.deltaNs());
        case Change:
            return changeText(k.aNs, k.bNs);
        case CountA:
            return QString::number(k.aCount);
        case CountB:
            return QString::number(k.bCount);
        }
        break;
    case SortRole:
        switch (index.column()) {
        case Name:
            return QString::fromStdString(k.shortName);
        case Class:
            return QString::fromStdString(std::string(analysis::kernelClassName(k.kernelClass)));
        case A:
            return qlonglong(k.aNs);
        case B:
            return qlonglong(k.bNs);
        case Delta:
            return qlonglong(k.deltaNs());
        case Change:
            return k.aNs > 0 ? k.ratio() : 1e9;
        case CountA:
            return qlonglong(k.aCount);
        case CountB:
            return qlonglong(k.bCount);
        }
        break;
    case Qt::ForegroundRole:
        if (index.column() == Delta || index.column() == Change) {
            // Slower in B is red, faster green; changes under 1% stay neutral.
            if (k.aNs > 0 && std::abs(k.ratio() - 1.0) < 0.01) return {};
            return k.deltaNs() > 0 ? QColor(0xc0, 0x30, 0x30) : QColor(0x2a, 0x8a, 0x3a);
        }
        break;
    case Qt::ToolTipRole:
        if (index.column() == Name) return QString::fromStdString(k.name);
        break;
    case Qt::TextAlignmentRole:
        if (index.column() >= A) return int(Qt::AlignRight | Qt::AlignVCenter);
        break;
    default:
        break;
    }
    return {};
}

QVariant CompareKernelModel::headerData(int section, Qt::Orientation orientation, int role) const {
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole) return {};
    const QString unit = m_comparison.perStep ? tr(" / step") : QString();
    switch (section) {
    case Name:
        return tr("Kernel");
    case Class:
        return tr("Class");
    case A:
        return tr("A") + unit;
    case B:
        return tr("B") + unit;
    case Delta:
        return tr("Δ");
    case Change:
        return tr("Change");
    case CountA:
        return tr("Count A") + unit;
    case CountB:
        return tr("Count B") + unit;
    }
    return {};
}

} // namespace tuneup::gui
