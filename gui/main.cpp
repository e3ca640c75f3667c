// tuneup-gui [FILE…]: the timeline of a recorded run with the advisor's findings beside it.

#include "app/main_window.h"

#include <QApplication>
#include <QCommandLineParser>
#include <QTimer>

int main(int argc, char** argv) {
    QApplication app(argc, argv);
    QApplication::setOrganizationName(QStringLiteral("tuneup"));
    QApplication::setApplicationName(QStringLiteral("tuneup-gui"));
    QApplication::setApplicationVersion(QStringLiteral(TUNEUP_VERSION));

    QCommandLineParser parser;
    parser.setApplicationDescription(QStringLiteral(
        "Shows a recorded training run: the timeline of GPU streams, CPU threads, ranges and steps, with the\n"
        "advisor's findings beside it. FILE: tuneup recordings (.db), PyTorch profiler / Kineto traces\n"
        "(.json, .json.gz) or Nsight Systems SQLite exports; several files are one job (one per rank).\n\n"
        "Example: tuneup-gui run.db"));
    parser.addHelpOption();
    parser.addVersionOption();
    const QCommandLineOption stepRange(
        QStringLiteral("step-range"), QStringLiteral("The range that marks a step."), QStringLiteral("NAME"));
    const QCommandLineOption rules(
        QStringLiteral("rules"), QStringLiteral("Also run the SQL rules in DIR."), QStringLiteral("DIR"));
    parser.addOption(stepRange);
    parser.addOption(rules);
    parser.addPositionalArgument(
        QStringLiteral("FILE"), QStringLiteral("Traces to open, as one job."), QStringLiteral("[FILE…]"));
    parser.process(app);

    tuneup::gui::WindowOptions options;
    options.stepRange = parser.value(stepRange).toStdString();
    options.userRules = parser.value(rules).toStdString();
    tuneup::gui::MainWindow window(options);
    window.show();
    const QStringList files = parser.positionalArguments();
    if (!files.isEmpty()) QTimer::singleShot(0, &window, [&window, files] { window.openFiles(files); });
    return app.exec();
}
