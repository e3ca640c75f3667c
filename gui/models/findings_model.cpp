#include "models/findings_model.h"

#include "timeline/time_mapping.h"

#include <QColor>
#include <QPainter>
#include <QPixmap>
#include <algorithm>

namespace tuneup::gui {

using analysis::Finding;
using analysis::Severity;

QString gainText(const Finding& finding) {
    if (!finding.gain || finding.gain->perStepNs <= 0) return QStringLiteral("—");
    QString text = QString::fromStdString(formatDuration(finding.gain->perStepNs));
    if (finding.gain->stepShare > 0)
        text += QStringLiteral(" (%1%)").arg(
            finding.gain->stepShare * 100, 0, 'f', finding.gain->stepShare < 0.1 ? 1 : 0);
    return text;
}

QColor severityColor(Severity severity) {
    switch (severity) {
    case Severity::Error:
        return QColor(0xd6, 0x27, 0x28);
    case Severity::Warning:
        return QColor(0xf2, 0x8e, 0x2b);
    case Severity::Info:
        return QColor(0x4e, 0x79, 0xa7);
    }
    return Qt::gray;
}

namespace {

// A dot of the severity's colour.
QPixmap severityDot(Severity severity) {
    QPixmap dot(12, 12);
    dot.fill(Qt::transparent);
    QPainter p(&dot);
    p.setRenderHint(QPainter::Antialiasing);
    p.setPen(Qt::NoPen);
    p.setBrush(severityColor(severity));
    p.drawEllipse(1, 1, 10, 10);
    return dot;
}

} // namespace

FindingsModel::FindingsModel(QObject* parent)
    : QAbstractTableModel(parent) {
}

void FindingsModel::setSession(std::shared_ptr<const Session> session) {
    beginResetModel();
    m_session = std::move(session);
    m_findings = m_session ? m_session->report().ranked() : std::vector<const Finding*>();
    endResetModel();
}

const Finding* FindingsModel::finding(int row) const {
    return row >= 0 && size_t(row) < m_findings.size() ? m_findings[size_t(row)] : nullptr;
}

int FindingsModel::rowOf(const Finding* finding) const {
    const auto it = std::find(m_findings.begin(), m_findings.end(), finding);
    return it == m_findings.end() ? -1 : int(it - m_findings.begin());
}

int FindingsModel::rowCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : int(m_findings.size());
}

int FindingsModel::columnCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : ColumnCount;
}

QVariant FindingsModel::data(const QModelIndex& index, int role) const {
    const Finding* f = index.isValid() ? finding(index.row()) : nullptr;
    if (!f) return {};
    const bool severalRanks = m_session && m_session->rankCount() > 1;
    switch (role) {
    case Qt::DisplayRole:
        switch (index.column()) {
        case Severity:
            return QString::fromStdString(std::string(analysis::severityName(f->severity)));
        case Rule:
            return QString::fromStdString(f->ruleId)
                + (severalRanks && f->rank >= 0 ? QStringLiteral(" (rank %1)").arg(f->rank) : QString());
        case Gain:
            return gainText(*f);
        case Title:
            return QString::fromStdString(f->title);
        }
        break;
    case SortRole:
        switch (index.column()) {
        case Severity:
            return int(f->severity);
        case Gain:
            return qlonglong(f->gain ? f->gain->perStepNs : 0);
        default:
            return data(index, Qt::DisplayRole);
        }
    case Qt::ToolTipRole:
        return QStringLiteral("<b>%1</b><p>%2</p>")
            .arg(QString::fromStdString(f->title).toHtmlEscaped(), QString::fromStdString(f->detail).toHtmlEscaped());
    case Qt::DecorationRole:
        if (index.column() == Severity) {
            // Made once per model and severity, on the GUI thread (pixmaps must not outlive the app).
            QPixmap& dot = m_dots[std::clamp(int(f->severity), 0, 2)];
            if (dot.isNull()) dot = severityDot(f->severity);
            return dot;
        }
        break;
    case Qt::TextAlignmentRole:
        if (index.column() == Gain) return int(Qt::AlignRight | Qt::AlignVCenter);
        break;
    default:
        break;
    }
    return {};
}

QVariant FindingsModel::headerData(int section, Qt::Orientation orientation, int role) const {
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole) return {};
    switch (section) {
    case Severity:
        return tr("Severity");
    case Rule:
        return tr("Rule");
    case Gain:
        return tr("Gain / step");
    case Title:
        return tr("Finding");
    }
    return {};
}

} // namespace tuneup::gui
