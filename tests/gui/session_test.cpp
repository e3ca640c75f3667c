// Loading without a window: a recorded run (written with the analyzer's exporter) and its DataLoader
// worker's file, the timeline's tracks and lanes, where a finding's evidence takes the view, the
// kernel rows, cancelling, and what a bad file says.

#include "all_rules.h"
#include "app/error_message.h"
#include "app/rule_docs.h"
#include "app/session.h"
#include "gui_test_support.h"
#include "import/import_error.h"
#include "job/job_files.h"
#include "model/trace_builder.h"
#include "timeline/event_info.h"
#include "timeline/evidence_focus.h"

#include <QtTest>
#include <filesystem>
#include <fstream>

using namespace tuneup;
using namespace tuneup::gui;
using tuneup::guitest::request;
namespace fs = std::filesystem;

namespace {

const analysis::Finding* findingOf(const Session& s, const std::string& rule) {
    for (const analysis::Finding* f : s.report().ranked())
        if (f->ruleId == rule) return f;
    return nullptr;
}

} // namespace

class SessionTest : public QObject {
    Q_OBJECT
private slots:
    void initTestCase() {
        const fs::path dir = fs::path(guitest::dataPath("session"));
        fs::remove_all(dir);
        fs::create_directories(dir);
        m_run = guitest::writeTrace(guitest::syntheticRun(12, 40), (dir / "run.db").string());
        // A DataLoader worker of the same run: one thread reading files.
        analysis::TraceBuilder b(analysis::SourceFormat::TuneupDb, "worker");
        b.info().metadata.emplace_back("role", "dataloader-worker");
        const auto thread = b.thread(4242, 4242);
        for (int i = 0; i < 12; ++i) {
            analysis::Annotation a;
            a.startNs = 1'000'000'000 + i * 20'000'000;
            a.endNs = a.startNs + 15'000'000;
            a.thread = thread;
            a.name = b.intern("DataLoader worker: load batch");
            b.addAnnotation(a);
        }
        m_worker = guitest::writeTrace(b.finish(), (dir / "run.pid4242.db").string());
        // Not ours: another run's worker, and a file that only looks alike.
        guitest::writeTrace(guitest::syntheticRun(2, 1), (dir / "other.pid1.db").string());
        std::ofstream((dir / "run.pid12.db.bak").string()) << "x";
    }

    void findsTheOtherProcessesOfARun() {
        auto beside = [](const std::string& path) {
            std::vector<std::string> paths;
            for (const analysis::JobFile& f : analysis::processesBeside(analysis::classifyJobFile(path)))
                paths.push_back(f.path);
            return paths;
        };
        QCOMPARE(beside(m_run), std::vector<std::string> { m_worker });
        QVERIFY(beside(m_worker).empty());
        QVERIFY(beside("/nonexistent/run.db").empty());
        QVERIFY(beside("trace.json.gz").empty());
    }

    void loadsTheRunWithItsWorker() {
        const auto s = loadSession(request(m_run));
        QCOMPARE(s->rankCount(), size_t(1));
        QCOMPARE(s->job->helperModels.size(), size_t(1));
        QCOMPARE(s->labels, (std::vector<std::string> { "run.db", "run.pid4242.db (DataLoader worker)" }));
        QVERIFY(s->steps());
        QCOMPARE(s->steps()->detection.steps.size(), size_t(12));
        QVERIFY(findingOf(*s, "zero-grad-fill"));
        QVERIFY(findingOf(*s, "pageable-memcpy"));

        // Tracks: the steps, the GPU stream, the main thread and its sampled states, the worker's thread.
        const TimelineData& t = s->timeline;
        QCOMPARE(t.tracks.size(), size_t(5));
        QCOMPARE(t.tracks[0].type, TrackType::Steps);
        QCOMPARE(t.tracks[0].lanes.size(), size_t(2));
        QCOMPARE(t.tracks[0].lanes[0].size(), size_t(12));
        QVERIFY(t.tracks[0].lanes[1].size() >= 12); // idle gaps: at least the DataLoader waits
        QCOMPARE(t.tracks[1].type, TrackType::Gpu);
        QCOMPARE(t.tracks[1].title, std::string("stream 7"));
        QCOMPARE(t.tracks[1].group, std::string("run.db · GPU 0 (NVIDIA A100-SXM4-80GB)"));
        QCOMPARE(t.tracks[1].lanes.size(), size_t(1));
        QCOMPARE(t.tracks[1].events(), size_t(12 * (40 + 18 + 1)));
        QCOMPARE(t.tracks[2].type, TrackType::Thread);
        QCOMPARE(t.tracks[2].title, std::string("thread 100 · python3"));
        // ProfilerStep > (DataLoader wait | zero_grad | forward) > CUDA calls: three rows.
        QCOMPARE(t.tracks[2].lanes.size(), size_t(3));
        // Under it, what the thread did: running, then blocked in read for each DataLoader wait.
        const Track& states = t.tracks[3];
        QCOMPARE(states.type, TrackType::ThreadState);
        QCOMPARE(states.title, std::string("thread 100 · state (sampled)"));
        QCOMPARE(states.group, t.tracks[2].group);
        QCOMPARE(states.lanes.size(), size_t(1));
        const Lane& sampled = states.lanes[0];
        QCOMPARE(sampled.size(), size_t(12 * 3));
        QCOMPARE(t.name(0, sampled.names[1]), std::string_view("waiting (read)"));
        QCOMPARE(sampled.kinds[1], EventKind::HostWaiting);
        QCOMPARE(sampled.ends[1] - sampled.starts[1], int64_t(5'000'000));
        QCOMPARE(t.name(0, sampled.names[2]), std::string_view("running"));
        QCOMPARE(sampled.kinds[2], EventKind::HostRunning);
        QCOMPARE(sampled.ends.back(), t.tracks[2].lanes[0].ends.back()); // the last holds to the thread's end
        const EventId wait { 0, Source::ThreadState, sampled.rows[1] };
        QCOMPARE(t.place(wait)->track, 3u);
        const EventInfo info = describeEvent(t, wait);
        QCOMPARE(info.name, std::string("waiting (read)"));
        QVERIFY(std::find(info.fields.begin(), info.fields.end(),
                    std::pair<std::string, std::string> { "system call", "read (0 on x86_64)" })
            != info.fields.end());
        QCOMPARE(info.span, (TimeRange { sampled.starts[1], sampled.ends[1] }));
        QCOMPARE(describeEvent(t, { 0, Source::ThreadState, sampled.rows.back() }).span.endNs, sampled.ends.back());
        QCOMPARE(t.tracks[4].model, 1u);
        QVERIFY(t.tracks[4].group.find("DataLoader worker") != std::string::npos);

        // Every lane is sorted and never overlaps: what the level of detail relies on.
        for (const Track& track : t.tracks)
            for (const Lane& lane : track.lanes)
                for (size_t i = 1; i < lane.size(); ++i) {
                    QVERIFY(lane.starts[i] >= lane.ends[i - 1]);
                    QVERIFY(lane.ends[i] >= lane.starts[i]);
                }
        QCOMPARE(t.span.startNs, int64_t(1'000'000'000));
    }

    void idleInsideGraphReplaysHasItsOwnKind() {
        // HTA negative_queue rank 0: 393 gaps between the nodes of its CUDA graph replays over 5 steps (a Python
        // count, tests/analyzer/graph_replay_breakdown_test.cpp). The host had queued them: their own colour,
        // and the details say so rather than blaming launch overhead.
        TUNEUP_REQUIRE_SHARED_TRACE(trace, "hta/tests/data/negative_queue_length_values_check/rank0.json.gz");
        const auto s = loadSession(request(trace));
        const TimelineData& t = s->timeline;
        QCOMPARE(t.tracks[0].type, TrackType::Steps);
        const Lane& gaps = t.tracks[0].lanes[1];
        size_t inGraph = 0, first = gaps.size();
        for (size_t i = 0; i < gaps.size(); ++i)
            if (gaps.kinds[i] == EventKind::IdleGraph) {
                ++inGraph;
                first = std::min(first, i);
            }
        QCOMPARE(inGraph, size_t(393));
        const EventInfo info = describeEvent(t, { t.tracks[0].model, gaps.sources[first], gaps.rows[first] });
        bool said = false;
        for (const auto& [label, value] : info.fields)
            said = said || label == "inside a CUDA graph replay";
        QVERIFY(said);
        QVERIFY(kindStyle(EventKind::IdleGraph).label.find("CUDA graph") != std::string_view::npos);
    }

    void eventsAreFoundWhereTheyAreDrawn() {
        const auto s = loadSession(request(m_run));
        const TimelineData& t = s->timeline;
        for (uint32_t track = 0; track < t.tracks.size(); ++track)
            for (uint32_t lane = 0; lane < t.tracks[track].lanes.size(); ++lane) {
                const Lane& l = t.tracks[track].lanes[lane];
                for (size_t i = 0; i < l.size(); i += 7) {
                    const EventId id { t.tracks[track].model, l.sources[i], l.rows[i] };
                    const auto place = t.place(id);
                    QVERIFY(place);
                    QCOMPARE(place->track, track);
                    QCOMPARE(place->lane, lane);
                    const auto span = eventSpan(t, id);
                    QVERIFY(span);
                    QCOMPARE(span->startNs, l.starts[i]);
                }
            }
        // A kernel's details say what launched it.
        const Lane& gpu = t.tracks[1].lanes[0];
        const EventInfo info = describeEvent(t, { 0, gpu.sources[0], gpu.rows[0] });
        QCOMPARE(info.kind, std::string("memory copy"));
        bool launched = false;
        for (const auto& [label, value] : info.fields)
            launched |= label == "launched by" && value == "cudaMemcpyAsync";
        QVERIFY(launched);
    }

    void startsFittedToAFewTypicalSteps() {
        const auto s = loadSession(request(m_run));
        const TimeRange r = initialRange(s->timeline);
        const auto& steps = s->steps()->detection.steps;
        // Three steps from the middle of the run, with a little margin.
        QVERIFY(r.duration() > 3 * 20'000'000 && r.duration() < 3 * 21'000'000);
        QVERIFY(r.startNs > steps[3].startNs);
        QVERIFY(r.endNs < steps[10].endNs);
    }

    void evidenceFocusOnTheFirstZeroGradAndItsFills() {
        const auto s = loadSession(request(m_run));
        const analysis::Finding* f = findingOf(*s, "zero-grad-fill");
        QVERIFY(f);
        const auto focus = evidenceFocus(s->timeline, 0, f->evidence, s->steps()->medianStepNs());
        QVERIFY(focus);
        QVERIFY(!f->evidence.spans.empty());
        const auto& first = f->evidence.spans.front();
        QVERIFY(focus->range.startNs <= first.startNs);
        // The first call's 40 fills run within 0.3 ms after it; the range stops well before the next step's call.
        QVERIFY(focus->range.endNs < first.startNs + 1'000'000);
        QVERIFY(focus->select.valid());
        QCOMPARE(focus->select.source, Source::Kernel);
        const auto span = eventSpan(s->timeline, focus->select);
        QVERIFY(span && focus->range.contains(*span));
        QVERIFY(s->timeline.name(0, s->timeline.tracks[1].lanes[0].names[0]).size() > 0);
    }

    void evidenceFocusWithEventsOnly() {
        const auto s = loadSession(request(m_run));
        analysis::Evidence e;
        const Lane& gpu = s->timeline.tracks[1].lanes[0];
        e.events.push_back({ analysis::EventTable::Kernel, gpu.rows[100] });
        e.events.push_back({ analysis::EventTable::Kernel, gpu.rows[5] });
        const auto focus = evidenceFocus(s->timeline, 0, e, 0);
        QVERIFY(focus);
        QCOMPARE(focus->select, (EventId { 0, Source::Kernel, gpu.rows[5] }));
        QVERIFY(!evidenceFocus(s->timeline, 0, analysis::Evidence {}, 0));
    }

    void kernelRowsOverTheJob() {
        const auto s = loadSession(request(m_run));
        QVERIFY(!s->kernels.empty());
        int64_t total = 0, count = 0;
        for (const KernelRow& k : s->kernels) {
            total += k.totalNs;
            count += k.count;
            QVERIFY(k.minNs <= k.meanNs() && k.meanNs() <= k.maxNs);
        }
        QCOMPARE(total, s->kernelTotalNs);
        QCOMPARE(count, int64_t(12 * 58));
        // Largest first: 6 x 900 us of ampere_sgemm_128x64_tn per step.
        QCOMPARE(s->kernels.front().name, std::string("ampere_sgemm_128x64_tn"));
        QCOMPARE(s->kernels.front().kernelClass, analysis::KernelClass::Gemm);
        QCOMPARE(s->kernels.front().totalNs, int64_t(12 * 6 * 900'000));
    }

    void progressAndCancel() {
        std::vector<double> fractions;
        std::atomic<bool> cancel { false };
        LoadProgress progress;
        progress.cancel = &cancel;
        progress.report = [&](const std::string&, double f) { fractions.push_back(f); };
        loadSession(request(m_run), progress);
        QVERIFY(fractions.size() >= 3);
        QVERIFY(std::is_sorted(fractions.begin(), fractions.end()));
        QCOMPARE(fractions.back(), 1.0);
        // Cancelled from the first report on: throws, never returns half a session.
        progress.report = [&](const std::string&, double) { cancel = true; };
        cancel = false;
        QVERIFY_THROWS_EXCEPTION(LoadCancelled, loadSession(request(m_run), progress));
    }

    void cancelsInsideALongImport() {
        TUNEUP_REQUIRE_SHARED_TRACE(path, "param/et_replay/tests/inputs/resnet_kineto.json.gz");
        // Cancelled as the importer reports its first bytes: the exception comes back through its threads.
        std::atomic<bool> cancel { false };
        LoadProgress progress;
        progress.cancel = &cancel;
        int reports = 0;
        progress.report = [&](const std::string&, double f) {
            if (f > 0 && ++reports == 1) cancel = true;
        };
        bool cancelled = false;
        try {
            loadSession(request(path), progress);
        } catch (const LoadCancelled&) {
            cancelled = true;
        } catch (const std::exception& e) {
            QFAIL(e.what());
        }
        QVERIFY(cancelled);
    }

    void everyBuiltinRuleHasItsDocEmbedded() {
        for (const auto& rule : rules::builtinRules()) {
            const QString id = QString::fromUtf8(rule->info().id.data(), qsizetype(rule->info().id.size()));
            QVERIFY2(builtinRuleDoc(id).startsWith(QStringLiteral("# ") + id), qPrintable(id));
        }
        QVERIFY(builtinRuleDoc(QStringLiteral("no-such-rule")).isEmpty());
    }

    void badFilesSayWhatIsWrong() {
        const std::string empty = guitest::dataPath("empty.json");
        std::ofstream(empty).close();
        const std::string cut = guitest::dataPath("cut.json");
        std::ofstream(cut) << R"({"traceEvents": [{"ph": "X", "name": "aten::mm", "ts": 1, "dur": )";
        struct Case {
            std::string path;
            const char* text;
        };
        for (const Case& c : { Case { "/nonexistent/run.db", "/nonexistent/run.db" }, Case { empty, "empty" },
                 Case { cut, "cut.json" } }) {
            try {
                loadSession(request(c.path));
                QFAIL("no error");
            } catch (...) {
                const ErrorMessage m = describeCurrentException({ c.path });
                QVERIFY2(m.text.contains(QString::fromStdString(c.text)), qPrintable(m.text));
                QVERIFY(m.title.startsWith(QStringLiteral("Cannot open")));
                QVERIFY(!m.advice.isEmpty());
            }
        }
    }

private:
    std::string m_run, m_worker;
};

QTEST_GUILESS_MAIN(SessionTest)
#include "session_test.moc"
