#include "views/details_pane.h"

#include "timeline/event_info.h"

namespace tuneup::gui {

DetailsPane::DetailsPane(QWidget* parent)
    : QTextBrowser(parent) {
    setObjectName(QStringLiteral("detailsPane"));
    showDetails({});
}

void DetailsPane::setSession(std::shared_ptr<const Session> session) {
    m_session = std::move(session);
    showDetails({});
}

void DetailsPane::showDetails(const EventId& id) {
    const EventInfo info = m_session && id.valid() ? describeEvent(m_session->timeline, id) : EventInfo {};
    if (!info.valid()) {
        setHtml(tr("<p style='color:#666'>Click an event on the timeline to see it here. Hover for a summary; "
                   "double-click zooms to it.</p>"));
        return;
    }
    auto row = [](const QString& label, const QString& value) {
        return QStringLiteral("<tr><td style='color:#555;padding-right:12px'>%1</td><td>%2</td></tr>")
            .arg(label.toHtmlEscaped(), value.toHtmlEscaped());
    };
    const int64_t origin = m_session->originNs();
    QString html = QStringLiteral("<p><b>%1</b><br><span style='color:#555'>%2</span></p><table>")
                       .arg(QString::fromStdString(info.name).toHtmlEscaped(), QString::fromStdString(info.kind));
    html += row(tr("start"), QStringLiteral("+") + QString::fromStdString(formatDuration(info.span.startNs - origin)));
    html += row(tr("duration"), QString::fromStdString(formatDuration(info.span.duration())));
    if (!info.track.empty()) html += row(tr("track"), QString::fromStdString(info.track));
    for (const auto& [label, value] : info.fields)
        html += row(QString::fromStdString(label), QString::fromStdString(value));
    html += QStringLiteral("</table>");
    setHtml(html);
}

} // namespace tuneup::gui
