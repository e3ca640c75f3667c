// The item models under QAbstractItemModelTester (which checks every call a view may make): the
// findings, the kernel table through its sort/filter proxy, and a comparison's kernel deltas.

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

    void comparisonPerStep() {
        const Comparison c = compareSessions(*m_a, *m_b);
        QVERIFY(c.perStep);
        QCOMPARE(c.a.count, size_t(12));
        QCOMPARE(c.b.count, size_t(8));
        QCOMPARE(c.a.medianNs, int64_t(20'000'000));
        // Largest change first: the fills, 40 -> 4 per step of 3 us each.
        QVERIFY(QString::fromStdString(c.kernels.front().name).contains(QStringLiteral("FillFunctor")));
        QCOMPARE(c.kernels.front().aNs, int64_t(40 * 3'000));
        QCOMPARE(c.kernels.front().bNs, int64_t(4 * 3'000));
        QCOMPARE(c.kernels.front().aCount, int64_t(40));
        QCOMPARE(c.kernels.front().bCount, int64_t(4));
        for (const KernelDelta& k : c.kernels)
            if (k.name == "ampere_sgemm_128x64_tn") QCOMPARE(k.deltaNs(), int64_t(0));

        CompareKernelModel model;
        QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
        model.setComparison(c);
        QCOMPARE(model.rowCount(), int(c.kernels.size()));
        QCOMPARE(model.data(model.index(0, CompareKernelModel::Change)).toString(), QStringLiteral("-90%"));
        QCOMPARE(model.data(model.index(0, CompareKernelModel::Delta)).toString(), QStringLiteral("−108 us"));
        QCOMPARE(model.headerData(CompareKernelModel::A, Qt::Horizontal).toString(), QStringLiteral("A / step"));
        QSortFilterProxyModel proxy;
        QAbstractItemModelTester proxyTester(&proxy, QAbstractItemModelTester::FailureReportingMode::QtTest);
        proxy.setSourceModel(&model);
        proxy.setSortRole(CompareKernelModel::SortRole);
        proxy.sort(CompareKernelModel::Delta, Qt::AscendingOrder);
        QVERIFY(
            proxy.data(proxy.index(0, CompareKernelModel::Name)).toString().contains(QStringLiteral("FillFunctor")));
    }

    void changeText() {
        QCOMPARE(tuneup::gui::changeText(100, 150), QStringLiteral("+50%"));
        QCOMPARE(tuneup::gui::changeText(100, 95), QStringLiteral("-5.0%"));
        QCOMPARE(tuneup::gui::changeText(0, 10), QStringLiteral("new"));
        QCOMPARE(tuneup::gui::changeText(10, 0), QStringLiteral("gone"));
        QCOMPARE(tuneup::gui::changeText(0, 0), QStringLiteral("—"));
    }

private:
    std::shared_ptr<Session> m_a, m_b;
};

QTEST_MAIN(ModelsTest)
#include "models_test.moc"
