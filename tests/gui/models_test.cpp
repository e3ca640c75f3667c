// The item models under QAbstractItemModelTester (which checks every call a view may make): the
// findings, the kernel table through its sort/filter proxy, and a comparison's kernels (analyzer/lib/compare's).

#include "app/session.h"
#include "gui_test_support.h"
#include "models/compare_data.h"
#include "models/compare_kernel_model.h"
#include "models/findings_model.h"
#include "models/kernel_table_model.h"

#include <QAbstractItemModelTester>
#include <QSortFilterProxyModel>
#include <QtTest>

using namespace tuneup;
using namespace tuneup::gui;
using tuneup::guitest::request;

class ModelsTest : public QObject {
    Q_OBJECT
private slots:
    void initTestCase() {
        m_a = loadSession(
            request(guitest::writeTrace(guitest::syntheticRun(12, 40), guitest::dataPath("models_a.db"))));
        // Run B: the fix applied (fewer fills), so kernels change between the runs.
        m_b = loadSession(request(guitest::writeTrace(guitest::syntheticRun(8, 4), guitest::dataPath("models_b.db"))));
    }

    void findingsRankedByGain() {
        FindingsModel model;
        QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
        QCOMPARE(model.rowCount(), 0);
        model.setSession(m_a);
        QVERIFY(model.rowCount() >= 2);
        QCOMPARE(model.columnCount(), int(FindingsModel::ColumnCount));
        int64_t previous = INT64_MAX;
        for (int row = 0; row < model.rowCount(); ++row) {
            const analysis::Finding* f = model.finding(row);
            QVERIFY(f);
            QCOMPARE(model.rowOf(f), row);
            const int64_t gain
                = model.data(model.index(row, FindingsModel::Gain), FindingsModel::SortRole).toLongLong();
            QVERIFY(gain <= previous);
            previous = gain;
            QCOMPARE(model.data(model.index(row, FindingsModel::Title)).toString(), QString::fromStdString(f->title));
            QVERIFY(model.data(model.index(row, FindingsModel::Severity), Qt::DecorationRole).canConvert<QPixmap>());
            QVERIFY(!model.data(model.index(row, FindingsModel::Title), Qt::ToolTipRole).toString().isEmpty());
        }
        QVERIFY(!model.finding(model.rowCount()));
        QCOMPARE(model.headerData(FindingsModel::Gain, Qt::Horizontal).toString(), QStringLiteral("Gain / step"));
        model.setSession(nullptr);
        QCOMPARE(model.rowCount(), 0);
    }

    void gainText() {
        analysis::Finding f;
        QCOMPARE(tuneup::gui::gainText(f), QStringLiteral("—"));
        f.gain = analysis::Gain { 61'200'000, 0.4, "", "high" };
        QCOMPARE(tuneup::gui::gainText(f), QStringLiteral("61.2 ms (40%)"));
        f.gain = analysis::Gain { 850'000, 0.012, "", "low" };
        QCOMPARE(tuneup::gui::gainText(f), QStringLiteral("850 us (1.2%)"));
    }

    void kernelTableSortsAndFilters() {
        KernelTableModel model;
        QSortFilterProxyModel proxy;
        proxy.setSourceModel(&model);
        proxy.setSortRole(KernelTableModel::SortRole);
        proxy.setFilterRole(KernelTableModel::FullNameRole);
        proxy.setFilterKeyColumn(KernelTableModel::Name);
        proxy.setFilterCaseSensitivity(Qt::CaseInsensitive);
        QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
        QAbstractItemModelTester proxyTester(&proxy, QAbstractItemModelTester::FailureReportingMode::QtTest);
        model.setSession(m_a);
        QCOMPARE(model.rowCount(), int(m_a->kernels.size()));
        QCOMPARE(model.rowCount(), 4); // two GEMMs, the fill and the clamp

        // By total, largest first; by count, the 480 fills first.
        proxy.sort(KernelTableModel::Total, Qt::DescendingOrder);
        QCOMPARE(
            proxy.data(proxy.index(0, KernelTableModel::Name)).toString(), QStringLiteral("ampere_sgemm_128x64_tn"));
        QCOMPARE(proxy.data(proxy.index(0, KernelTableModel::Class)).toString(), QStringLiteral("gemm"));
        proxy.sort(KernelTableModel::Count, Qt::DescendingOrder);
        QCOMPARE(proxy.data(proxy.index(0, KernelTableModel::Count)).toString(), QStringLiteral("480"));
        QVERIFY(proxy.data(proxy.index(0, KernelTableModel::Name)).toString().contains(QStringLiteral("FillFunctor")));
        // Shares add up to all kernel time.
        double share = 0;
        for (int row = 0; row < model.rowCount(); ++row)
            share += model.data(model.index(row, KernelTableModel::Share), KernelTableModel::SortRole).toDouble();
        QVERIFY(std::abs(share - 1.0) < 1e-9);
        // The filter matches the full name, case-insensitively.
        proxy.setFilterFixedString(QStringLiteral("fillfunctor"));
        QCOMPARE(proxy.rowCount(), 1);
        proxy.setFilterFixedString(QStringLiteral("sgemm"));
        QCOMPARE(proxy.rowCount(), 2);
        proxy.setFilterFixedString(QStringLiteral("no such kernel"));
        QCOMPARE(proxy.rowCount(), 0);
        proxy.setFilterFixedString(QString());
        QCOMPARE(proxy.rowCount(), 4);
        QVERIFY(model.data(model.index(0, KernelTableModel::Name), Qt::ToolTipRole).toString().size() > 0);
        model.setSession(nullptr);
        QCOMPARE(proxy.rowCount(), 0);
    }

    // The dialog's kernels are the comparison's (analyzer/lib/compare): per step and per call, each with
    // its verdict. B holds 4 fills a step where A holds 40, of the same 3 us: it moved most per step, yet
    // per call it is the same kernel, not a faster one.
    void comparisonKernelsPerCallAndPerStep() {
        const Comparison c = compareSessions(*m_a, *m_b);
        QVERIFY2(c.runs, c.error.c_str());
        const analysis::CompareResult& r = *c.result();
        QCOMPARE(c.baseLabel, std::string("models_a.db"));
        QCOMPARE(r.base->inputs, m_a->inputs);
        const analysis::KernelDelta& fill = r.kernels.front();
        QVERIFY(QString::fromStdString(fill.name).contains(QStringLiteral("FillFunctor")));
        QCOMPARE(fill.baseCallsPerStep, 40.0);
        QCOMPARE(fill.newCallsPerStep, 4.0);
        QCOMPARE(fill.basePerStepUs, 120.0);
        QCOMPARE(fill.newPerStepUs, 12.0);
        QCOMPARE(fill.basePerCallUs, 3.0);
        QCOMPARE(fill.perCallRatio.value_or(0), 1.0);
        QCOMPARE(fill.change, analysis::KernelChange::Same);

        CompareKernelModel model;
        QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
        model.setResult(&r);
        QCOMPARE(model.rowCount(), int(r.kernels.size()));
        QCOMPARE(model.data(model.index(0, CompareKernelModel::Verdict)).toString(), QStringLiteral("same"));
        QCOMPARE(model.data(model.index(0, CompareKernelModel::PerCallRatio)).toString(), QStringLiteral("1.000x"));
        QCOMPARE(model.data(model.index(0, CompareKernelModel::PerStepDelta)).toString(), QStringLiteral("−108 us"));
        QCOMPARE(model.data(model.index(0, CompareKernelModel::CallsNew)).toString(), QStringLiteral("4"));
        QCOMPARE(model.headerData(CompareKernelModel::PerStepBase, Qt::Horizontal).toString(),
            QStringLiteral("BASE / step"));
        QSortFilterProxyModel proxy;
        QAbstractItemModelTester proxyTester(&proxy, QAbstractItemModelTester::FailureReportingMode::QtTest);
        proxy.setSourceModel(&model);
        proxy.setSortRole(CompareKernelModel::SortRole);
        proxy.sort(CompareKernelModel::PerStepDelta, Qt::AscendingOrder);
        QVERIFY(
            proxy.data(proxy.index(0, CompareKernelModel::Name)).toString().contains(QStringLiteral("FillFunctor")));
        model.setResult(nullptr);
        QCOMPARE(proxy.rowCount(), 0);
    }

    // A side without training steps cannot be compared per step: the dialog's comparison says so, as
    // `tuneup compare` does (exit 2), instead of comparing anything else.
    void aSideWithoutStepsIsNotCompared() {
        gui::LoadRequest noSteps = request(guitest::dataPath("models_b.db"));
        noSteps.stepRange = "no-such-range";
        const auto b = loadSession(noSteps);
        const Comparison c = compareSessions(*m_a, *b);
        QVERIFY(!c.runs);
        QVERIFY(!c.result());
        QVERIFY2(c.error.find("NEW " + guitest::dataPath("models_b.db") + ": no training steps found") == 0,
            c.error.c_str());
    }

private:
    std::shared_ptr<Session> m_a, m_b;
};

QTEST_MAIN(ModelsTest)
#include "models_test.moc"
