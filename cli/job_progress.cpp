#include "job_progress.h"

#include "units.h"

#include <cctype>
#include <cstdio>
#include <unistd.h>

namespace tuneup::cli {

namespace {
// Shown only when reading takes longer than this: small inputs stay quiet.
constexpr auto kQuietFor = std::chrono::milliseconds(500);
constexpr auto kEvery = std::chrono::milliseconds(100);
} // namespace

JobProgressLine::JobProgressLine()
    : m_terminal(isatty(STDERR_FILENO))
    , m_start(std::chrono::steady_clock::now()) {
}

JobProgressLine::~JobProgressLine() {
    clear();
}

void JobProgressLine::clear() {
    if (m_shown) fprintf(stderr, "\r\033[K");
    m_shown = false;
}

void JobProgressLine::update(const analysis::JobProgress& p) {
    if (!m_terminal) return;
    const auto now = std::chrono::steady_clock::now();
    if (now - m_start < kQuietFor || (m_shown && now - m_last < kEvery)) return;
    m_last = now;
    m_shown = true;
    std::string phase = p.phase;
    if (!phase.empty()) phase[0] = char(tolower(static_cast<unsigned char>(phase[0])));
    std::string line = "tuneup: " + phase;
    if (p.files > 1) line += " (" + std::to_string(p.filesDone) + " done)";
    line += ": " + formatBytes(int64_t(p.bytesRead));
    if (p.bytesExpected > 0) line += " of " + formatBytes(int64_t(p.bytesExpected));
    fprintf(stderr, "\r\033[K%s", line.c_str());
}

} // namespace tuneup::cli
