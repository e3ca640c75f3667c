#include "app/load_job.h"

#include "app/error_message.h"

#include <chrono>

namespace tuneup::gui {

LoadJob::LoadJob(LoadRequest request, QObject* parent)
    : QObject(parent)
    , m_request(std::move(request)) {
}

LoadJob::~LoadJob() {
    m_cancel = true;
    if (m_thread.joinable()) m_thread.join();
}

void LoadJob::start() {
    if (m_running || m_thread.joinable()) return;
    m_running = true;
    m_thread = std::thread([this] { run(); });
}

void LoadJob::cancel() {
    m_cancel = true;
}

void LoadJob::run() {
    // Progress at most every 50 ms: the importers report per chunk, the GUI need not repaint per chunk.
    auto last = std::chrono::steady_clock::now() - std::chrono::seconds(1);
    LoadProgress progress;
    progress.cancel = &m_cancel;
    progress.report = [this, &last](const std::string& phase, double fraction) {
        const auto now = std::chrono::steady_clock::now();
        if (now - last < std::chrono::milliseconds(50) && fraction < 1.0) return;
        last = now;
        const QString text = QString::fromStdString(phase);
        // Queued to this object: dropped by Qt if the job is destroyed first.
        QMetaObject::invokeMethod(
            this, [this, text, fraction] { emit this->progress(text, fraction); }, Qt::QueuedConnection);
    };
    std::shared_ptr<const Session> session;
    ErrorMessage error;
    bool wasCancelled = false;
    try {
        session = loadSession(m_request, progress);
    } catch (const LoadCancelled&) {
        wasCancelled = true;
    } catch (...) {
        if (m_cancel) // an importer's thread may wrap our cancellation in its own error
            wasCancelled = true;
        else
            error = describeCurrentException(m_request.files);
    }
    if (m_cancel) wasCancelled = true;
    QMetaObject::invokeMethod(
        this,
        [this, session, error, wasCancelled] {
            m_running = false;
            if (m_thread.joinable())
                m_thread.join(); // it has finished: this runs after run() returned... or is about to
            if (wasCancelled)
                emit cancelled();
            else if (session)
                emit finished(session);
            else
                emit failed(error.title, error.text + (error.advice.isEmpty() ? QString() : "\n\n" + error.advice));
        },
        Qt::QueuedConnection);
}

} // namespace tuneup::gui
