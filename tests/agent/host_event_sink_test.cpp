// HostEventSink + TraceDb: records as threads put them in their rings become trace rows. Push/pop
// nesting (depth, parent) per thread and domain, start/end across threads, registered strings,
// domains, categories, thread names, unmatched ends, payloads of every type, the Python bootstrap's calls
// and samples; read back with SQLite.

#include "event_counts.h"
#include "host_event_sink.h"
#include "sqlite_query.h"
#include "temp_dir.h"
#include "trace_db.h"

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <gtest/gtest.h>
#include <memory>
#include <string>
#include <unistd.h>
#include <vector>

using namespace tuneup::agent;
using tuneup::test::Row;
using tuneup::test::SqliteQuery;

namespace {

constexpr int kPid = 4242;

struct Message {
    MessageKind kind = MessageKind::None;
    std::string text;
    uint64_t registeredId = 0;
};

struct Attributes {
    uint32_t category = 0;
    std::optional<uint32_t> color;
    uint8_t payloadType = 0;
    uint64_t payload = 0;
};

// Builds ring records and hands them to a sink, as the writer does.
class Feeder {
public:
    explicit Feeder(HostEventSink& sink)
        : m_sink(sink) { }

    static Message text(std::string t) { return { MessageKind::Text, std::move(t), 0 }; }
    static Message registered(uint64_t id) { return { MessageKind::Registered, {}, id }; }

    void push(int tid, uint64_t t, uint64_t domain, const Message& m, const Attributes& a = {}) {
        event(HostEventKind::NvtxPush, tid, t, domain, 0, m, a);
    }
    void pop(int tid, uint64_t t, uint64_t domain = 0) { scope(HostEventKind::NvtxPop, tid, t, domain, 0); }
    void start(int tid, uint64_t t, uint64_t domain, uint64_t rangeId, const Message& m, const Attributes& a = {}) {
        event(HostEventKind::NvtxStart, tid, t, domain, rangeId, m, a);
    }
    void end(int tid, uint64_t t, uint64_t domain, uint64_t rangeId) {
        scope(HostEventKind::NvtxEnd, tid, t, domain, rangeId);
    }
    void mark(int tid, uint64_t t, uint64_t domain, const Message& m, const Attributes& a = {}) {
        event(HostEventKind::NvtxMark, tid, t, domain, 0, m, a);
    }
    void name(HostEventKind kind, int tid, uint64_t domain, uint64_t id, const std::string& text) {
        const NvtxNameFixed fixed { domain, id };
        feed(kind, tid, 1, &fixed, sizeof fixed, text);
    }

    // The Python bootstrap's records (python_sites.h).
    void pythonName(int tid, int64_t id, const std::string& text) {
        const NvtxNameFixed fixed { 0, uint64_t(id) };
        feed(HostEventKind::PythonName, tid, 0, &fixed, sizeof fixed, text, EventSource::Python);
    }
    void pythonCall(int tid, uint64_t start, uint64_t end, int64_t call, const PythonFrameFixed& frame) {
        PythonCallFixed fixed {};
        fixed.endNs = end;
        fixed.call = call;
        fixed.frame = frame;
        feed(HostEventKind::PythonCall, tid, start, &fixed, sizeof fixed, {}, EventSource::Python);
    }
    void pythonSample(int tid, uint64_t t, const PythonFrameFixed& frame) {
        feed(HostEventKind::PythonSample, tid, t, &frame, sizeof frame, {}, EventSource::Python);
    }
    void memoryReading(int tid, uint64_t t, const MemoryReadingFixed& reading) {
        feed(HostEventKind::MemoryReading, tid, t, &reading, sizeof reading, {}, EventSource::Python);
    }

    // A mark or push with no message, from `source`.
    void bare(HostEventKind kind, int tid, uint64_t t, EventSource source) {
        const NvtxEventFixed fixed {};
        feed(kind, tid, t, &fixed, sizeof fixed, {}, source);
    }

private:
    void event(HostEventKind kind, int tid, uint64_t t, uint64_t domain, uint64_t rangeId, const Message& m,
        const Attributes& a) {
        NvtxEventFixed fixed {};
        fixed.domain = domain;
        fixed.rangeId = rangeId;
        fixed.registeredId = m.registeredId;
        fixed.messageKind = m.kind;
        fixed.category = a.category;
        if (a.color) {
            fixed.hasColor = 1;
            fixed.color = *a.color;
        }
        fixed.payloadType = a.payloadType;
        fixed.payload = a.payload;
        feed(kind, tid, t, &fixed, sizeof fixed, m.text);
    }
    void scope(HostEventKind kind, int tid, uint64_t t, uint64_t domain, uint64_t rangeId) {
        const NvtxScopeFixed fixed { domain, rangeId };
        feed(kind, tid, t, &fixed, sizeof fixed, {});
    }
    void feed(HostEventKind kind, int tid, uint64_t t, const void* fixed, size_t fixedBytes, const std::string& text,
        EventSource source = EventSource::Nvtx) {
        const size_t size = (sizeof(RecordHeader) + fixedBytes + text.size() + 15) & ~size_t(15);
        RecordHeader header { uint32_t(size), kind, source, uint16_t(text.size()), t };
        std::vector<std::byte> body(size - sizeof header);
        memcpy(body.data(), fixed, fixedBytes);
        memcpy(body.data() + fixedBytes, text.data(), text.size());
        m_sink.consume(tid, header, body.data());
    }

    HostEventSink& m_sink;
};

class HostEventSinkTest : public ::testing::Test {
protected:
    void SetUp() override {
        std::string error;
        m_db = TraceDb::create(m_path, error);
        ASSERT_TRUE(m_db) << error;
        m_db->begin();
        m_sink = std::make_unique<HostEventSink>(*m_db, kPid);
        m_feed = std::make_unique<Feeder>(*m_sink);
    }
    void TearDown() override {
        m_feed.reset();
        m_sink.reset();
        m_db.reset();
    }

    // Commits and closes the file, then opens it for reading.
    std::unique_ptr<SqliteQuery> finish(bool closeOpenRanges = true) {
        if (closeOpenRanges) m_sink->closeOpenRanges();
        m_db->commit();
        m_feed.reset();
        m_sink.reset();
        m_db.reset();
        auto query = std::make_unique<SqliteQuery>(m_path);
        EXPECT_TRUE(query->ok()) << query->error();
        return query;
    }

    tuneup::test::TempDir m_tmp { "tuneup-sink-test" };
    std::string m_dir = m_tmp.path(), m_path = m_dir + "/trace.db";
    std::unique_ptr<TraceDb> m_db;
    std::unique_ptr<HostEventSink> m_sink;
    std::unique_ptr<Feeder> m_feed;
};

// Columns of a range row as text, by name.
const char* kRangeColumns = "SELECT s.value, r.start_ns, r.end_ns, r.tid, r.end_tid, r.domain_id, r.kind, r.depth, "
                            "(SELECT s2.value FROM nvtx_ranges p JOIN strings s2 ON s2.id = p.name_id "
                            " WHERE p.id = r.parent_id), r.category, r.color, r.payload_type, r.payload "
                            "FROM nvtx_ranges r LEFT JOIN strings s ON s.id = r.name_id ";

std::optional<std::string> v(const char* text) {
    return std::string(text);
}
const std::optional<std::string> null = std::nullopt;

} // namespace

TEST_F(HostEventSinkTest, PushPopNestingGivesDepthParentAndTimes) {
    auto& f = *m_feed;
    f.push(100, 10, 0, Feeder::text("A"));
    f.push(100, 20, 0, Feeder::text("B"));
    f.push(100, 30, 0, Feeder::text("C"));
    f.pop(100, 40);
    f.pop(100, 50);
    f.push(100, 60, 0, Feeder::text("D"));
    f.pop(100, 70);
    f.pop(100, 80);
    EXPECT_EQ(m_sink->consumed(), 8u);
    EXPECT_EQ(m_sink->unmatchedEnds(), 0u);
    EXPECT_EQ(m_db->eventsWritten(), 4u);
    auto q = finish();
    const auto rows = q->rows(std::string(kRangeColumns) + "ORDER BY r.start_ns");
    ASSERT_EQ(rows.size(), 4u);
    // name, start, end, tid, end_tid, domain, kind, depth, parent name
    EXPECT_EQ(rows[0],
        (Row { v("A"), v("10"), v("80"), v("100"), null, v("0"), v("1"), v("0"), null, v("0"), null, null, null }));
    EXPECT_EQ(rows[1],
        (Row { v("B"), v("20"), v("50"), v("100"), null, v("0"), v("1"), v("1"), v("A"), v("0"), null, null, null }));
    EXPECT_EQ(rows[2],
        (Row { v("C"), v("30"), v("40"), v("100"), null, v("0"), v("1"), v("2"), v("B"), v("0"), null, null, null }));
    EXPECT_EQ(rows[3],
        (Row { v("D"), v("60"), v("70"), v("100"), null, v("0"), v("1"), v("1"), v("A"), v("0"), null, null, null }));
    // One thread row, for the tid that produced.
    EXPECT_EQ(q->scalar("SELECT count(*) FROM threads WHERE tid = 100 AND pid = 4242"), 1);
}

TEST_F(HostEventSinkTest, StacksAreKeptPerThreadAndPerDomain) {
    auto& f = *m_feed;
    f.name(HostEventKind::NvtxDomainCreate, 1, 5, 5, "five");
    f.push(1, 10, 0, Feeder::text("t1-outer"));
    f.push(2, 11, 0, Feeder::text("t2-outer"));
    f.push(1, 12, 5, Feeder::text("t1-domain5"));
    f.push(2, 13, 0, Feeder::text("t2-inner"));
    f.pop(1, 20, 0); // closes t1-outer, not the domain-5 range pushed after it
    f.pop(2, 21, 0); // t2-inner
    f.pop(1, 22, 5);
    f.pop(2, 23, 0);
    auto q = finish();
    const auto rows = q->rows("SELECT s.value, r.tid, r.end_ns, r.depth, r.domain_id, "
                              "(SELECT s2.value FROM nvtx_ranges p JOIN strings s2 ON s2.id = p.name_id "
                              " WHERE p.id = r.parent_id) "
                              "FROM nvtx_ranges r JOIN strings s ON s.id = r.name_id ORDER BY r.start_ns");
    ASSERT_EQ(rows.size(), 4u);
    EXPECT_EQ(rows[0], (Row { v("t1-outer"), v("1"), v("20"), v("0"), v("0"), null }));
    EXPECT_EQ(rows[1], (Row { v("t2-outer"), v("2"), v("23"), v("0"), v("0"), null }));
    EXPECT_EQ(rows[2], (Row { v("t1-domain5"), v("1"), v("22"), v("0"), v("5"), null }));
    EXPECT_EQ(rows[3], (Row { v("t2-inner"), v("2"), v("21"), v("1"), v("0"), v("t2-outer") }));
}

TEST_F(HostEventSinkTest, StartEndRangesCrossThreads) {
    auto& f = *m_feed;
    f.start(1, 100, 0, 7, Feeder::text("batch"));
    f.start(1, 110, 0, 8, Feeder::text("overlapping"));
    f.end(2, 200, 0, 7); // ended by another thread, out of start order
    f.end(1, 150, 0, 8);
    auto q = finish();
    const auto rows = q->rows(std::string(kRangeColumns) + "ORDER BY r.start_ns");
    ASSERT_EQ(rows.size(), 2u);
    EXPECT_EQ(rows[0],
        (Row { v("batch"), v("100"), v("200"), v("1"), v("2"), v("0"), v("2"), null, null, v("0"), null, null, null }));
    EXPECT_EQ(rows[1],
        (Row { v("overlapping"), v("110"), v("150"), v("1"), v("1"), v("0"), v("2"), null, null, v("0"), null, null,
            null }));
}

TEST_F(HostEventSinkTest, UnmatchedPopsAndEndsAreCountedNotWritten) {
    auto& f = *m_feed;
    f.pop(1, 10); // nothing pushed on thread 1
    f.push(2, 20, 0, Feeder::text("other-thread"));
    f.pop(1, 30); // thread 2's push does not match thread 1's pop
    f.push(1, 35, 3, Feeder::text("domain-3"));
    f.pop(1, 36, 0); // nor does a range of another domain
    f.end(1, 40, 0, 999); // no such range
    f.pop(2, 50);
    f.pop(1, 60, 3);
    EXPECT_EQ(m_sink->unmatchedEnds(), 4u);
    EXPECT_EQ(m_sink->consumed(), 8u);
    auto q = finish();
    EXPECT_EQ(q->scalar("SELECT count(*) FROM nvtx_ranges"), 2);
    EXPECT_EQ(q->scalar("SELECT count(*) FROM nvtx_ranges WHERE end_ns IS NULL"), 0);
}

TEST_F(HostEventSinkTest, RegisteredStringsNameRangesAndMarks) {
    auto& f = *m_feed;
    f.name(HostEventKind::NvtxStringRegister, 1, 0, 42, "step");
    f.push(1, 10, 0, Feeder::registered(42));
    f.pop(1, 20);
    f.push(1, 30, 0, Feeder::registered(43)); // never registered
    f.pop(1, 40);
    f.mark(2, 50, 0, Feeder::registered(42));
    f.push(1, 60, 0, Feeder::text("step")); // the same text as a plain message: the same string row
    f.pop(1, 70);
    auto q = finish();
    EXPECT_EQ(q->rows("SELECT s.value FROM nvtx_ranges r LEFT JOIN strings s ON s.id = r.name_id ORDER BY start_ns"),
        (std::vector<Row> { { v("step") }, { null }, { v("step") } }));
    EXPECT_EQ(q->text("SELECT s.value FROM nvtx_marks m JOIN strings s ON s.id = m.name_id"), v("step"));
    EXPECT_EQ(q->scalar("SELECT count(*) FROM strings WHERE value = 'step'"), 1);
}

TEST_F(HostEventSinkTest, PythonCallsAndSamplesGetTheirNamesAndThreads) {
    auto& f = *m_feed;
    f.pythonName(7, 1, "/home/me/train.py");
    f.pythonName(7, 2, "main");
    f.pythonName(7, 3, "Tensor.item");
    f.pythonName(7, 4, "main"); // the same text under another number: one string row
    // Handed over on thread 7 (the bootstrap at exit) for the thread that made them, 9.
    f.pythonCall(7, 100, 150, 3, { 9, 1, 57, 2 });
    f.pythonCall(7, 200, 190, 3, { 9, 1, 58, 99 }); // an end before the start; an unknown function number
    f.pythonSample(8, 300, { 9, 1, 60, 4 });
    f.pythonSample(8, 310, { 9, 0, 0, 0 }); // nothing known: NULLs, not a broken row
    auto q = finish();
    EXPECT_EQ(q->rows("SELECT p.start_ns, p.end_ns, p.tid, c.value, fi.value, p.line, fu.value FROM python_calls p "
                      "LEFT JOIN strings c ON c.id = p.call_id LEFT JOIN strings fi ON fi.id = p.file_id "
                      "LEFT JOIN strings fu ON fu.id = p.function_id ORDER BY p.id"),
        (std::vector<Row> {
            { v("100"), v("150"), v("9"), v("Tensor.item"), v("/home/me/train.py"), v("57"), v("main") },
            { v("200"), v("200"), v("9"), v("Tensor.item"), v("/home/me/train.py"), v("58"), null } }));
    EXPECT_EQ(q->rows("SELECT p.ts_ns, p.tid, fi.value, p.line, fu.value FROM python_samples p LEFT JOIN strings fi "
                      "ON fi.id = p.file_id LEFT JOIN strings fu ON fu.id = p.function_id ORDER BY p.id"),
        (std::vector<Row> { { v("300"), v("9"), v("/home/me/train.py"), v("60"), v("main") },
            { v("310"), v("9"), null, null, null } }));
    EXPECT_EQ(q->scalar("SELECT count(*) FROM strings WHERE value = 'main'"), 1);
    EXPECT_EQ(q->scalar("SELECT count(*) FROM threads WHERE tid = 9"), 1); // the thread that made them
}

// The bootstrap's reading of the caching allocator: one event, a memory_events row and a memory_peaks row on the
// thread that read it.
TEST_F(HostEventSinkTest, AllocatorReadingsAreOneEventOfTwoRows) {
    auto& f = *m_feed;
    const MemoryReadingFixed reading { 0, 100, 2'000'000'000, 8'000'000'000, 6'000'000'000, 8'000'000'000 };
    f.memoryReading(9, 500, reading);
    const MemoryReadingFixed totalsOnly { 1, 500, 1, 2, -1, -1 };
    f.memoryReading(9, 600, totalsOnly);
    EXPECT_EQ(m_sink->consumed(), 2u);
    EXPECT_EQ(m_sink->written().counts().at(9)[size_t(EventSource::Python)], 2u);
    auto q = finish();
    EXPECT_EQ(q->rows("SELECT ts_ns, device_id, source, allocated_bytes, reserved_bytes, tid FROM memory_events "
                      "ORDER BY ts_ns"),
        (std::vector<Row> { { v("500"), v("0"), v("2"), v("2000000000"), v("8000000000"), v("9") },
            { v("600"), v("1"), v("2"), v("1"), v("2"), v("9") } }));
    EXPECT_EQ(q->rows("SELECT start_ns, end_ns, device_id, tid, allocated_bytes, reserved_bytes FROM memory_peaks"),
        (std::vector<Row> { { v("100"), v("500"), v("0"), v("9"), v("6000000000"), v("8000000000") } }));
    EXPECT_EQ(q->scalar("SELECT count(*) FROM threads WHERE tid = 9"), 1);
}

TEST_F(HostEventSinkTest, DomainsGetRowsWithTheirNames) {
    auto& f = *m_feed;
    f.name(HostEventKind::NvtxDomainCreate, 1, 9, 9, "train");
    f.push(1, 10, 9, Feeder::text("in-train"));
    f.pop(1, 20, 9);
    f.mark(1, 30, 11, Feeder::text("unknown-domain")); // a handle made before the agent attached
    auto q = finish();
    EXPECT_EQ(q->rows("SELECT d.id, s.value FROM nvtx_domains d LEFT JOIN strings s ON s.id = d.name_id ORDER BY d.id"),
        (std::vector<Row> { { v("0"), null }, { v("9"), v("train") }, { v("11"), null } }));
    EXPECT_EQ(q->scalar("SELECT domain_id FROM nvtx_ranges"), 9);
    EXPECT_EQ(q->scalar("SELECT domain_id FROM nvtx_marks"), 11);
}

TEST_F(HostEventSinkTest, CategoriesAreNamedPerDomain) {
    auto& f = *m_feed;
    f.name(HostEventKind::NvtxDomainCreate, 1, 9, 9, "train");
    f.name(HostEventKind::NvtxCategoryName, 1, 9, 7, "optimizer");
    f.name(HostEventKind::NvtxCategoryName, 1, 0, 3, "default-category");
    f.name(HostEventKind::NvtxCategoryName, 1, 0, 3, "renamed");
    f.push(1, 10, 9, Feeder::text("opt"), { 7, std::nullopt, 0, 0 });
    f.pop(1, 20, 9);
    auto q = finish();
    EXPECT_EQ(
        q->rows("SELECT c.domain_id, c.category, s.value FROM nvtx_categories c JOIN strings s ON s.id = c.name_id "
                "ORDER BY 1, 2"),
        (std::vector<Row> { { v("0"), v("3"), v("renamed") }, { v("9"), v("7"), v("optimizer") } }));
    EXPECT_EQ(q->scalar("SELECT category FROM nvtx_ranges"), 7);
}

TEST_F(HostEventSinkTest, ThreadNamesFromNvtxAndFromTheKernel) {
    auto& f = *m_feed;
    f.name(HostEventKind::NvtxThreadName, 55, 0, 55, "loader");
    f.mark(55, 10, 0, Feeder::text("x"));
    // A real thread of this process: named from /proc/self/task/<tid>/comm when it first produces.
    const int self = int(gettid());
    f.mark(self, 20, 0, Feeder::text("y"));
    char comm[64] = {};
    FILE* file = fopen(("/proc/self/task/" + std::to_string(self) + "/comm").c_str(), "r");
    ASSERT_TRUE(file);
    ASSERT_TRUE(fgets(comm, sizeof comm, file));
    fclose(file);
    comm[strcspn(comm, "\n")] = '\0';
    auto q = finish();
    EXPECT_EQ(q->rows("SELECT t.tid, t.pid, s.value FROM threads t LEFT JOIN strings s ON s.id = t.name_id ORDER BY "
                      "t.tid = 55 DESC"),
        (std::vector<Row> {
            { v("55"), v("4242"), v("loader") }, { std::to_string(self), v("4242"), std::string(comm) } }));
}

TEST_F(HostEventSinkTest, PayloadsAreStoredAsTheirTypesSay) {
    auto& f = *m_feed;
    auto bitsOf = [](auto value) {
        uint64_t bits = 0;
        memcpy(&bits, &value, sizeof value);
        return bits;
    };
    struct Case {
        uint8_t type;
        uint64_t bits;
        const char* sqlType;
        const char* value;
    };
    const Case cases[] = {
        { 1, 5, "integer", "5" },
        { 1, (uint64_t(1) << 63) + 1, "real", nullptr }, // beyond int64: stored as a real
        { 2, uint64_t(int64_t(-7)), "integer", "-7" },
        { 3, bitsOf(2.5), "real", "2.5" },
        { 4, 0xFFFFFFFF00000003ull, "integer", "3" }, // only the low 32 bits count
        { 5, uint64_t(uint32_t(int32_t(-2))), "integer", "-2" },
        { 6, bitsOf(1.5f), "real", "1.5" },
        { 7, 123, "null", nullptr }, // extended payload types are not decoded
        { 0, 0, "null", nullptr },
    };
    uint64_t t = 1;
    for (const Case& c : cases)
        f.mark(1, t++, 0, Feeder::text("m"), { 0, std::nullopt, c.type, c.bits });
    // Ranges carry payloads the same way.
    f.push(1, t++, 0, Feeder::text("r"), { 0, std::nullopt, 3, bitsOf(-0.25) });
    f.pop(1, t++);
    auto q = finish();
    const auto rows = q->rows("SELECT payload_type, typeof(payload), payload FROM nvtx_marks ORDER BY ts_ns");
    ASSERT_EQ(rows.size(), std::size(cases));
    for (size_t i = 0; i < rows.size(); ++i) {
        const Case& c = cases[i];
        SCOPED_TRACE("case " + std::to_string(i));
        EXPECT_EQ(rows[i][0], c.type ? std::optional<std::string>(std::to_string(c.type)) : null);
        EXPECT_EQ(rows[i][1], v(c.sqlType));
        if (c.value) {
            EXPECT_EQ(rows[i][2], v(c.value));
        }
    }
    EXPECT_NEAR(std::stod(*rows[1][2]) / 9223372036854775808.0, 1.0, 1e-12);
    EXPECT_EQ(q->rows("SELECT payload_type, payload FROM nvtx_ranges"), (std::vector<Row> { { v("3"), v("-0.25") } }));
}

TEST_F(HostEventSinkTest, ColorsAndCategoriesAreKept) {
    auto& f = *m_feed;
    f.push(1, 10, 0, Feeder::text("green"), { 4, 0xFF00FF00u, 0, 0 });
    f.pop(1, 20);
    f.mark(1, 30, 0, Feeder::text("plain"));
    f.mark(1, 40, 0, Feeder::text("red"), { 0, 0xFFFF0000u, 0, 0 });
    auto q = finish();
    EXPECT_EQ(q->rows("SELECT category, color FROM nvtx_ranges"), (std::vector<Row> { { v("4"), v("4278255360") } }));
    EXPECT_EQ(
        q->rows("SELECT color FROM nvtx_marks ORDER BY ts_ns"), (std::vector<Row> { { null }, { v("4294901760") } }));
}

TEST_F(HostEventSinkTest, MessagesWithoutTextAndEmptyText) {
    auto& f = *m_feed;
    f.mark(1, 10, 0, {}); // no message at all
    f.mark(1, 20, 0, Feeder::text("")); // an empty message
    f.mark(1, 30, 0, Feeder::text("ünïcödé ✓"));
    auto q = finish();
    EXPECT_EQ(q->rows("SELECT s.value FROM nvtx_marks m LEFT JOIN strings s ON s.id = m.name_id ORDER BY ts_ns"),
        (std::vector<Row> { { null }, { v("") }, { v("ünïcödé ✓") } }));
}

TEST_F(HostEventSinkTest, OpenRangesAreWrittenWithoutAnEnd) {
    auto& f = *m_feed;
    f.push(1, 10, 0, Feeder::text("outer"));
    f.push(1, 20, 0, Feeder::text("inner"));
    f.pop(1, 30);
    f.push(1, 40, 0, Feeder::text("never-closed-child"));
    f.start(2, 50, 0, 77, Feeder::text("never-ended"));
    auto q = finish(true);
    EXPECT_EQ(q->rows("SELECT s.value, r.end_ns, r.depth, r.kind FROM nvtx_ranges r JOIN strings s ON s.id = r.name_id "
                      "ORDER BY r.start_ns"),
        (std::vector<Row> { { v("outer"), null, v("0"), v("1") }, { v("inner"), v("30"), v("1"), v("1") },
            { v("never-closed-child"), null, v("1"), v("1") }, { v("never-ended"), null, null, v("2") } }));
}

TEST_F(HostEventSinkTest, MarksKeepTimeThreadAndDomain) {
    auto& f = *m_feed;
    f.name(HostEventKind::NvtxDomainCreate, 3, 6, 6, "data");
    f.mark(3, 123, 6, Feeder::text("epoch"), { 2, std::nullopt, 4, 3 });
    auto q = finish();
    EXPECT_EQ(q->rows("SELECT m.ts_ns, m.tid, m.domain_id, s.value, m.category, m.payload_type, m.payload "
                      "FROM nvtx_marks m JOIN strings s ON s.id = m.name_id"),
        (std::vector<Row> { { v("123"), v("3"), v("6"), v("epoch"), v("2"), v("4"), v("3") } }));
}

TEST_F(HostEventSinkTest, RangeIdsAndStringsContinueInAReopenedFile) {
    auto& f = *m_feed;
    m_db->setMeta("format", "tuneup-trace"); // only a tuneup trace is ever continued
    f.push(1, 10, 0, Feeder::text("before-exec"));
    f.pop(1, 20);
    finish();

    std::string error;
    auto db = TraceDb::reopen(m_path, error);
    ASSERT_TRUE(db) << error;
    db->begin();
    {
        HostEventSink sink(*db, kPid);
        Feeder again(sink);
        again.push(1, 30, 0, Feeder::text("after-exec"));
        again.pop(1, 40);
        again.push(1, 50, 0, Feeder::text("before-exec"));
        again.pop(1, 60);
    }
    db->commit();
    db.reset();
    SqliteQuery q(m_path);
    EXPECT_EQ(q.rows("SELECT r.id, s.value FROM nvtx_ranges r JOIN strings s ON s.id = r.name_id ORDER BY r.start_ns"),
        (std::vector<Row> { { v("1"), v("before-exec") }, { v("2"), v("after-exec") }, { v("3"), v("before-exec") } }));
    EXPECT_EQ(q.scalar("SELECT count(*) FROM strings WHERE value = 'before-exec'"), 1);
}

TEST_F(HostEventSinkTest, RecordsWrittenAndDiscardedAreCountedByThreadAndSource) {
    auto& f = *m_feed;
    f.push(7, 10, 0, Feeder::text("a"));
    f.pop(7, 20);
    f.bare(HostEventKind::NvtxMark, 7, 30, EventSource::Python);
    f.bare(HostEventKind::NvtxMark, 8, 40, EventSource::Python);
    m_sink->countWritten(kPid, EventSource::HostSampler);
    RecordHeader header {};
    header.source = EventSource::Gemm;
    m_sink->discard(8, header);
    m_sink->discard(8, header);
    EXPECT_EQ(m_sink->consumed(), 4u);
    EXPECT_EQ(m_sink->discarded(), 2u);
    const auto& written = m_sink->written().counts();
    ASSERT_EQ(written.size(), 3u);
    EXPECT_EQ(written.at(7)[size_t(EventSource::Nvtx)], 2u);
    EXPECT_EQ(written.at(7)[size_t(EventSource::Python)], 1u);
    EXPECT_EQ(written.at(8)[size_t(EventSource::Python)], 1u);
    EXPECT_EQ(written.at(kPid)[size_t(EventSource::HostSampler)], 1u);
    EXPECT_EQ(m_sink->discardedBySource().counts().at(8)[size_t(EventSource::Gemm)], 2u);

    // The table: one row per (source, thread), and CUPTI's counts with no thread.
    SourceCounts::setTotals(EventSource::Cupti, 60, 1);
    SourceCounts::setTotals(EventSource::Cupti, 90, 4); // running totals: the last report counts
    SourceCounts::addWritten(EventSource::Cupti, 10);
    SourceCounts::addDropped(EventSource::Cupti, 1);
    for (const EventCountRow& row : collectEventCounts(m_sink->written(), m_sink->discardedBySource()))
        m_db->addEventCount(eventSourceName(row.source), row.tid, row.written, row.dropped);
    SourceCounts::resetAfterFork();
    auto q = finish();
    EXPECT_EQ(q->rows("SELECT source, tid, written, dropped FROM event_counts ORDER BY source, tid"),
        (std::vector<Row> { { v("cupti"), null, v("100"), v("5") }, { v("gemm"), v("8"), v("0"), v("2") },
            { v("host_sampler"), v("4242"), v("1"), v("0") }, { v("nvtx"), v("7"), v("2"), v("0") },
            { v("python"), v("7"), v("1"), v("0") }, { v("python"), v("8"), v("1"), v("0") } }));
}
