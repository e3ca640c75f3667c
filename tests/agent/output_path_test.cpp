// Which file a process writes: main, rank, forked child or other, from TUNEUP_OUTPUT, the rank
// variables and TUNEUP_MAIN_PID.

#include "env_guard.h"
#include "output_path.h"

#include <gtest/gtest.h>

using namespace tuneup::agent;
using tuneup::test::EnvGuard;

namespace {

class OutputPathTest : public ::testing::Test {
protected:
    void SetUp() override {
        for (const char* name : { "RANK", "OMPI_COMM_WORLD_RANK", "PMI_RANK", "SLURM_PROCID" })
            m_env.unset(name);
        m_config.outputBase = "/runs/run.db";
        m_config.mainPid = 100;
    }
    EnvGuard m_env;
    Config m_config;
};

void expectChoice(const OutputChoice& choice, const std::string& path, bool eager, const std::string& role) {
    EXPECT_EQ(choice.path, path);
    EXPECT_EQ(choice.eager, eager) << path;
    EXPECT_EQ(choice.role, role) << path;
}

} // namespace

TEST_F(OutputPathTest, TheMainProcessWritesTheBaseFileFromTheStart) {
    expectChoice(chooseOutput(m_config, 100, false), "/runs/run.db", true, "main");
}

TEST_F(OutputPathTest, OtherProcessesWriteAPidFileLazily) {
    expectChoice(chooseOutput(m_config, 123, false), "/runs/run.pid123.db", false, "other");
}

TEST_F(OutputPathTest, ForkedChildrenWriteAPidFileLazily) {
    expectChoice(chooseOutput(m_config, 124, true), "/runs/run.pid124.db", false, "forked-child");
    // Even a child of a process whose pid was reused as the main pid.
    expectChoice(chooseOutput(m_config, 100, true), "/runs/run.pid100.db", false, "forked-child");
}

TEST_F(OutputPathTest, WithoutAMainPidTheFirstProcessTakesTheBaseName) {
    m_config.mainPid = 0;
    expectChoice(chooseOutput(m_config, 55, false), "/runs/run.db", false, "main");
    expectChoice(chooseOutput(m_config, 56, true), "/runs/run.pid56.db", false, "forked-child");
}

TEST_F(OutputPathTest, RanksGetTheirOwnFiles) {
    m_env.set("RANK", "3");
    expectChoice(chooseOutput(m_config, 100, false), "/runs/run.rank3.db", false, "rank");
    expectChoice(chooseOutput(m_config, 321, false), "/runs/run.rank3.db", false, "rank");
    expectChoice(chooseOutput(m_config, 322, true), "/runs/run.rank3.pid322.db", false, "forked-child");
}

TEST_F(OutputPathTest, BaseNamesWithoutDbGetIt) {
    m_config.outputBase = "/runs/trace";
    expectChoice(chooseOutput(m_config, 100, false), "/runs/trace.db", true, "main");
    expectChoice(chooseOutput(m_config, 7, true), "/runs/trace.pid7.db", false, "forked-child");
    m_config.outputBase = "relative.db";
    expectChoice(chooseOutput(m_config, 100, false), "relative.db", true, "main");
}

TEST_F(OutputPathTest, TheLauncherSaysWhatItIs) {
    // tuneup record starts torchrun with TUNEUP_MAIN_PID=-<its pid>: no process takes run.db.
    m_config.mainPid = -1;
    m_config.launcherPid = 200;
    expectChoice(chooseOutput(m_config, 200, false), "/runs/run.pid200.db", false, "launcher");
    expectChoice(chooseOutput(m_config, 201, false), "/runs/run.pid201.db", false, "other");
}

TEST_F(OutputPathTest, RankComesFromTheFirstValidVariable) {
    EXPECT_FALSE(rankFromEnvironment());
    m_env.set("SLURM_PROCID", "6"); // srun sets it, torchrun does not
    EXPECT_EQ(rankFromEnvironment(), 6);
    m_env.set("PMI_RANK", "5");
    EXPECT_EQ(rankFromEnvironment(), 5);
    m_env.set("OMPI_COMM_WORLD_RANK", "4");
    EXPECT_EQ(rankFromEnvironment(), 4);
    m_env.set("RANK", "0");
    EXPECT_EQ(rankFromEnvironment(), 0);
}

TEST_F(OutputPathTest, InvalidRanksAreIgnored) {
    for (const char* bad : { "", "abc", "3x", "-1", "99999999999" }) {
        m_env.set("RANK", bad);
        EXPECT_FALSE(rankFromEnvironment()) << "RANK=" << bad;
    }
    m_env.set("RANK", "abc");
    m_env.set("PMI_RANK", "2");
    EXPECT_EQ(rankFromEnvironment(), 2);
}
