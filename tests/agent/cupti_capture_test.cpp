// The real libcupti of the toolkit on a machine without a GPU: loading it, the API names it knows,
// and GPU capture that stays off, saying why (no driver, the stand-in driver, not selected, a forked
// child). The decoding of its records is in cupti_decode_test.cpp.

#include "config.h"
#include "cuda_api.h"
#include "cupti_decode.h"
#include "cupti_loader.h"
#include "cupti_source.h"
#include "toolkit_cupti.h"
#include "trace_schema.h"

#include <cstdio>
#include <cstring>
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <set>
#include <string>
#include <sys/wait.h>
#include <unistd.h>

namespace tuneup::agent {
namespace {

// ---- the real libcupti, no GPU ------------------------------------------------------------

bool toolkitHasCupti() {
    const std::string dir = TUNEUP_CUDA_LIBRARY_DIR;
    return access((dir + "/libcupti.so").c_str(), F_OK) == 0;
}

bool realDriverInstalled() {
    // dlopen without cuInit: only asks whether an NVIDIA driver is there.
    void* driver = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL | RTLD_NOLOAD);
    if (!driver) driver = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL);
    return driver != nullptr;
}

TEST(CuptiLoader, LoadsTheToolkitsLibcupti) {
    if (!toolkitHasCupti()) GTEST_SKIP() << "no libcupti in " << TUNEUP_CUDA_LIBRARY_DIR;
    CuptiApi api;
    std::string error;
    ASSERT_TRUE(loadCupti("", api, error)) << error;
    EXPECT_FALSE(api.path.empty());
    uint32_t version = 0;
    ASSERT_EQ(api.getVersion(&version), CUPTI_SUCCESS);
    EXPECT_GE(version, 13u); // CUPTI 11.0's API version; 13.0 is 130001
    EXPECT_EQ(api.resultString(CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED),
        "CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED");
    EXPECT_EQ(api.resultString(CUptiResult(123456)), "CUPTI error 123456");

    // Loading again reuses the mapped library (as for torch's own libcupti), found by dl_iterate_phdr.
    CuptiApi again;
    ASSERT_TRUE(loadCupti("/nonexistent/libcupti.so", again, error)) << error;
    EXPECT_TRUE(again.reused);
    EXPECT_EQ(again.getVersion, api.getVersion);
}

TEST(CuptiLoader, CallbackNamesFromTheRealLibrary) {
    if (!toolkitCupti() || !toolkitCupti()->getCallbackName) GTEST_SKIP() << "no libcupti with cuptiGetCallbackName";
    const char* name = nullptr;
    ASSERT_EQ(toolkitCupti()->getCallbackName(
                  CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, &name),
        CUPTI_SUCCESS);
    ASSERT_NE(name, nullptr);
    EXPECT_EQ(apiDisplayName(name), "cudaLaunchKernel");
    ASSERT_EQ(
        toolkitCupti()->getCallbackName(CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, &name),
        CUPTI_SUCCESS);
    EXPECT_EQ(apiDisplayName(name), "cuLaunchKernel");
}

TEST(CudaApiNames, BaseNamesAndClasses) {
    EXPECT_EQ(cuda_api::baseName("cudaStreamQuery_ptsz"), "cudaStreamQuery");
    EXPECT_EQ(cuda_api::baseName("cuStreamGetCaptureInfo_v3"), "cuStreamGetCaptureInfo");
    EXPECT_EQ(cuda_api::baseName("cudaGetDevice_v3020"), "cudaGetDevice");
    EXPECT_EQ(cuda_api::baseName("cuMemcpyHtoD_v2"), "cuMemcpyHtoD");
    EXPECT_EQ(cuda_api::baseName("cudaLaunchKernel"), "cudaLaunchKernel");
    EXPECT_EQ(cuda_api::baseName("_v"), "_v");
    EXPECT_TRUE(cuda_api::isNoisy("cudaStreamQuery_ptsz"));
    EXPECT_TRUE(cuda_api::isQuery("cuEventQuery"));
    EXPECT_FALSE(cuda_api::isNoisy("cudaStreamSynchronize"));
    EXPECT_FALSE(cuda_api::isQuery("cudaEventSynchronize"));
    EXPECT_FALSE(cuda_api::isNoisy("cudaLaunchKernel"));
}

TEST(CudaApiNames, EveryNoisyNameIsARealCuptiFunction) {
    // The list is matched against CUPTI's own callback names: a misspelt entry would never match.
    if (!toolkitCupti() || !toolkitCupti()->getCallbackName) GTEST_SKIP() << "no libcupti with cuptiGetCallbackName";
    std::set<std::string> names;
    for (const auto domain : { CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_CB_DOMAIN_DRIVER_API })
        for (uint32_t cbid = 1; cbid < 2000; ++cbid) {
            const char* name = nullptr;
            if (toolkitCupti()->getCallbackName(domain, cbid, &name) == CUPTI_SUCCESS && name)
                names.insert(std::string(cuda_api::baseName(apiDisplayName(name))));
        }
    ASSERT_GT(names.size(), 500u);
    for (std::string_view noisy : cuda_api::kNoisy)
        EXPECT_TRUE(names.count(std::string(noisy))) << noisy << " is not a CUDA API function this CUPTI knows";
    for (std::string_view query : cuda_api::kQueries)
        EXPECT_TRUE(cuda_api::isNoisy(query)) << query;
}

TEST(CuptiCapture, NotSelectedIsOff) {
    Config config;
    config.trace.kernel = config.trace.memcpy = config.trace.memset = config.trace.sync = config.trace.runtime
        = config.trace.driver = config.trace.memory = false;
    std::string status;
    EXPECT_FALSE(startCuptiCapture(config, status));
    EXPECT_EQ(status, "off: not selected (TUNEUP_TRACE)");
    EXPECT_FALSE(cuptiCaptureOn());
}

TEST(CuptiCapture, WithoutDriverIsOffWithAReason) {
    if (!toolkitHasCupti()) GTEST_SKIP() << "no libcupti in " << TUNEUP_CUDA_LIBRARY_DIR;
    std::string status;
    const bool on = startCuptiCapture(Config {}, status);
    if (realDriverInstalled()) { // a GPU machine: either works, and says so
        EXPECT_TRUE(on ? status == "on" : status.starts_with("off: ")) << status;
        stopCuptiCapture();
        return;
    }
    EXPECT_FALSE(on);
    EXPECT_FALSE(cuptiCaptureOn());
    EXPECT_TRUE(status.starts_with("off: cuptiSubscribe: CUPTI_ERROR_")) << status;
    EXPECT_NE(status.find("libcuda"), std::string::npos) << status;
    std::printf("status: %s\n", status.c_str());
    // A second try is allowed (InitializeInjection after the constructor) and fails the same way.
    std::string again;
    EXPECT_FALSE(startCuptiCapture(Config {}, again));
    EXPECT_TRUE(again.starts_with("off: cuptiSubscribe: ")) << again;
}

// Runs `body` in a forked child (capture state is per process); true when it returned true.
template <typename Body> bool inChild(Body body) {
    const pid_t child = fork();
    if (child == 0) _exit(body() ? 0 : 1);
    int wstatus = 0;
    return child > 0 && waitpid(child, &wstatus, 0) == child && WIFEXITED(wstatus) && WEXITSTATUS(wstatus) == 0;
}

TEST(CuptiCapture, StopWhenOffIsHarmless) {
    Config none;
    std::string error;
    ASSERT_TRUE(parseTraceSelection("none", none.trace, error)) << error;
    std::string status;
    EXPECT_FALSE(startCuptiCapture(none, status));
    stopCuptiCapture();
    stopCuptiCapture();
    EXPECT_FALSE(startCuptiCapture(none, status));
    EXPECT_EQ(status, "off: not selected (TUNEUP_TRACE)");
}

TEST(CuptiCapture, WithTheStubDriverIsOffWithAReason) {
    const std::string stub = std::string(TUNEUP_CUDA_LIBRARY_DIR) + "/stubs/libcuda.so";
    if (!toolkitHasCupti() || realDriverInstalled() || access(stub.c_str(), F_OK) != 0)
        GTEST_SKIP() << "needs libcupti, the toolkit's stub libcuda and no real driver";
    ASSERT_NE(dlopen(stub.c_str(), RTLD_NOW | RTLD_GLOBAL), nullptr) << dlerror();
    std::string status;
    EXPECT_FALSE(startCuptiCapture(Config {}, status));
    EXPECT_TRUE(status.starts_with("off: cuptiSubscribe: CUPTI_ERROR_")) << status;
    EXPECT_NE(status.find("stub"), std::string::npos) << status;
    std::printf("status: %s\n", status.c_str());
}

TEST(CuptiCapture, ForkedChildNeverStarts) {
    EXPECT_TRUE(inChild([] {
        disableCuptiAfterFork();
        std::string status;
        const bool on = startCuptiCapture(Config {}, status);
        stopCuptiCapture();
        return !on && status == "off: forked child" && !cuptiCaptureOn();
    }));
}

} // namespace
} // namespace tuneup::agent
