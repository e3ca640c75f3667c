// The agent's settings from the environment: TUNEUP_TRACE parsing (and its errors), numbers with
// their ranges, TUNEUP_DISABLE. Bad values never fail: they fall back to the defaults.

#include "config.h"
#include "env_guard.h"

#include <algorithm>
#include <gtest/gtest.h>

using namespace tuneup::agent;
using tuneup::test::EnvGuard;

namespace {

std::string describe(const TraceSelection& s) {
    std::string out;
    for (auto [on, name] : { std::pair { s.nvtx, "nvtx" }, { s.kernel, "kernel" }, { s.memcpy, "memcpy" },
             { s.memset, "memset" }, { s.sync, "sync" }, { s.runtime, "runtime" }, { s.driver, "driver" },
             { s.memory, "memory" }, { s.gemm, "gemm" }, { s.conv, "conv" }, { s.noisyApi, "noisy-api" } })
        if (on) out += out.empty() ? name : std::string(",") + name;
    return out;
}

std::string parsed(const std::string& text) {
    TraceSelection selection;
    std::string error;
    EXPECT_TRUE(parseTraceSelection(text, selection, error)) << text << ": " << error;
    EXPECT_TRUE(error.empty());
    return describe(selection);
}

// Returns the error; checks that the selection was left alone.
std::string parseError(const std::string& text) {
    TraceSelection selection;
    selection.nvtx = false; // a marker: must be untouched on error
    std::string error;
    EXPECT_FALSE(parseTraceSelection(text, selection, error)) << text;
    EXPECT_FALSE(selection.nvtx) << text;
    EXPECT_TRUE(selection.kernel) << text;
    return error;
}

const char* kAllCuda = "kernel,memcpy,memset,sync,runtime,driver,memory";

} // namespace

TEST(TraceSelection, Items) {
    EXPECT_EQ(parsed("gemm,conv"), "gemm,conv");
    EXPECT_EQ(parsed("nvtx,conv"), "nvtx,conv");
    EXPECT_EQ(describe(TraceSelection {}), std::string("nvtx,") + kAllCuda + ",gemm,conv") << "the default";
    EXPECT_EQ(parsed("nvtx"), "nvtx");
    EXPECT_EQ(parsed("cuda"), kAllCuda);
    EXPECT_EQ(parsed("nvtx,cuda"), std::string("nvtx,") + kAllCuda);
    EXPECT_EQ(parsed("kernel,memcpy"), "kernel,memcpy");
    EXPECT_EQ(parsed("sync,runtime,driver,memset"), "memset,sync,runtime,driver");
    EXPECT_EQ(parsed("none"), "");
    EXPECT_EQ(parsed("nvtx,nvtx"), "nvtx");
    // Noisy CUDA API calls are counted by default; the item writes them as rows too.
    EXPECT_FALSE(TraceSelection {}.noisyApi);
    EXPECT_EQ(parsed("cuda,noisy-api"), std::string(kAllCuda) + ",noisy-api");
    TraceSelection nothing;
    nothing.kernel = nothing.memcpy = nothing.memset = nothing.sync = nothing.runtime = nothing.driver = nothing.memory
        = false;
    EXPECT_FALSE(nothing.anyCuda());
    nothing.sync = true;
    EXPECT_TRUE(nothing.anyCuda());
    nothing.sync = false;
    nothing.memory = true;
    EXPECT_TRUE(nothing.anyCuda());
    EXPECT_EQ(parsed("memory"), "memory");
}

TEST(TraceSelection, UnknownItemsAreNamedInTheError) {
    std::string error = parseError("bogus");
    EXPECT_NE(error.find("'bogus'"), std::string::npos) << error;
    EXPECT_NE(error.find("nvtx"), std::string::npos) << "the error lists the known items: " << error;
    error = parseError("nvtx,kernels");
    EXPECT_NE(error.find("'kernels'"), std::string::npos) << error;
    error = parseError("NVTX");
    EXPECT_NE(error.find("'NVTX'"), std::string::npos) << error;
    error = parseError("nvtx, cuda");
    EXPECT_NE(error.find("' cuda'"), std::string::npos) << error;
}

TEST(TraceSelection, EmptyItemsAreErrors) {
    parseError("");
    parseError("nvtx,");
    parseError(",nvtx");
    parseError("nvtx,,cuda");
}

class ConfigTest : public ::testing::Test {
protected:
    void SetUp() override {
        for (const char* name : { "TUNEUP_DISABLE", "TUNEUP_OUTPUT", "TUNEUP_MAIN_PID", "TUNEUP_TRACE",
                 "TUNEUP_BUFFER_KB", "TUNEUP_MAX_BUFFER_MB", "TUNEUP_FLUSH_MS", "TUNEUP_CUPTI_PATH", "TUNEUP_LOG" })
            m_env.unset(name);
        m_env.set("TUNEUP_LOG", "quiet"); // the fallbacks below warn
    }
    EnvGuard m_env;
};

TEST_F(ConfigTest, Defaults) {
    const Config c = configFromEnvironment();
    EXPECT_FALSE(c.disabled);
    EXPECT_EQ(c.outputBase, "tuneup.db");
    EXPECT_EQ(c.mainPid, 0);
    EXPECT_EQ(describe(c.trace), std::string("nvtx,") + kAllCuda + ",gemm,conv");
    EXPECT_EQ(c.threadBufferKiB, 1024u);
    EXPECT_EQ(c.maxBufferMiB, 32u);
    EXPECT_EQ(c.flushIntervalMs, 200u);
    EXPECT_TRUE(c.cuptiPath.empty());
}

TEST_F(ConfigTest, ValuesFromTheEnvironment) {
    m_env.set("TUNEUP_OUTPUT", "/runs/x.db");
    m_env.set("TUNEUP_MAIN_PID", "4321");
    m_env.set("TUNEUP_TRACE", "nvtx,kernel");
    m_env.set("TUNEUP_BUFFER_KB", "64");
    m_env.set("TUNEUP_MAX_BUFFER_MB", "8");
    m_env.set("TUNEUP_FLUSH_MS", "50");
    m_env.set("TUNEUP_CUPTI_PATH", "/opt/libcupti.so");
    const Config c = configFromEnvironment();
    EXPECT_EQ(c.outputBase, "/runs/x.db");
    EXPECT_EQ(c.mainPid, 4321);
    EXPECT_EQ(describe(c.trace), "nvtx,kernel");
    EXPECT_EQ(c.threadBufferKiB, 64u);
    EXPECT_EQ(c.maxBufferMiB, 8u);
    EXPECT_EQ(c.flushIntervalMs, 50u);
    EXPECT_EQ(c.cuptiPath, "/opt/libcupti.so");
}

TEST_F(ConfigTest, ALaunchersRunNamesTheLauncher) {
    m_env.set("TUNEUP_MAIN_PID", "-1");
    EXPECT_EQ(configFromEnvironment().mainPid, -1);
    EXPECT_EQ(configFromEnvironment().launcherPid, 0);
    m_env.set("TUNEUP_MAIN_PID", "-4321");
    EXPECT_EQ(configFromEnvironment().mainPid, -1);
    EXPECT_EQ(configFromEnvironment().launcherPid, 4321);
}

TEST_F(ConfigTest, ABadTraceValueRecordsTheDefaults) {
    m_env.set("TUNEUP_TRACE", "nvtx,bogus");
    EXPECT_EQ(describe(configFromEnvironment().trace), std::string("nvtx,") + kAllCuda + ",gemm,conv");
    m_env.set("TUNEUP_TRACE", "none");
    EXPECT_EQ(describe(configFromEnvironment().trace), "");
}

TEST_F(ConfigTest, NumbersOutOfRangeOrMalformedFallBack) {
    for (const char* bad : { "8", "abc", "64k", "-1", "99999999999" }) {
        m_env.set("TUNEUP_BUFFER_KB", bad);
        EXPECT_EQ(configFromEnvironment().threadBufferKiB, 1024u) << bad;
    }
    m_env.set("TUNEUP_BUFFER_KB", "16");
    EXPECT_EQ(configFromEnvironment().threadBufferKiB, 16u);
    m_env.set("TUNEUP_FLUSH_MS", "5");
    EXPECT_EQ(configFromEnvironment().flushIntervalMs, 200u);
    m_env.set("TUNEUP_MAX_BUFFER_MB", "0");
    EXPECT_EQ(configFromEnvironment().maxBufferMiB, 32u);
}

TEST_F(ConfigTest, Disable) {
    m_env.set("TUNEUP_DISABLE", "1");
    EXPECT_TRUE(configFromEnvironment().disabled);
    m_env.set("TUNEUP_DISABLE", "yes");
    EXPECT_TRUE(configFromEnvironment().disabled);
    m_env.set("TUNEUP_DISABLE", "0");
    EXPECT_FALSE(configFromEnvironment().disabled);
    m_env.set("TUNEUP_DISABLE", "");
    EXPECT_FALSE(configFromEnvironment().disabled);
}

TEST_F(ConfigTest, GarbageIsNamedInOneWarningAndTheDefaultIsUsed) {
    const auto warningFor = [](const Config& c, const std::string& start) {
        for (const std::string& w : c.warnings)
            if (w.starts_with(start)) return w;
        return std::string();
    };
    for (const char* bad : { "abc", "-1", "+5", " 5", "10001", "1e3" }) {
        m_env.set("TUNEUP_SAMPLE_MS", bad);
        const Config c = configFromEnvironment();
        EXPECT_EQ(c.samplePeriodMs, 10u) << bad;
        EXPECT_EQ(warningFor(c, "TUNEUP_SAMPLE_MS="),
            std::string("TUNEUP_SAMPLE_MS=") + bad + " is not a number in [0, 10000]; using 10");
    }
    m_env.set("TUNEUP_SAMPLE_MS", "0");
    EXPECT_EQ(configFromEnvironment().samplePeriodMs, 0u) << "0: not sampled";
    m_env.set("TUNEUP_SAMPLE_MS", "25");
    EXPECT_EQ(configFromEnvironment().samplePeriodMs, 25u);
    EXPECT_TRUE(configFromEnvironment().warnings.empty());

    m_env.set("TUNEUP_LOG", "garbage");
    EXPECT_EQ(warningFor(configFromEnvironment(), "TUNEUP_LOG"),
        "TUNEUP_LOG=garbage is not one of quiet, warn, info, debug; using warn");
    m_env.set("TUNEUP_LOG", "quiet");
    m_env.set("TUNEUP_TRACE", "bogus");
    EXPECT_NE(warningFor(configFromEnvironment(), "TUNEUP_TRACE=bogus: unknown trace item 'bogus'"), "");
    m_env.set("TUNEUP_MAIN_PID", "abc");
    Config c = configFromEnvironment();
    EXPECT_EQ(c.mainPid, 0);
    EXPECT_NE(warningFor(c, "TUNEUP_MAIN_PID=abc is not a process id"), "");
    // Said once: logging them forgets them (a forked child does not say them again).
    logConfigWarnings(c);
    EXPECT_TRUE(c.warnings.empty());
}

namespace {

TEST(CuptiDumpSettings, AFolderAndALimit) {
    EnvGuard env;
    env.unset("TUNEUP_CUPTI_DUMP");
    env.unset("TUNEUP_CUPTI_DUMP_MB");
    Config c = configFromEnvironment();
    EXPECT_TRUE(c.cuptiDumpDir.empty()) << "off unless asked for";
    EXPECT_EQ(c.cuptiDumpMiB, 16u);
    env.set("TUNEUP_CUPTI_DUMP", "/tmp/cupti-buffers");
    env.set("TUNEUP_CUPTI_DUMP_MB", "4");
    c = configFromEnvironment();
    EXPECT_EQ(c.cuptiDumpDir, "/tmp/cupti-buffers");
    EXPECT_EQ(c.cuptiDumpMiB, 4u);
    env.set("TUNEUP_CUPTI_DUMP_MB", "0");
    c = configFromEnvironment();
    EXPECT_EQ(c.cuptiDumpMiB, 16u);
    EXPECT_EQ(std::count_if(c.warnings.begin(), c.warnings.end(),
                  [](const std::string& w) { return w.find("TUNEUP_CUPTI_DUMP_MB=0") != std::string::npos; }),
        1);
}

} // namespace
