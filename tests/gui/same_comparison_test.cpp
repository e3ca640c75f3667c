// The compare dialog shows `tuneup compare`'s comparison, not one of its own: opened as the window opens
// runs (loadSession, the job core), a pair shown in the dialog holds the very numbers `tuneup compare
// --format json` gives for it — the verdict, the step time's ratio, interval and threshold, the breakdown
// per step, each kernel per call and per step with its verdict, the findings that appeared, were resolved
// or persist, the environment and settings that changed — and the dialog shows them. Pairs: the HTA
// trace_diff control/test pair (an A100 job against a V100 one: incomparable, then compared anyway as
// --allow-env-change does), two tuneup files the tests' fixtures write (the stall fixed: improved;
// swapped: regressed), and two recordings made here (the DataLoader sample and its --fixed twin).

#include "app/session.h"
#include "compare/compare_report.h"
#include "gui_test_support.h"
#include "models/compare_kernel_model.h"
#include "run_program.h"
#include "views/compare_dialog.h"

#include <QCheckBox>
#include <QLabel>
#include <QTableView>
#include <QTableWidget>
#include <QTextDocumentFragment>
#include <QtTest>
#include <cmath>
#include <filesystem>
#include <rapidjson/document.h>

using namespace tuneup;
using namespace tuneup::gui;
using analysis::CompareResult;

namespace {

const char* kControl = "hta/tests/data/trace_diff/control/control.json.gz";
const char* kTest = "hta/tests/data/trace_diff/test/test.json.gz";

// `tuneup compare BASE NEW --format json [extra]`, parsed; its exit code in `code`.
rapidjson::Document cliCompare(
    const std::string& base, const std::string& now, const std::vector<std::string>& extra, int& code) {
    std::vector<std::string> args = { "compare", base, now, "--format", "json" };
    args.insert(args.end(), extra.begin(), extra.end());
    const auto result = test::runProgram(TUNEUP_BINARY, args);
    code = result.code;
    rapidjson::Document json;
    // Full precision: the CLI writes each double so that it reads back to the same bits.
    json.Parse<rapidjson::kParseFullPrecisionFlag>(result.out.c_str());
    if (!json.IsObject()) qWarning("tuneup compare wrote no JSON (exit %d): %s", result.code, result.err.c_str());
    return json;
}

std::string str(const rapidjson::Value& v) {
    return v.IsNull() ? std::string() : std::string(v.GetString(), v.GetStringLength());
}

// A number the JSON may write as null (not measured), against the GUI's, which reads `absent` then.
bool sameNumber(double gui, const rapidjson::Value& cli, bool absent = false) {
    if (cli.IsNull()) return absent;
    if (absent) return false;
    const double c = cli.GetDouble();
    return gui == c || std::abs(gui - c) <= 1e-12 * std::max(std::abs(gui), std::abs(c));
}

#define CHECK_NUMBER(gui, cli, ...)                                                                                    \
    QVERIFY2(sameNumber((gui), (cli)__VA_OPT__(, ) __VA_ARGS__),                                                       \
        qPrintable(QStringLiteral("%1: GUI %2, CLI %3")                                                                \
                       .arg(#gui)                                                                                      \
                       .arg(double(gui), 0, 'g', 17)                                                                   \
                       .arg((cli).IsNull() ? QStringLiteral("null") : QString::number((cli).GetDouble(), 'g', 17))))

void sameFindings(const std::vector<analysis::FindingRef>& gui, const rapidjson::Value& cli) {
    QCOMPARE(size_t(cli.Size()), gui.size());
    for (size_t i = 0; i < gui.size(); ++i) {
        QCOMPARE(gui[i].ruleId, str(cli[rapidjson::SizeType(i)]["rule"]));
        QCOMPARE(gui[i].title, str(cli[rapidjson::SizeType(i)]["title"]));
    }
}

// Every number the JSON holds, against the dialog's comparison.
void sameComparison(const CompareResult& r, const rapidjson::Value& j) {
    QCOMPARE(std::string(analysis::verdictName(r.verdict)), str(j["verdict"]));
    QCOMPARE(std::string(analysis::verdictName(r.stepVerdict)), str(j["step_verdict"]));
    QCOMPARE(analysis::verdictSentence(r), str(j["summary"]));

    const analysis::StepTimeComparison& s = r.stepTime;
    const rapidjson::Value& st = j["step_time"];
    CHECK_NUMBER(s.baseMs, st["base_ms"], !(s.baseMs > 0));
    CHECK_NUMBER(s.newMs, st["new_ms"], !(s.newMs > 0));
    CHECK_NUMBER(s.ratio, st["ratio"], !(s.ratio > 0));
    QCOMPARE(st["ratio_ci"].IsNull(), !(s.low > 0));
    if (s.low > 0) {
        CHECK_NUMBER(s.low, st["ratio_ci"][0]);
        CHECK_NUMBER(s.high, st["ratio_ci"][1]);
    }
    CHECK_NUMBER(s.threshold, st["threshold"]);
    QCOMPARE(s.thresholdFrom, str(st["threshold_from"]));
    CHECK_NUMBER(s.noise.value_or(0), st["noise"], !s.noise);
    CHECK_NUMBER(s.pValue, st["p_value"]);
    QCOMPARE(uint64_t(s.baseSteps), st["base_steps"].GetUint64());
    QCOMPARE(uint64_t(s.newSteps), st["new_steps"].GetUint64());
    QCOMPARE(st["steps_to_decide"].IsNull(), !s.stepsToDecide);
    QCOMPARE(s.identical, st["identical"].GetBool());

    const rapidjson::Value& breakdown = j["breakdown"];
    QCOMPARE(size_t(breakdown.Size()), r.breakdownRecorded ? r.breakdown.size() : size_t(0));
    for (rapidjson::SizeType i = 0; i < breakdown.Size(); ++i) {
        QCOMPARE(r.breakdown[i].key, str(breakdown[i]["part"]));
        CHECK_NUMBER(double(r.breakdown[i].baseNs) / 1e6, breakdown[i]["base_ms"]);
        CHECK_NUMBER(double(r.breakdown[i].newNs) / 1e6, breakdown[i]["new_ms"]);
    }

    const rapidjson::Value& kernels = j["kernels"];
    QCOMPARE(size_t(kernels.Size()), r.kernels.size());
    QCOMPARE(uint64_t(r.kernelNames), j["kernel_names"].GetUint64());
    for (rapidjson::SizeType i = 0; i < kernels.Size(); ++i) {
        const analysis::KernelDelta& k = r.kernels[i];
        const rapidjson::Value& c = kernels[i];
        QCOMPARE(k.name, str(c["name"]));
        QCOMPARE(std::string(analysis::kernelClassName(k.kernelClass)), str(c["class"]));
        QCOMPARE(std::string(analysis::kernelChangeName(k.change)), str(c["verdict"]));
        QCOMPARE(k.baseCalls, c["base_calls"].GetInt64());
        QCOMPARE(k.newCalls, c["new_calls"].GetInt64());
        CHECK_NUMBER(k.basePerCallUs, c["base_per_call_us"], k.baseCalls == 0);
        CHECK_NUMBER(k.newPerCallUs, c["new_per_call_us"], k.newCalls == 0);
        CHECK_NUMBER(k.perCallRatio.value_or(0), c["per_call_ratio"], !k.perCallRatio);
        CHECK_NUMBER(k.pValue.value_or(0), c["p_value"], !k.pValue);
        CHECK_NUMBER(k.basePerStepUs, c["base_per_step_us"]);
        CHECK_NUMBER(k.newPerStepUs, c["new_per_step_us"]);
        CHECK_NUMBER(k.baseCallsPerStep, c["base_calls_per_step"]);
        CHECK_NUMBER(k.newCallsPerStep, c["new_calls_per_step"]);
    }

    sameFindings(r.appeared, j["findings"]["appeared"]);
    sameFindings(r.resolved, j["findings"]["resolved"]);
    sameFindings(r.persisting, j["findings"]["persisting"]);

    const rapidjson::Value& env = j["environment"];
    QCOMPARE(r.environment.changed.empty(), env["comparable"].GetBool());
    QCOMPARE(size_t(env["changed"].Size()), r.environment.changed.size());
    for (rapidjson::SizeType i = 0; i < env["changed"].Size(); ++i) {
        QCOMPARE(r.environment.changed[i].key, str(env["changed"][i]["key"]));
        QCOMPARE(r.environment.changed[i].base, str(env["changed"][i]["base"]));
        QCOMPARE(r.environment.changed[i].now, str(env["changed"][i]["new"]));
    }
    QCOMPARE(size_t(j["settings_changed"].Size()), r.settings.size());
    for (rapidjson::SizeType i = 0; i < j["settings_changed"].Size(); ++i)
        QCOMPARE(r.settings[i].key, str(j["settings_changed"][i]["key"]));
    QCOMPARE(size_t(j["causes"].Size()), r.causes.size());
    for (rapidjson::SizeType i = 0; i < j["causes"].Size(); ++i)
        QCOMPARE(r.causes[i], str(j["causes"][i]));
    QCOMPARE(size_t(j["notes"].Size()), r.notes.size());
    for (rapidjson::SizeType i = 0; i < j["notes"].Size(); ++i)
        QCOMPARE(r.notes[i], str(j["notes"][i]));
}

QString plain(const QLabel* label) {
    return QTextDocumentFragment::fromHtml(label->text()).toPlainText();
}

// What the dialog shows of it: the verdict and its sentence, the step table's ratio and interval, the
// kernels in the comparison's order with their verdicts.
void dialogShows(const CompareDialog& d, const rapidjson::Value& j) {
    const CompareResult& r = *d.comparison().result();
    const QString verdict = plain(d.verdict());
    QVERIFY2(verdict.contains(QString::fromStdString(str(j["summary"]))), qPrintable(verdict));
    QVERIFY2(verdict.contains(QString::fromStdString(analysis::stepTimeHeadline(r))), qPrintable(verdict));
    if (!j["step_time"]["ratio"].IsNull())
        QCOMPARE(d.summary()->item(0, 4)->text(),
            QString::fromStdString(analysis::ratioText(j["step_time"]["ratio"].GetDouble())));
    QCOMPARE(d.summary()->item(1, 4)->text(), QString::fromStdString(analysis::ratioIntervalText(r.stepTime)));
    const QAbstractItemModel* kernels = d.kernels()->model();
    QCOMPARE(size_t(kernels->rowCount()), size_t(j["kernels"].Size()));
    for (int row = 0; row < kernels->rowCount(); ++row) {
        const rapidjson::Value& k = j["kernels"][rapidjson::SizeType(row)];
        QCOMPARE(kernels->index(row, CompareKernelModel::Name).data().toString().toStdString(), str(k["name"]));
        QCOMPARE(kernels->index(row, CompareKernelModel::Verdict).data().toString().toStdString(), str(k["verdict"]));
    }
    const rapidjson::Value& f = j["findings"];
    QCOMPARE(
        size_t(d.findings()->rowCount()), size_t(f["appeared"].Size() + f["resolved"].Size() + f["persisting"].Size()));
}

} // namespace

class SameComparisonTest : public QObject {
    Q_OBJECT
private slots:
    void initTestCase() {
        m_slow = guitest::writeTrace(guitest::syntheticRun(12, 40), guitest::dataPath("compare_slow.db"));
        // The stall and most fills gone: 15 ms steps instead of 20.
        m_fixed = guitest::writeTrace(guitest::syntheticRun(12, 4, 0), guitest::dataPath("compare_fixed.db"));
    }

    // An A100 job against a V100 one: not comparable, and the dialog says what changed and offers to
    // compare anyway; ticked, it shows what --allow-env-change gives.
    void traceDiffPair() {
        TUNEUP_REQUIRE_SHARED_TRACE(control, kControl);
        TUNEUP_REQUIRE_SHARED_TRACE(test, kTest);
        const auto base = loadSession(guitest::request(control));
        const auto now = loadSession(guitest::request(test));
        CompareDialog d;
        d.setComparison(compareSessions(*base, *now));
        d.show();
        QVERIFY(d.comparison().result());

        int code = 0;
        const rapidjson::Document refused = cliCompare(control, test, {}, code);
        QCOMPARE(code, 4); // incomparable
        QVERIFY(refused.IsObject());
        QCOMPARE(str(refused["verdict"]), std::string("incomparable"));
        sameComparison(*d.comparison().result(), refused);
        if (QTest::currentTestFailed()) return;
        dialogShows(d, refused);
        if (QTest::currentTestFailed()) return;
        QVERIFY(plain(d.verdict()).startsWith(QStringLiteral("Not comparable")));
        QVERIFY2(plain(d.why()).contains(QStringLiteral("GPU model: NVIDIA A100-PG509-200 -> Tesla V100-SXM2-16GB")),
            qPrintable(plain(d.why())));
        QVERIFY(d.compareAnyway()->isVisible());
        QVERIFY(!d.compareAnyway()->isChecked());

        d.compareAnyway()->click();
        const rapidjson::Document anyway = cliCompare(control, test, { "--allow-env-change" }, code);
        QVERIFY(anyway.IsObject());
        const std::string stepVerdict = str(anyway["step_verdict"]);
        QCOMPARE(str(anyway["verdict"]), stepVerdict);
        QCOMPARE(code, stepVerdict == "regressed" ? 1 : 0);
        QVERIFY(d.comparison().runs->options().allowEnvChange);
        sameComparison(*d.comparison().result(), anyway);
        if (QTest::currentTestFailed()) return;
        dialogShows(d, anyway);
        if (QTest::currentTestFailed()) return;
        QVERIFY(!plain(d.verdict()).startsWith(QStringLiteral("Not comparable")));
        QVERIFY(plain(d.why()).contains(QStringLiteral("Compared anyway")));
        QVERIFY(d.compareAnyway()->isVisible()); // and can be unticked again
        d.compareAnyway()->click();
        QCOMPARE(d.comparison().result()->verdict, analysis::Verdict::Incomparable);
        QCoreApplication::processEvents();
        guitest::saveScreenshot(d.grab().toImage(), QStringLiteral("compare_trace_diff"));
    }

    // Two tuneup files from the tests' fixtures: the stall fixed is improved, the cause named; swapped,
    // regressed (exit 1).
    void tuneupFiles_data() {
        QTest::addColumn<bool>("swapped");
        QTest::newRow("fixed: improved") << false;
        QTest::newRow("swapped: regressed") << true;
    }

    void tuneupFiles() {
        QFETCH(bool, swapped);
        const std::string base = swapped ? m_fixed : m_slow, now = swapped ? m_slow : m_fixed;
        CompareDialog d;
        d.setComparison(compareSessions(*loadSession(guitest::request(base)), *loadSession(guitest::request(now))));
        QVERIFY(d.comparison().result());
        int code = 0;
        const rapidjson::Document cli = cliCompare(base, now, {}, code);
        QVERIFY(cli.IsObject());
        QCOMPARE(code, swapped ? 1 : 0);
        QCOMPARE(str(cli["verdict"]), std::string(swapped ? "regressed" : "improved"));
        sameComparison(*d.comparison().result(), cli);
        if (QTest::currentTestFailed()) return;
        dialogShows(d, cli);
        if (QTest::currentTestFailed()) return;
        QVERIFY(plain(d.verdict()).startsWith(swapped ? QStringLiteral("Regressed") : QStringLiteral("Improved")));
        QVERIFY(plain(d.why()).contains(
            swapped ? QStringLiteral("dataloader-stall appeared") : QStringLiteral("dataloader-stall resolved")));
        QVERIFY(!d.compareAnyway()->isVisible());
    }

    // Two recordings made here: the DataLoader sample and its --fixed twin (four worker processes, whose
    // files the GUI reads beside the run and the CLI sets aside). Whatever this machine's load makes of
    // the verdict, the dialog's numbers are the CLI's, and the program's change is named.
    void recordedPair() {
#ifndef TUNEUP_PYTHON
        QSKIP("no python3 with torch to record a run");
#else
        const std::string dir = guitest::dataPath("same_comparison");
        std::filesystem::remove_all(dir);
        std::filesystem::create_directories(dir);
        for (const char* name : { "slow", "fixed" }) {
            std::vector<std::string> args = { "record", "-o", dir + "/" + name + ".db", "--", TUNEUP_PYTHON,
                std::string(TUNEUP_SAMPLES_DIR) + "/python/dataloader_workers.py", "--steps", "16", "--load-ms", "4" };
            if (std::string(name) == "fixed") args.push_back("--fixed");
            const auto recorded = test::runProgram(TUNEUP_BINARY, args);
            QVERIFY2(recorded.code == 0, recorded.err.c_str());
        }
        const std::string base = dir + "/slow.db", now = dir + "/fixed.db";
        const auto fixedSession = loadSession(guitest::request(now));
        QVERIFY(!fixedSession->otherFiles.empty()); // the workers' files, shown beside the run
        CompareDialog d;
        d.setComparison(compareSessions(*loadSession(guitest::request(base)), *fixedSession));
        QVERIFY2(d.comparison().result(), d.comparison().error.c_str());
        int code = 0;
        const rapidjson::Document cli = cliCompare(base, now, {}, code);
        QVERIFY(cli.IsObject());
        QCOMPARE(code, str(cli["verdict"]) == "regressed" ? 1 : 0);
        sameComparison(*d.comparison().result(), cli);
        if (QTest::currentTestFailed()) return;
        dialogShows(d, cli);
        if (QTest::currentTestFailed()) return;
        QVERIFY(
            d.environment()->findItems(QStringLiteral("setting dataloader.num_workers"), Qt::MatchExactly).size() == 1);
#endif
    }

private:
    std::string m_slow, m_fixed;
};

QTEST_MAIN(SameComparisonTest)
#include "same_comparison_test.moc"
