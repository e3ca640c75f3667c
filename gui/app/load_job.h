#pragma once
// Loads a session on its own thread and reports back on the GUI thread: progress, then either the
// session or why it failed. Cancelling stops the import at its next progress report (or between
// phases) and drops the result; destroying the job cancels it and waits for its thread (hotspot's
// JobTracker idea: results of a job nobody waits for are never delivered).

#include "app/session.h"

#include <QObject>
#include <QString>
#include <atomic>
#include <memory>
#include <thread>

namespace tuneup::gui {

class LoadJob : public QObject {
    Q_OBJECT
public:
    explicit LoadJob(LoadRequest request, QObject* parent = nullptr);
    ~LoadJob() override;

    void start();
    void cancel();
    bool isRunning() const { return m_running; }
    const LoadRequest& request() const { return m_request; }

signals:
    void progress(const QString& phase, double fraction);
    void finished(std::shared_ptr<const tuneup::gui::Session> session);
    // title: one line ("Cannot open run.db"); message: what is wrong, where, what to do.
    void failed(const QString& title, const QString& message);
    void cancelled();

private:
    void run();

    LoadRequest m_request;
    std::atomic<bool> m_cancel { false };
    bool m_running = false;
    std::thread m_thread;
};

} // namespace tuneup::gui
