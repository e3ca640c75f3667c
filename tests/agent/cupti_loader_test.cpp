// Finding libcupti (cupti_loader.h): the CUPTI that came with the process's CUDA runtime before the one
// the library search path would give. Each layout is a folder holding copies of this toolkit's real
// libcudart and libcupti, as pip wheels and toolkits lay them out; each case runs in a forked child,
// since what a process has loaded stays loaded.

#include "cupti_loader.h"
#include "temp_dir.h"

#include <climits>
#include <dlfcn.h>
#include <filesystem>
#include <gtest/gtest.h>
#include <string>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

namespace tuneup::agent {
namespace {

namespace fs = std::filesystem;

const std::string kToolkit = TUNEUP_CUDA_LIBRARY_DIR;

bool toolkitHasLibraries() {
    return access((kToolkit + "/libcupti.so.13").c_str(), R_OK) == 0
        && access((kToolkit + "/libcudart.so.13").c_str(), R_OK) == 0;
}

// A copy (not a link: the loader treats links to one file as one library) of a toolkit library.
std::string place(
    const std::string& root, const std::string& dir, const std::string& library, const std::string& as = "") {
    const fs::path folder = fs::path(root) / dir;
    fs::create_directories(folder);
    const fs::path target = folder / (as.empty() ? library : as);
    fs::copy_file(fs::canonical(kToolkit + "/" + library), target, fs::copy_options::overwrite_existing);
    return fs::canonical(target).string();
}

// Runs `body` in a forked child; "" when it passed, else what it said went wrong.
template <typename Body> std::string inChild(Body body) {
    int pipeFds[2];
    if (pipe(pipeFds) != 0) return "pipe failed";
    const pid_t child = fork();
    if (child == 0) {
        close(pipeFds[0]);
        const std::string failure = body();
        if (!failure.empty() && write(pipeFds[1], failure.data(), failure.size()) < 0) _exit(3);
        _exit(failure.empty() ? 0 : 1);
    }
    close(pipeFds[1]);
    std::string said;
    char chunk[512];
    for (ssize_t n; (n = read(pipeFds[0], chunk, sizeof chunk)) > 0;)
        said.append(chunk, size_t(n));
    close(pipeFds[0]);
    int status = 0;
    waitpid(child, &status, 0);
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return "";
    return said.empty() ? "child failed (status " + std::to_string(status) + ")" : said;
}

// In the child: loads `runtime` (as torch would: RTLD_LOCAL), then CUPTI; checks which file was taken.
std::string loadsBeside(const std::string& runtime, const std::string& expected, const std::string& origin) {
    if (!dlopen(runtime.c_str(), RTLD_NOW | RTLD_LOCAL)) return std::string("dlopen runtime: ") + dlerror();
    CuptiApi api;
    std::string error;
    if (!loadCupti("", api, error)) return "loadCupti failed: " + error;
    if (api.path != expected) return "loaded " + api.path + " (" + api.origin + "), expected " + expected;
    if (api.origin.rfind(origin, 0) != 0) return "origin '" + api.origin + "', expected it to start with " + origin;
    if (api.reused) return "claims to reuse a libcupti that was not loaded";
    uint32_t version = 0;
    if (api.getVersion(&version) != CUPTI_SUCCESS || version < 13) return "the copy does not work";
    return "";
}

class CuptiDiscoveryTest : public ::testing::Test {
protected:
    void SetUp() override {
        if (!toolkitHasLibraries()) GTEST_SKIP() << "needs libcudart.so.13 and libcupti.so.13 in " << kToolkit;
    }
    test::TempDir m_tmp { "tuneup_cupti_discovery" };
    const std::string& root() const { return m_tmp.path(); }
};

TEST_F(CuptiDiscoveryTest, PipWheelWithAllLibrariesInOneFolder) {
    // CUDA 13 wheels: site-packages/nvidia/cu13/lib holds libcudart and libcupti. The library search path
    // (ldconfig) would give the toolkit's copy instead.
    const std::string runtime = place(root(), "site-packages/nvidia/cu13/lib", "libcudart.so.13");
    const std::string cupti = place(root(), "site-packages/nvidia/cu13/lib", "libcupti.so.13");
    EXPECT_EQ(inChild([&] { return loadsBeside(runtime, cupti, "beside libcudart.so.13"); }), "");
}

TEST_F(CuptiDiscoveryTest, PipWheelsWithAPackagePerLibrary) {
    const std::string runtime = place(root(), "site-packages/nvidia/cuda_runtime/lib", "libcudart.so.13");
    const std::string cupti = place(root(), "site-packages/nvidia/cuda_cupti/lib", "libcupti.so.13");
    EXPECT_EQ(inChild([&] { return loadsBeside(runtime, cupti, "beside libcudart.so.13"); }), "");
}

TEST_F(CuptiDiscoveryTest, BesideTorchsCudaLibrary) {
    // Only libtorch_cuda is known (its runtime not loaded yet): the wheels' folder beside torch.
    const std::string torchCuda = place(root(), "site-packages/torch/lib", "libcudart.so.13", "libtorch_cuda.so");
    const std::string cupti = place(root(), "site-packages/nvidia/cu13/lib", "libcupti.so.13");
    EXPECT_EQ(inChild([&] { return loadsBeside(torchCuda, cupti, "beside libtorch_cuda.so"); }), "");
}

TEST_F(CuptiDiscoveryTest, ToolkitExtrasFolder) {
    const std::string runtime = place(root(), "cuda-12.4/lib64", "libcudart.so.13");
    const std::string cupti = place(root(), "cuda-12.4/extras/CUPTI/lib64", "libcupti.so.13");
    EXPECT_EQ(inChild([&] { return loadsBeside(runtime, cupti, "beside libcudart.so.13"); }), "");
}

TEST_F(CuptiDiscoveryTest, ReusesALibcuptiTheProcessLoaded) {
    const std::string cupti = place(root(), "elsewhere", "libcupti.so.13");
    EXPECT_EQ(inChild([&]() -> std::string {
        if (!dlopen(cupti.c_str(), RTLD_NOW | RTLD_LOCAL)) return dlerror();
        CuptiApi api;
        std::string error;
        if (!loadCupti("", api, error)) return error;
        if (api.path != cupti || !api.reused || api.origin != "already loaded by the process")
            return "took " + api.path + " (" + api.origin + ")";
        return "";
    }),
        "");
}

TEST_F(CuptiDiscoveryTest, ExplicitPathComesBeforeTheRuntimesFolder) {
    const std::string runtime = place(root(), "site-packages/nvidia/cu13/lib", "libcudart.so.13");
    place(root(), "site-packages/nvidia/cu13/lib", "libcupti.so.13");
    const std::string chosen = place(root(), "mine", "libcupti.so.13");
    EXPECT_EQ(inChild([&]() -> std::string {
        if (!dlopen(runtime.c_str(), RTLD_NOW | RTLD_LOCAL)) return dlerror();
        CuptiApi api;
        std::string error;
        if (!loadCupti(chosen, api, error)) return error;
        return api.path == chosen && api.origin == "TUNEUP_CUPTI_PATH" ? "" : "took " + api.path;
    }),
        "");
}

TEST(CuptiCandidates, RuntimesOwnVersionAndFoldersFirst) {
    const auto candidates
        = cuptiCandidates({ "/usr/lib/libc.so.6", "/sp/nvidia/cu12/lib/libcudart.so.12" }, "", "", "");
    ASSERT_GE(candidates.size(), 3u);
    EXPECT_EQ(candidates[0].path, "/sp/nvidia/cu12/lib/libcupti.so.12");
    EXPECT_EQ(candidates[0].origin, "beside libcudart.so.12 (/sp/nvidia/cu12/lib)");
    // The bare names come after every folder of the runtime, the runtime's major version first, and
    // the unversioned development link last of them.
    std::vector<std::string> bare;
    size_t firstBare = 0;
    for (size_t i = 0; i < candidates.size(); ++i)
        if (candidates[i].path.find('/') == std::string::npos) {
            if (bare.empty()) firstBare = i;
            bare.push_back(candidates[i].path);
        }
    EXPECT_EQ(bare,
        (std::vector<std::string> {
            "libcupti.so.12", "libcupti.so.13", "libcupti.so.11.8", "libcupti.so.11", "libcupti.so" }));
    for (size_t i = 0; i < firstBare; ++i)
        EXPECT_EQ(candidates[i].path.rfind("/sp/nvidia/", 0), 0u) << candidates[i].path;
    EXPECT_EQ(candidates.back().path, "/usr/local/cuda/extras/CUPTI/lib64/libcupti.so");
}

TEST(CuptiCandidates, WithoutARuntimeTheSearchPathThenTheToolkit) {
    const auto candidates = cuptiCandidates({}, "/x/libcupti.so.13", "/opt/cuda", "");
    ASSERT_GE(candidates.size(), 6u);
    EXPECT_EQ(candidates[0].path, "/x/libcupti.so.13");
    EXPECT_EQ(candidates[1].path, "libcupti.so.13");
    EXPECT_EQ(candidates[5].path, "libcupti.so");
    EXPECT_EQ(candidates[6].path, "/opt/cuda/lib64/libcupti.so.13");
    EXPECT_EQ(candidates[6].origin, "CUDA_HOME /opt/cuda");
}

} // namespace
} // namespace tuneup::agent
