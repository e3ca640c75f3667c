#pragma once
// What the GUI tests share: a synthetic training run that some rules fire on (written as a tuneup
// file with the analyzer's exporter, as a recording would be), real traces from ../shared/traces, and
// screenshots with pixel checks.

#include "app/session.h"
#include "ci.h"
#include "model/trace_model.h"

#include <QImage>
#include <QString>
#include <QStringList>
#include <QtTest>
#include <string>

class QTextEdit;

namespace tuneup::guitest {

// A run of `steps` steps of 15 ms + `dataWaitNs` on thread 100 of pid 100, GPU 0 stream 7: per step a
// DataLoader wait of dataWaitNs, a 4 MB pageable host-to-device copy, an Optimizer.zero_grad range
// launching `fills` FillFunctor kernels, GEMMs and pointwise kernels, and a cudaStreamSynchronize.
// The main thread's sampled state: in read during the wait, else running. zero-grad-fill,
// pageable-memcpy and dataloader-stall fire on it. With `script`, the main thread's Python stack as the
// profiler records it with_stack: each step inside "<script>(kTrainLine): train", each copy's call
// inside "<script>(kLoadBatchLine): load_batch" (so pageable-memcpy's sources name that line).
analysis::TraceModel syntheticRun(
    int steps = 12, int fills = 40, int64_t dataWaitNs = 5'000'000, const std::string& script = {});
inline constexpr int kTrainLine = 7;
inline constexpr int kLoadBatchLine = 312; // far down a file: opening it must scroll
// `model` written as a tuneup file at `path` (replacing it); returns the path.
std::string writeTrace(const analysis::TraceModel& model, const std::string& path);
// `model` written as a PyTorch profiler (Kineto) trace at `path`, which keeps its Python frames (a tuneup
// file has no table for them); returns the path.
std::string writeKinetoTrace(const analysis::TraceModel& model, const std::string& path);
// A fresh path under the test data directory (in the build tree).
std::string dataPath(const std::string& name);

// A request to open one file, as the window makes it.
inline gui::LoadRequest request(const std::string& file) {
    gui::LoadRequest r;
    r.files = { file };
    return r;
}

// Absolute path under ../shared/traces, "" when that folder is absent (a fresh clone).
std::string sharedTrace(const std::string& relative);

// Saves `image` as <build>/tests/gui/screenshots/<name>.png (and into $TUNEUP_UPDATE_SCREENSHOTS when
// set); returns the path.
QString saveScreenshot(const QImage& image, const QString& name);
// Pixels of `image` inside `area` whose colour is within `tolerance` (per channel) of `rgb`.
int countColor(const QImage& image, const QRect& area, QRgb rgb, int tolerance = 6);

// The lines of a text view (QTextBrowser, QTextEdit) whose right end lies beyond the view's visible
// width when it is scrolled fully left: text the user sees cut off. Each as "<its text>" (elided).
QStringList linesCutOffOnTheRight(const QTextEdit& view);

// Points QSettings at the test's own directory, so tests never read or write the user's settings.
void isolateSettings();

} // namespace tuneup::guitest

// Skips the test with a clear message when ../shared/traces is absent; under CI=true, where it must be
// present, fails instead.
#define TUNEUP_REQUIRE_SHARED_TRACE(var, relative)                                                                     \
    const std::string var = ::tuneup::guitest::sharedTrace(relative);                                                  \
    if (var.empty()) {                                                                                                 \
        if (::tuneup::test::inCi()) QFAIL("../shared/traces is absent, and CI=true requires it");                      \
        QSKIP("../shared/traces is absent (a fresh clone): the real-trace GUI tests run in CI");                       \
    }
