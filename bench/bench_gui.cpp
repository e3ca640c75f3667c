// tuneup-gui's speed, offscreen: for each file, the time from asking to open it to the timeline's first
// paint (import, advice, layout, the views, the paint), then the repaint time of the timeline over a
// scripted zoom and pan sequence (zoom in around points, pan, zoom out, fit, search), as a user drives it.
//   bench_gui [--width W] [--height H] [--screenshots DIR] FILE...
// Figures and the commands that produce them: docs/performance.md ("GUI").

#include "app/main_window.h"
#include "timeline/timeline_view.h"

#include <QApplication>
#include <QElapsedTimer>
#include <QSignalSpy>
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <random>
#include <vector>

using namespace tuneup::gui;

namespace {

struct Stats {
    double median = 0, p95 = 0, max = 0;
};

Stats stats(std::vector<double> v) {
    Stats s;
    if (v.empty()) return s;
    std::sort(v.begin(), v.end());
    s.median = v[v.size() / 2];
    s.p95 = v[std::min(v.size() - 1, size_t(double(v.size()) * 0.95))];
    s.max = v.back();
    return s;
}

// Repaints now (not at the next event loop turn) and returns the wall time of the repaint.
double repaintMs(TimelineView& t) {
    QElapsedTimer timer;
    timer.start();
    t.repaint();
    return double(timer.nsecsElapsed()) / 1e6;
}

// The scripted session: from the whole trace down to a few kernels in 24 zoom steps around random
// points, 40 pans of 15% of the width, back out in 24 steps, then the same with a search active.
std::vector<double> zoomPanSequence(TimelineView& t, double* searchMs) {
    std::vector<double> times;
    std::mt19937 random(11);
    auto x = [&] { return std::uniform_real_distribution<double>(0.1, 0.9)(random) * t.mapping().widthPx(); };
    for (int pass = 0; pass < 2; ++pass) {
        t.fitAll();
        times.push_back(repaintMs(t));
        for (int i = 0; i < 24; ++i) {
            t.setVisibleRange(zoomAround(t.mapping(), x(), 0.6));
            times.push_back(repaintMs(t));
        }
        for (int i = 0; i < 40; ++i) {
            t.panBy(i % 10 < 5 ? 0.15 : -0.15);
            times.push_back(repaintMs(t));
        }
        for (int i = 0; i < 24; ++i) {
            t.setVisibleRange(zoomAround(t.mapping(), x(), 1 / 0.6));
            times.push_back(repaintMs(t));
        }
        if (pass == 0) { // a search visits every event once: timed apart from the repaints
            QElapsedTimer timer;
            timer.start();
            t.setFilter(QStringLiteral("sgemm"));
            *searchMs = double(timer.nsecsElapsed()) / 1e6;
        }
    }
    t.setFilter(QString());
    return times;
}

// The load's phases without a window: import, advice, timeline layout, kernel table.
void printPhases(const QString& file) {
    LoadRequest request;
    request.files = { file.toStdString() };
    std::vector<std::pair<std::string, double>> phases;
    QElapsedTimer timer;
    LoadProgress progress;
    progress.report = [&](const std::string& phase, double) {
        const double now = double(timer.nsecsElapsed()) / 1e9;
        if (phases.empty() || phases.back().first != phase) phases.emplace_back(phase, now);
    };
    timer.start();
    loadSession(request, progress);
    const double end = double(timer.nsecsElapsed()) / 1e9;
    printf("  phases:");
    for (size_t i = 0; i + 1 < phases.size(); ++i)
        printf(" %s %.2f s;", phases[i].first.c_str(), phases[i + 1].second - phases[i].second);
    printf(" total %.2f s\n", end);
}

} // namespace

int main(int argc, char** argv) {
    if (qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM")) qputenv("QT_QPA_PLATFORM", "offscreen");
    QApplication app(argc, argv);
    QApplication::setOrganizationName(QStringLiteral("tuneup-bench"));
    int width = 1600, height = 1000;
    QString screenshots; // where to save the window after the first paint, one PNG per file
    QStringList files;
    for (int i = 1; i < argc; ++i) {
        if (!strcmp(argv[i], "--width") && i + 1 < argc)
            width = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--height") && i + 1 < argc)
            height = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--screenshots") && i + 1 < argc)
            screenshots = QString::fromLocal8Bit(argv[++i]);
        else
            files << QString::fromLocal8Bit(argv[i]);
    }
    if (files.isEmpty()) {
        fprintf(stderr, "usage: bench_gui [--width W] [--height H] [--screenshots DIR] FILE...\n");
        return 2;
    }
    printf("%-34s %9s %8s %10s %12s %12s %9s %7s %10s\n", "file", "events", "load s", "1st paint", "repaint med",
        "repaint p95", "max ms", "paints", "search ms");
    for (const QString& file : files) {
        MainWindow window;
        window.resize(width, height);
        window.show();
        QApplication::processEvents();
        TimelineView& t = *window.timeline();
        QSignalSpy loaded(&window, &MainWindow::sessionLoaded);
        QSignalSpy failed(&window, &MainWindow::loadFailed);
        QElapsedTimer timer;
        timer.start();
        const int paintsBefore = t.paintCount();
        window.openFiles({ file });
        // An event loop that sleeps until the job reports (processEvents in a loop would spin a core
        // the loading threads need).
        while (loaded.isEmpty() && failed.isEmpty())
            loaded.wait(20);
        if (!failed.isEmpty()) {
            fprintf(stderr, "bench_gui: %s\n", qPrintable(failed.first().at(1).toString()));
            return 1;
        }
        // The first paint with the session (the window may have painted the empty timeline before).
        while (t.paintCount() == paintsBefore || !t.session())
            QApplication::processEvents(QEventLoop::AllEvents, 5);
        const double firstPaintMs = double(timer.nsecsElapsed()) / 1e6;
        if (!screenshots.isEmpty())
            window.grab().save(
                screenshots + QLatin1Char('/') + file.section(QLatin1Char('/'), -1) + QStringLiteral(".png"));
        size_t events = 0;
        for (size_t i = 0; i < t.session()->modelCount(); ++i)
            events += t.session()->model(i).eventCount();
        double searchMs = 0;
        const Stats s = stats(zoomPanSequence(t, &searchMs));
        printf("%-34s %9zu %8.2f %7.0f ms %9.2f ms %9.2f ms %9.2f %7d %10.0f\n",
            qPrintable(file.section(QLatin1Char('/'), -1).left(34)), events, t.session()->loadSeconds, firstPaintMs,
            s.median, s.p95, s.max, t.paintCount(), searchMs);
        if (qEnvironmentVariableIsSet("BENCH_GUI_PHASES")) printPhases(file);
        fflush(stdout);
    }
    return 0;
}
