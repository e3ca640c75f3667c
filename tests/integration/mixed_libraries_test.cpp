// A process with two copies of cuBLAS and of cuDNN: a library built against the toolkit's (libcublas.so.13,
// libcudnn.so.9) and one built against an older major version (libcublas.so.12, libcudnn.so.8: the
// toolkit's real libraries, copied and renamed, tests/support/elf_rename.h), as when a wheel's CUDA
// libraries meet a system toolkit's. Every call of either reaches the agent first; each must go on to the
// copy its caller links, whichever copy the global scope or the load order offers first, and the file
// must say which copy served whom. Each cuBLAS copy logs the calls it receives (its own logger), so the
// client sees where each GEMM went. No GPU: the calls fail inside the library they reached.

#include "elf_rename.h"
#include "injection.h"
#include "sqlite_query.h"

#include <filesystem>
#include <gtest/gtest.h>
#include <map>
#include <sstream>

using namespace tuneup::test;
using namespace std::chrono_literals;
namespace fs = std::filesystem;

namespace {

class MixedLibrariesTest : public ::testing::TestWithParam<std::string> {
protected:
    void SetUp() override {
        m_old = m_dir.path() + "/old";
        fs::create_directories(m_old);
        for (const auto& [from, oldName, newName] :
            { std::tuple { TUNEUP_TEST_CUBLAS, "libcublas.so.13", "libcublas.so.12" },
                std::tuple { TUNEUP_TEST_CUDNN, "libcudnn.so.9", "libcudnn.so.8" } }) {
            const std::string error
                = copyLibraryRenamed(fs::canonical(from).string(), m_old + "/" + newName, oldName, newName);
            ASSERT_EQ(error, "");
        }
    }

    // The client's "<library> <call> <status> [copy13=N copy12=N]" lines, by their first two words.
    std::map<std::string, std::string> run(
        const std::string& mode, const std::map<std::string, std::string>& env = {}) {
        InjectOptions options;
        options.env["LD_LIBRARY_PATH"] = m_old;
        for (const auto& [name, value] : env)
            options.env[name] = value;
        InjectedProcess process(
            m_dir, { TUNEUP_TEST_MIXED_CLIENT, TUNEUP_TEST_MIXED_CURRENT, TUNEUP_TEST_MIXED_OLD, mode }, options, mode);
        EXPECT_TRUE(process.wait(120s));
        EXPECT_EQ(process.exitCode(), 0) << process.err();
        m_err = process.err();
        std::map<std::string, std::string> lines;
        std::istringstream out(process.out());
        for (std::string line; std::getline(out, line);) {
            const size_t second = line.find(' ', line.find(' ') + 1);
            lines[line.substr(0, second)] = line.substr(second + 1);
        }
        return lines;
    }

    TempDir m_dir;
    std::string m_old, m_err;
};

TEST_P(MixedLibrariesTest, EachCallReachesTheCopyItsCallerLinks) {
    const auto lines = run(GetParam());
    // cuBLAS without a handle: CUBLAS_STATUS_NOT_INITIALIZED (1), from the copy that logged the call.
    EXPECT_EQ(lines.at("old gemm"), "1 copy13=0 copy12=1");
    EXPECT_EQ(lines.at("current gemm"), "1 copy13=1 copy12=0");

    SqliteQuery q(m_dir.base());
    ASSERT_TRUE(q.ok()) << q.error();
    // Both GEMMs recorded, each with its caller's shape.
    EXPECT_EQ(
        q.rows("SELECT m, status FROM gemm_calls ORDER BY id"), (std::vector<Row> { { "12", "1" }, { "13", "1" } }));
    EXPECT_EQ(q.rows("SELECT status FROM conv_calls ORDER BY id"),
        (std::vector<Row> { { lines.at("old conv") }, { lines.at("current conv") } }));

    // Which copy served which library, and that two were loaded.
    const std::string cublas = q.meta("library.cublas").value_or("");
    EXPECT_NE(cublas.find(m_old + "/libcublas.so.12 (called from libmixed_calls_old.so)"), std::string::npos) << cublas;
    EXPECT_NE(cublas.find("/libcublas.so.13 (called from libmixed_calls_current.so)"), std::string::npos) << cublas;
    const std::string cudnn = q.meta("library.cudnn").value_or("");
    EXPECT_NE(cudnn.find(m_old + "/libcudnn.so.8 (called from libmixed_calls_old.so)"), std::string::npos) << cudnn;
    EXPECT_NE(cudnn.find("/libcudnn.so.9 (called from libmixed_calls_current.so)"), std::string::npos) << cudnn;
    for (const char* family : { "cublas", "cudnn" }) {
        const std::string loaded = q.meta(std::string("library.") + family + ".loaded").value_or("");
        EXPECT_NE(loaded.find(m_old + "/lib" + family + ".so."), std::string::npos) << loaded;
        EXPECT_NE(loaded.find("; "), std::string::npos) << "two copies: " << loaded;
    }
}

// A disabled agent forwards the same way and records nothing.
TEST_P(MixedLibrariesTest, DisabledAgentForwardsToTheSameCopies) {
    const auto lines = run(GetParam(), { { "TUNEUP_DISABLE", "1" } });
    EXPECT_EQ(lines.at("old gemm"), "1 copy13=0 copy12=1");
    EXPECT_EQ(lines.at("current gemm"), "1 copy13=1 copy12=0");
    EXPECT_FALSE(fs::exists(m_dir.base()));
}

// global: the toolkit's copy is in the global scope, where dlsym(RTLD_NEXT) finds it for every caller;
// local: both RTLD_LOCAL, the older copy loaded first.
INSTANTIATE_TEST_SUITE_P(LoadOrders, MixedLibrariesTest, ::testing::Values("global", "local"));

} // namespace
