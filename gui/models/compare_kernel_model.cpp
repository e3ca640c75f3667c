#include "models/compare_kernel_model.h"

#include "compare/compare_report.h"
#include "units.h"

#include <QColor>
#include <cmath>

namespace tuneup::gui {

using namespace analysis;

QString microseconds(double us) {
    return QString::fromStdString(formatDuration(int64_t(std::llround(us * 1e3))));
}

namespace {

QString text(std::string_view s) {
    return QString::fromUtf8(s.data(), qsizetype(s.size()));
}

QString signedMicroseconds(double us) {
    return (us > 0 ? QStringLiteral("+") : us < 0 ? QStringLiteral("−") : QString()) + microseconds(std::abs(us));
}

QString callsText(double calls) {
    return QString::number(calls, 'f', calls == std::floor(calls) ? 0 : 1);
}

} // namespace

CompareKernelModel::CompareKernelModel(QObject* parent)
    : QAbstractTableModel(parent) {
}

void CompareKernelModel::setResult(const CompareResult* result) {
    beginResetModel();
    m_result = result;
    endResetModel();
}

const KernelDelta* CompareKernelModel::kernel(int row) const {
    if (!m_result || row < 0 || size_t(row) >= m_result->kernels.size()) return nullptr;
    return &m_result->kernels[size_t(row)];
}

int CompareKernelModel::rowCount(const QModelIndex& parent) const {
    return parent.isValid() || !m_result ? 0 : int(m_result->kernels.size());
}

int CompareKernelModel::columnCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : ColumnCount;
}

QVariant CompareKernelModel::data(const QModelIndex& index, int role) const {
    const KernelDelta* k = kernel(index.row());
    if (!index.isValid() || !k) return {};
    const bool both = k->baseCalls && k->newCalls;
    switch (role) {
    case Qt::DisplayRole:
        switch (index.column()) {
        case Name:
            return QString::fromStdString(k->name);
        case Class:
            return text(kernelClassName(k->kernelClass));
        case Verdict:
            return text(kernelChangeName(k->change));
        case PerCallBase:
            return k->baseCalls ? microseconds(k->basePerCallUs) : QStringLiteral("—");
        case PerCallNew:
            return k->newCalls ? microseconds(k->newPerCallUs) : QStringLiteral("—");
        case PerCallRatio:
            return k->perCallRatio ? QString::fromStdString(ratioText(*k->perCallRatio)) : QStringLiteral("—");
        case PerStepBase:
            return microseconds(k->basePerStepUs);
        case PerStepNew:
            return microseconds(k->newPerStepUs);
        case PerStepDelta:
            return signedMicroseconds(k->newPerStepUs - k->basePerStepUs);
        case CallsBase:
            return callsText(k->baseCallsPerStep);
        case CallsNew:
            return callsText(k->newCallsPerStep);
        }
        break;
    case SortRole:
        switch (index.column()) {
        case Name:
        case Class:
        case Verdict:
            return data(index, Qt::DisplayRole);
        case PerCallBase:
            return k->basePerCallUs;
        case PerCallNew:
            return k->newPerCallUs;
        case PerCallRatio:
            return k->perCallRatio.value_or(both ? 1.0 : 1e9);
        case PerStepBase:
            return k->basePerStepUs;
        case PerStepNew:
            return k->newPerStepUs;
        case PerStepDelta:
            return k->newPerStepUs - k->basePerStepUs;
        case CallsBase:
            return k->baseCallsPerStep;
        case CallsNew:
            return k->newCallsPerStep;
        }
        break;
    case Qt::ForegroundRole:
        // The kernel's own verdict colours it: slower red, faster green; a move within the noise stays neutral.
        if (index.column() == Verdict || index.column() == PerCallRatio) {
            if (k->change == KernelChange::Slower) return QColor(0xc0, 0x30, 0x30);
            if (k->change == KernelChange::Faster) return QColor(0x2a, 0x8a, 0x3a);
        }
        break;
    case Qt::ToolTipRole:
        if (index.column() == Name) return QString::fromStdString(k->name);
        if (index.column() == Verdict && k->pValue)
            return tr("per call, against the step verdict's threshold; rank test over the calls p = %1")
                .arg(*k->pValue, 0, 'g', 3);
        break;
    case Qt::TextAlignmentRole:
        if (index.column() >= PerCallBase) return int(Qt::AlignRight | Qt::AlignVCenter);
        break;
    default:
        break;
    }
    return {};
}

QVariant CompareKernelModel::headerData(int section, Qt::Orientation orientation, int role) const {
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole) return {};
    switch (section) {
    case Name:
        return tr("Kernel");
    case Class:
        return tr("Class");
    case Verdict:
        return tr("Per call");
    case PerCallBase:
        return tr("BASE / call");
    case PerCallNew:
        return tr("NEW / call");
    case PerCallRatio:
        return tr("Ratio / call");
    case PerStepBase:
        return tr("BASE / step");
    case PerStepNew:
        return tr("NEW / step");
    case PerStepDelta:
        return tr("Δ / step");
    case CallsBase:
        return tr("Calls BASE / step");
    case CallsNew:
        return tr("Calls NEW / step");
    }
    return {};
}

} // namespace tuneup::gui
