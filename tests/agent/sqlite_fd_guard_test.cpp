// The agent's SQLite never touches a descriptor the program closed and took back for a file of its
// own (sqlite_fd_guard.h): in one process, a trace file is written, its descriptors are closed behind
// SQLite's back and their numbers given to "the program's" files; SQLite's next writes, locks, maps
// and closes must leave those files alone, and the file must be writable again after reconnect().

#include "sqlite_fd_guard.h"
#include "sqlite_query.h"
#include "temp_dir.h"
#include "trace_db.h"

#include <climits>
#include <fcntl.h>
#include <filesystem>
#include <gtest/gtest.h>
#include <unistd.h>
#include <vector>

using namespace tuneup::agent;

namespace {

const std::string kMine = "the program's own data\n";

// The descriptors this process has open on `path`, its WAL and shared memory.
std::vector<int> descriptorsOf(const std::string& path) {
    std::vector<int> fds;
    for (const auto& entry : std::filesystem::directory_iterator("/proc/self/fd")) {
        char target[PATH_MAX] = {};
        if (readlink(entry.path().c_str(), target, sizeof target - 1) <= 0) continue;
        const std::string name = target;
        if (name == path || name == path + "-wal" || name == path + "-shm")
            fds.push_back(std::stoi(entry.path().filename().string()));
    }
    return fds;
}

// Closes `fd` and opens a file of "the program" that gets exactly that number.
void takeOver(int fd, const std::string& path) {
    close(fd);
    const int mine = open(path.c_str(), O_RDWR | O_CREAT | O_TRUNC, 0644);
    ASSERT_GE(mine, 0);
    ASSERT_EQ(write(mine, kMine.data(), kMine.size()), ssize_t(kMine.size()));
    if (mine != fd) {
        ASSERT_EQ(dup2(mine, fd), fd);
        close(mine);
    }
}

std::string contentOf(int fd) {
    char buffer[4096];
    const ssize_t n = pread(fd, buffer, sizeof buffer, 0);
    return n < 0 ? "<closed>" : std::string(buffer, size_t(n));
}

MarkRow mark(uint64_t ts, int64_t nameId) {
    MarkRow row;
    row.tsNs = ts;
    row.tid = 7;
    row.nameId = nameId;
    return row;
}

} // namespace

TEST(SqliteFdGuard, DescriptorsTheProgramTookOverAreNeverWrittenNorClosed) {
    TraceDb::initializeLibrary();
    tuneup::test::TempDir dir("tuneup_fd_guard");
    const std::string path = dir.path() + "/run.db";
    std::string error;
    auto db = TraceDb::create(path, error);
    ASSERT_TRUE(db) << error;
    db->begin();
    db->addDomain(0, std::nullopt);
    const int64_t name = db->intern("before");
    for (int i = 0; i < 100; ++i)
        db->addMark(mark(1000 + i, name));
    ASSERT_TRUE(db->commit());
    // The transaction in progress holds its locks when the program strikes (the agent checks its
    // descriptors between transactions: writer.cpp).
    db->begin();
    db->addMark(mark(2000, name));
    EXPECT_TRUE(sqliteFdsIntact());

    const std::vector<int> fds = descriptorsOf(path);
    ASSERT_GE(fds.size(), 2u) << "the database and its WAL at least";
    for (size_t i = 0; i < fds.size(); ++i)
        takeOver(fds[i], dir.path() + "/mine." + std::to_string(i));
    EXPECT_FALSE(sqliteFdsIntact());

    // Enough rows to spill pages and a commit: every write would land in the program's files.
    const int64_t after = db->intern("after");
    for (int i = 0; i < 20000; ++i)
        db->addMark(mark(5000 + i, after));
    EXPECT_FALSE(db->commit());
    EXPECT_TRUE(db->failed());
    for (int fd : fds)
        EXPECT_EQ(contentOf(fd), kMine) << "descriptor " << fd;

    // Open again by path: the file goes on from its last commit.
    ASSERT_TRUE(db->reconnect()) << db->failure();
    db->begin();
    const int64_t again = db->intern("again");
    for (int i = 0; i < 10; ++i)
        db->addMark(mark(90000 + i, again));
    ASSERT_TRUE(db->commit());
    db.reset(); // closes SQLite's descriptors: the program's stay open

    for (int fd : fds) {
        EXPECT_NE(fcntl(fd, F_GETFD), -1) << "descriptor " << fd << " was closed";
        EXPECT_EQ(contentOf(fd), kMine) << "descriptor " << fd;
        close(fd);
    }
    tuneup::test::SqliteQuery q(path);
    ASSERT_TRUE(q.ok()) << q.error();
    EXPECT_EQ(q.text("PRAGMA quick_check"), "ok");
    EXPECT_EQ(q.scalar("SELECT count(*) FROM nvtx_marks WHERE ts_ns < 2000"), 100);
    EXPECT_EQ(q.scalar("SELECT count(*) FROM nvtx_marks WHERE ts_ns >= 2000 AND ts_ns < 90000"), 0)
        << "the failed transaction is not in the file";
    EXPECT_EQ(q.scalar("SELECT count(*) FROM nvtx_marks WHERE ts_ns >= 90000"), 10);
}

TEST(SqliteFdGuard, AFullDiskFailureIsRecordedOnceAndQuietly) {
    // The failure is kept (for the writer to say once) rather than logged at every later call.
    TraceDb::initializeLibrary();
    tuneup::test::TempDir dir("tuneup_fd_guard");
    std::string error;
    auto db = TraceDb::create(dir.path() + "/run.db", error);
    ASSERT_TRUE(db) << error;
    db->begin();
    db->fail("a test failure");
    EXPECT_TRUE(db->failed());
    EXPECT_EQ(db->failure(), "a test failure");
    db->addMark(mark(1, db->intern("x")));
    EXPECT_FALSE(db->commit());
    db->resumeForFinalRecord();
    db->begin();
    db->setMeta("end_ns", "5");
    EXPECT_TRUE(db->commit());
    EXPECT_EQ(db->metaValue("end_ns"), "5");
}
