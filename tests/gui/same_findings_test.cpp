// The GUI and the CLI open runs through the same job core, so they give the same findings for the same
// files: real traces of one and of several ranks, an Nsight Systems export, and a Python run recorded
// with two (too few) DataLoader workers whose files are given too (both set them aside, neither reads them as ranks).

#include "app/session.h"
#include "gui_test_support.h"
#include "run_program.h"

#include <QtTest>
#include <filesystem>
#include <fstream>
#include <rapidjson/document.h>
#include <sstream>

using namespace tuneup;
using namespace tuneup::gui;
namespace fs = std::filesystem;

namespace {

// What a user compares: rule, rank, severity, title and the gain, one line per finding, in rank order.
std::string describe(
    const std::string& rule, int rank, const std::string& severity, const std::string& title, int64_t gainNs) {
    return rule + " | rank " + std::to_string(rank) + " | " + severity + " | " + title + " | " + std::to_string(gainNs);
}

std::vector<std::string> guiFindings(const std::vector<std::string>& files) {
    LoadRequest request;
    request.files = files;
    const auto session = loadSession(request);
    std::vector<std::string> out;
    for (const analysis::Finding* f : session->report().ranked())
        out.push_back(describe(f->ruleId, f->rank, std::string(analysis::severityName(f->severity)), f->title,
            f->gain ? f->gain->perStepNs : 0));
    return out;
}

std::vector<std::string> cliFindings(const std::vector<std::string>& files, std::string& error) {
    std::vector<std::string> args = { "advise", "--format", "json" };
    args.insert(args.end(), files.begin(), files.end());
    const auto result = test::runProgram(TUNEUP_BINARY, args);
    std::vector<std::string> out;
    if (result.code != 0) {
        error = result.err;
        return out;
    }
    rapidjson::Document json;
    json.Parse(result.out.c_str());
    if (!json.IsObject() || !json.HasMember("findings")) {
        error = "not a JSON report: " + result.out.substr(0, 200);
        return out;
    }
    for (const auto& f : json["findings"].GetArray())
        out.push_back(
            describe(f["rule"].GetString(), f["rank"].IsNull() ? -1 : f["rank"].GetInt(), f["severity"].GetString(),
                f["title"].GetString(), f["gain"].IsNull() ? 0 : f["gain"]["per_step_ns"].GetInt64()));
    return out;
}

// The lists one per line, for a failure's message (QCOMPARE prints nothing of a std::vector).
QByteArray bothLists(const std::vector<std::string>& gui, const std::vector<std::string>& cli) {
    std::string text = "GUI:";
    for (const std::string& f : gui)
        text += "\n  " + f;
    text += "\nCLI:";
    for (const std::string& f : cli)
        text += "\n  " + f;
    return QByteArray::fromStdString(text);
}

} // namespace

class SameFindingsTest : public QObject {
    Q_OBJECT
private slots:
    void sameFindings_data() {
        QTest::addColumn<std::vector<std::string>>("files");
        const fs::path traces = TUNEUP_SHARED_TRACES;
        if (!fs::is_directory(traces)) {
            if (getenv("CI") && std::string(getenv("CI")) == "true")
                QFAIL(qPrintable("the real traces are not at " + QString::fromStdString(traces.string())));
            QSKIP("the real traces (../shared/traces) are absent: they run in CI");
        }
        auto at = [&](const char* relative) { return (traces / relative).string(); };
        QTest::newRow("one rank (ResNet, Kineto)")
            << std::vector<std::string> { at("param/et_replay/tests/inputs/resnet_kineto.json.gz") };
        QTest::newRow("two ranks (ResNet-50 DDP)")
            << std::vector<std::string> { at("kineto-tbplugin-testdata/tb_plugin/test/data/tracing/resnet50_newAPI_ddp/"
                                             "worker0_span1.pt.trace.json.gz"),
                   at("kineto-tbplugin-testdata/tb_plugin/test/data/tracing/resnet50_newAPI_ddp/"
                      "worker1_span1.pt.trace.json.gz") };
        std::vector<std::string> dlrm;
        for (const auto& entry : fs::directory_iterator(traces / "param/et_replay/tests/inputs/dlrm_kineto"))
            if (entry.path().extension() == ".json") dlrm.push_back(entry.path().string());
        std::sort(dlrm.begin(), dlrm.end());
        QTest::newRow("eight ranks (DLRM)") << dlrm;
        QTest::newRow("Nsight Systems export") << std::vector<std::string> { at("nvfuser/ee4fcf30/report1.sqlite") };
    }

    void sameFindings() {
        QFETCH(std::vector<std::string>, files);
        std::string error;
        const auto cli = cliFindings(files, error);
        QVERIFY2(error.empty(), error.c_str());
        QVERIFY(!cli.empty());
        const auto gui = guiFindings(files);
        QVERIFY2(gui == cli, bothLists(gui, cli).constData());
    }

    void sameFindingsOnARecordedRunWithDataLoaderWorkers() {
#ifndef TUNEUP_PYTHON
        QSKIP("no python3 with torch to record a run");
#else
        const std::string dir = guitest::dataPath("same_findings");
        fs::remove_all(dir);
        fs::create_directories(dir);
        const auto recorded = test::runProgram(TUNEUP_BINARY,
            { "record", "-o", dir + "/run.db", "--", TUNEUP_PYTHON, TUNEUP_SAMPLES_DIR "/python/dataloader_workers.py",
                "--fixed", "--workers", "2", "--load-ms", "40", "--steps", "8" });
        QVERIFY2(recorded.code == 0, recorded.err.c_str());
        std::vector<std::string> files;
        for (const auto& entry : fs::directory_iterator(dir))
            if (entry.path().extension() == ".db") files.push_back(entry.path().string());
        std::sort(files.begin(), files.end());
        std::string listed = "the run and its two workers' files, found:";
        for (const std::string& f : files)
            listed += " " + fs::path(f).filename().string();
        QVERIFY2(files.size() == 3, (listed + "\n" + recorded.err).c_str());
        std::string error;
        const auto cli = cliFindings(files, error);
        QVERIFY2(error.empty(), error.c_str());
        QVERIFY2(!cli.empty(), "two workers cannot keep up with 40 ms per sample: dataloader-stall must fire");
        const auto gui = guiFindings(files);
        QVERIFY2(gui == cli, bothLists(gui, cli).constData());
        // And the GUI given the main file alone shows the workers beside it, as helpers, with the same advice.
        LoadRequest request;
        request.files = { dir + "/run.db" };
        const auto session = loadSession(request);
        QCOMPARE(session->rankCount(), size_t(1));
        QCOMPARE(session->otherFiles.size(), size_t(2));
        const auto guiMainFile = guiFindings({ dir + "/run.db" });
        QVERIFY2(guiMainFile == cli, bothLists(guiMainFile, cli).constData());
#endif
    }
};

QTEST_GUILESS_MAIN(SameFindingsTest)
#include "same_findings_test.moc"
