#include "gui_test_support.h"

#include "export/chrome_trace_writer.h"
#include "export/tuneup_writer.h"
#include "model/trace_builder.h"

#include <QAbstractTextDocumentLayout>
#include <QCoreApplication>
#include <QDir>
#include <QScrollBar>
#include <QSettings>
#include <QTextBlock>
#include <QTextEdit>
#include <QTextLayout>
#include <filesystem>
#include <fstream>

namespace tuneup::guitest {

using namespace analysis;
namespace fs = std::filesystem;

TraceModel syntheticRun(int steps, int fills, int64_t dataWaitNs, const std::string& script) {
    TraceBuilder b(SourceFormat::TuneupDb, "synthetic.db");
    b.info().metadata.emplace_back("role", "main");
    b.info().metadata.emplace_back("pid", "100");
    DeviceInfo gpu;
    gpu.id = 0;
    gpu.name = "NVIDIA A100-SXM4-80GB";
    gpu.computeMajor = 8;
    gpu.smCount = 108;
    gpu.vendor = GpuVendor::Nvidia;
    b.addDevice(gpu);
    b.setProcessName(100, "python3");
    const ThreadIndex thread = b.thread(100, 100);
    b.setThreadName(100, 100, "python3");
    const int64_t w = dataWaitNs;
    const int64_t kStep = 15'000'000 + w;
    uint64_t correlation = 1;
    auto call = [&](int64_t t, int64_t duration, const char* name) {
        ApiCall c;
        c.startNs = t;
        c.endNs = t + duration;
        c.thread = thread;
        c.name = b.intern(name);
        c.correlation = correlation;
        b.addApiCall(c);
        return correlation++;
    };
    auto range = [&](int64_t start, int64_t end, const std::string& name) {
        Annotation a;
        a.startNs = start;
        a.endNs = end;
        a.thread = thread;
        a.name = b.intern(name);
        b.addAnnotation(a);
    };
    auto frame = [&](int64_t start, int64_t end, int line, const char* function) {
        if (script.empty()) return;
        PythonFunction f;
        f.startNs = start;
        f.endNs = end;
        f.thread = thread;
        f.name = b.intern(script + "(" + std::to_string(line) + "): " + function);
        b.addPythonFunction(f);
    };
    auto kernel = [&](int64_t launchAt, int64_t start, int64_t duration, const char* name) {
        Kernel k;
        k.correlation = call(launchAt, 4'000, "cudaLaunchKernel");
        k.startNs = start;
        k.endNs = start + duration;
        k.device = 0;
        k.stream = 7;
        k.name = b.intern(name);
        k.gridX = 128;
        k.gridY = k.gridZ = 1;
        k.blockX = 256;
        k.blockY = k.blockZ = 1;
        b.addKernel(k);
    };
    for (int s = 0; s < steps; ++s) {
        const int64_t t0 = 1'000'000'000 + s * kStep;
        range(t0, t0 + kStep, "ProfilerStep#" + std::to_string(s));
        frame(t0 + 1'000, t0 + kStep - 1'000, kTrainLine, "train");
        // The loop waits for its batch: the GPU idles.
        if (w > 0) range(t0 + 10'000, t0 + 10'000 + w, "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__");
        // The agent's samples of the main thread: blocked in read (x86-64 call 0) while it waits, else running.
        b.addThreadState({ .timeNs = t0, .thread = thread, .state = 'R', .syscall = -1 });
        if (w > 0) {
            b.addThreadState({ .timeNs = t0 + 10'000, .thread = thread, .state = 'S', .syscall = 0 });
            b.addThreadState({ .timeNs = t0 + 10'000 + w, .thread = thread, .state = 'R', .syscall = -1 });
        }
        Memcpy copy;
        frame(t0 + w + 15'000, t0 + w + 60'000, kLoadBatchLine, "load_batch");
        copy.correlation = call(t0 + w + 20'000, 30'000, "cudaMemcpyAsync");
        copy.startNs = t0 + w + 30'000;
        copy.endNs = copy.startNs + 800'000;
        copy.device = 0;
        copy.stream = 7;
        copy.bytes = 4'000'000;
        copy.copyKind = CopyKind::HtoD;
        copy.srcKind = MemoryKind::Pageable;
        copy.dstKind = MemoryKind::Device;
        b.addMemcpy(copy);
        // zero_grad fills every gradient, one kernel each.
        const int64_t zg = t0 + w + 900'000;
        range(zg, zg + 20'000 + fills * 6'000, "Optimizer.zero_grad#SGD.zero_grad");
        for (int i = 0; i < fills; ++i)
            kernel(zg + 10'000 + i * 6'000, zg + 20'000 + i * 6'000, 3'000,
                "void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>, "
                "at::detail::Array<char*, 1> >(int, at::native::FillFunctor<float>, at::detail::Array<char*, 1>)");
        // Forward and backward: GEMMs and pointwise kernels.
        int64_t t = zg + 40'000 + fills * 6'000;
        range(t - 10'000, t + 12'000'000, "## forward ##");
        for (int layer = 0; layer < 6; ++layer) {
            kernel(t, t + 20'000, 900'000, "ampere_sgemm_128x64_tn");
            kernel(t + 10'000, t + 930'000, 60'000,
                "void at::native::vectorized_elementwise_kernel<4, at::native::(anonymous "
                "namespace)::launch_clamp_scalar>(int)");
            kernel(t + 20'000, t + 1'000'000, 700'000, "ampere_sgemm_64x64_nt");
            t += 1'900'000;
        }
        call(t + 100'000, 1'500'000, "cudaStreamSynchronize");
    }
    return b.finish();
}

std::string writeTrace(const TraceModel& model, const std::string& path) {
    std::error_code ec;
    fs::remove(path, ec);
    writeTuneupFile(model, path);
    return path;
}

std::string writeKinetoTrace(const TraceModel& model, const std::string& path) {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    writeChromeTrace(out, model);
    out.close();
    if (!out) throw std::runtime_error("cannot write " + path);
    return path;
}

std::string dataPath(const std::string& name) {
    const fs::path dir(TUNEUP_GUI_TEST_DATA);
    fs::create_directories(dir);
    return (dir / name).string();
}

std::string sharedTrace(const std::string& relative) {
    const fs::path root(TUNEUP_SHARED_TRACES);
    if (!fs::is_directory(root)) return {};
    const fs::path path = root / relative;
    if (!fs::exists(path)) qWarning() << path.c_str() << "is missing from ../shared/traces";
    return path.string();
}

QString saveScreenshot(const QImage& image, const QString& name) {
    QDir().mkpath(QStringLiteral(TUNEUP_GUI_SCREENSHOTS));
    const QString path = QStringLiteral(TUNEUP_GUI_SCREENSHOTS "/%1.png").arg(name);
    // RGB without alpha, at PNG's strongest compression (quality 0): small enough for the README.
    const QImage small = image.convertToFormat(QImage::Format_RGB444).convertToFormat(QImage::Format_RGB888);
    small.save(path, "PNG", 0);
    const QByteArray copyTo = qgetenv("TUNEUP_UPDATE_SCREENSHOTS");
    if (!copyTo.isEmpty()) {
        QDir().mkpath(QString::fromLocal8Bit(copyTo));
        small.save(QString::fromLocal8Bit(copyTo) + QStringLiteral("/%1.png").arg(name), "PNG", 0);
    }
    return path;
}

int countColor(const QImage& image, const QRect& area, QRgb rgb, int tolerance) {
    const QImage img = image.convertToFormat(QImage::Format_RGB32);
    const QRect r = area.intersected(img.rect());
    int n = 0;
    for (int y = r.top(); y <= r.bottom(); ++y) {
        const auto* line = reinterpret_cast<const QRgb*>(img.constScanLine(y));
        for (int x = r.left(); x <= r.right(); ++x)
            if (std::abs(qRed(line[x]) - qRed(rgb)) <= tolerance && std::abs(qGreen(line[x]) - qGreen(rgb)) <= tolerance
                && std::abs(qBlue(line[x]) - qBlue(rgb)) <= tolerance)
                ++n;
    }
    return n;
}

QStringList linesCutOffOnTheRight(const QTextEdit& view) {
    QStringList cut;
    const QTextDocument* document = view.document();
    QAbstractTextDocumentLayout* layout = document->documentLayout();
    // Document x is viewport x when scrolled fully left; what lies beyond the viewport's width is hidden.
    const double visibleWidth = view.viewport()->width() + double(view.horizontalScrollBar()->minimum());
    for (QTextBlock block = document->begin(); block.isValid(); block = block.next()) {
        const QTextLayout* lines = block.layout();
        if (!lines) continue;
        const QPointF origin = layout->blockBoundingRect(block).topLeft() - lines->boundingRect().topLeft();
        for (int i = 0; i < lines->lineCount(); ++i) {
            const QTextLine line = lines->lineAt(i);
            if (origin.x() + line.x() + line.naturalTextWidth() > visibleWidth + 1) {
                const QString text = block.text().mid(line.textStart(), line.textLength());
                cut << QStringLiteral("\"%1\" (ends at x=%2 of %3)")
                           .arg(text.left(60) + (text.size() > 60 ? QStringLiteral("…") : QString()))
                           .arg(origin.x() + line.x() + line.naturalTextWidth(), 0, 'f', 0)
                           .arg(visibleWidth, 0, 'f', 0);
            }
        }
    }
    return cut;
}

void isolateSettings() {
    QCoreApplication::setOrganizationName(QStringLiteral("tuneup-tests"));
    QCoreApplication::setApplicationName(QStringLiteral("tuneup-gui-test"));
    const QByteArray home = qgetenv("TUNEUP_GUI_TEST_HOME");
    QSettings::setDefaultFormat(QSettings::IniFormat);
    if (!home.isEmpty()) QSettings::setPath(QSettings::IniFormat, QSettings::UserScope, QString::fromLocal8Bit(home));
    QSettings().clear();
}

} // namespace tuneup::guitest
