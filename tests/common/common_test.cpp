// The shared vocabulary: numbers for people, process roles, and the names of a run's files.

#include "process_role.h"
#include "run_files.h"
#include "temp_dir.h"
#include "units.h"
#include "utf8.h"

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>

using namespace tuneup;
namespace fs = std::filesystem;

TEST(Units, DurationsHaveThreeSignificantDigits) {
    EXPECT_EQ(formatDuration(0), "0 ns");
    EXPECT_EQ(formatDuration(12), "12 ns");
    EXPECT_EQ(formatDuration(999), "999 ns");
    EXPECT_EQ(formatDuration(1'000), "1 us");
    EXPECT_EQ(formatDuration(12'345), "12.3 us");
    EXPECT_EQ(formatDuration(850'000), "850 us");
    EXPECT_EQ(formatDuration(999'600), "1 ms"); // rounds into the next unit, never "1e+03 us"
    EXPECT_EQ(formatDuration(5'030'000), "5.03 ms");
    EXPECT_EQ(formatDuration(61'234'000), "61.2 ms");
    EXPECT_EQ(formatDuration(123'456'000), "123 ms");
    EXPECT_EQ(formatDuration(1'250'000'000), "1.25 s");
    EXPECT_EQ(formatDuration(4'321'000'000'000), "4321 s");
    EXPECT_EQ(formatDuration(-2'500'000), "-2.5 ms");
    EXPECT_EQ(formatDuration(INT64_MIN).substr(0, 1), "-");
}

TEST(Units, ElapsedTimesSayMinutesAndHours) {
    EXPECT_EQ(formatElapsed(812'000'000), "812 ms");
    EXPECT_EQ(formatElapsed(51'300'000'000), "51.3 s");
    EXPECT_EQ(formatElapsed(192'000'000'000), "3 min 12 s");
    EXPECT_EQ(formatElapsed(7'500'000'000'000), "2 h 5 min");
}

TEST(Units, BytesCountsSharesAndGroups) {
    EXPECT_EQ(formatBytes(512), "512 B");
    EXPECT_EQ(formatBytes(1'500), "1.5 kB");
    EXPECT_EQ(formatBytes(38'200'000), "38.2 MB");
    EXPECT_EQ(formatBytes(244'400'000), "244 MB");
    EXPECT_EQ(formatBytes(1'500'000'000), "1.5 GB");
    EXPECT_EQ(formatCount(950), "950");
    EXPECT_EQ(formatCount(12'345), "12.3 k");
    EXPECT_EQ(formatCount(1'420'000), "1.42 M");
    EXPECT_EQ(formatPercent(0.4), "40%");
    EXPECT_EQ(formatPercent(0.004), "0.4%");
    EXPECT_EQ(formatPercent(0), "0%");
    EXPECT_EQ(groupedInteger(1'420'113), "1,420,113");
    EXPECT_EQ(groupedInteger(-1'000), "-1,000");
    EXPECT_EQ(groupedInteger(INT64_MIN), "-9,223,372,036,854,775,808");
}

TEST(Utf8, ValidTextIsKeptAndEachInvalidSequenceIsOneReplacementCharacter) {
    EXPECT_EQ(tuneup::validUtf8("H100 \u2026"), "H100 \u2026");
    EXPECT_TRUE(tuneup::isValidUtf8("H100 \u2026"));
    // A lone byte, and a three-byte sequence cut after two (one maximal subpart: one U+FFFD).
    EXPECT_EQ(tuneup::validUtf8("a\xff"
                                "b\xe2\x82"),
        "a\uFFFDb\uFFFD");
    EXPECT_FALSE(tuneup::isValidUtf8("caf\xe9"));
    EXPECT_FALSE(tuneup::isValidUtf8("\xc0\xaf")) << "an overlong '/'";
    EXPECT_FALSE(tuneup::isValidUtf8("\xed\xa0\x80")) << "a surrogate";
}

TEST(ProcessRoles, NamesRoundTrip) {
    for (ProcessRole role : { ProcessRole::Main, ProcessRole::Rank, ProcessRole::DataLoaderWorker,
             ProcessRole::Launcher, ProcessRole::ForkedChild, ProcessRole::Other })
        EXPECT_EQ(parseProcessRole(processRoleName(role)), role);
    EXPECT_EQ(processRoleName(ProcessRole::DataLoaderWorker), "dataloader-worker");
    EXPECT_EQ(processRoleLabel(ProcessRole::DataLoaderWorker), "DataLoader worker");
    EXPECT_FALSE(parseProcessRole("worker"));
    EXPECT_FALSE(parseProcessRole(""));
}

TEST(RunFiles, NamesAreMadeAndReadAlike) {
    EXPECT_EQ(runStem("/runs/run.db"), "/runs/run");
    EXPECT_EQ(runStem("trace"), "trace");
    EXPECT_EQ((RunFileName { "/runs/run", 3, 12 }.path()), "/runs/run.rank3.pid12.db");
    EXPECT_EQ((RunFileName { "run", std::nullopt, 7 }.path()), "run.pid7.db");
    const auto parsed = parseRunFileName("/runs/run.rank3.pid12.db");
    ASSERT_TRUE(parsed);
    EXPECT_EQ(parsed->stem, "/runs/run");
    EXPECT_EQ(parsed->rank, 3);
    EXPECT_EQ(parsed->pid, 12);
    EXPECT_TRUE(parseRunFileName("/runs/my.model.db")->isMain());
    EXPECT_EQ(parseRunFileName("/runs/my.model.db")->stem, "/runs/my.model");
    EXPECT_FALSE(parseRunFileName("/runs/run.json"));
    EXPECT_FALSE(parseRunFileName("/runs/.db"));
    // Not numbers: part of the stem.
    EXPECT_EQ(parseRunFileName("run.rankX.db")->stem, "run.rankX");
    EXPECT_EQ(parseRunFileName("run.pid-1.db")->stem, "run.pid-1");
}

TEST(RunFiles, TheFilesOfARunInOrder) {
    const test::TempDir dir("run_files");
    for (const char* name : { "run.db", "run.rank10.db", "run.rank2.db", "run.rank2.pid5.db", "run.pid9.db",
             "run.db-wal", "run.rank3.db-shm", "other.db", "run.rank2.db.bak", "runner.db" })
        std::ofstream(dir.path() + "/" + name) << "x";
    fs::create_symlink(dir.path() + "/run.db", dir.path() + "/run.rank4.db"); // links are never followed
    std::vector<std::string> names;
    for (const RunFileName& f : listRunFiles(dir.path() + "/run"))
        names.push_back(fs::path(f.path()).filename().string());
    EXPECT_EQ(names,
        (std::vector<std::string> { "run.db", "run.rank2.db", "run.rank2.pid5.db", "run.rank10.db", "run.pid9.db" }));
    EXPECT_EQ(listRunSidecars(dir.path() + "/run"),
        (std::vector<std::string> { dir.path() + "/run.db-wal", dir.path() + "/run.rank3.db-shm" }));
}
