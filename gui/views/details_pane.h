#pragma once
// The selected event in full: name, kind, start (from the trace's start), duration, track, and the
// fields of its table that matter (timeline/event_info.h).

#include "app/session.h"

#include <QTextBrowser>

namespace tuneup::gui {

class DetailsPane : public QTextBrowser {
    Q_OBJECT
public:
    explicit DetailsPane(QWidget* parent = nullptr);
    void setSession(std::shared_ptr<const Session> session);
    void showDetails(const EventId& id); // invalid: the hint

private:
    std::shared_ptr<const Session> m_session;
};

} // namespace tuneup::gui
