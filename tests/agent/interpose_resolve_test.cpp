// Finding an interposed function's real counterpart per caller (interpose_resolve.h) on the toolkit's real
// libraries, loaded RTLD_LOCAL: the symbol version a library's reference asks for, the copy a caller's
// reference binds to, a function beside another in one copy; and the lock-free cache of resolutions,
// filled by several threads while others read it.

#include "interpose_resolve.h"
#include "symbol_version.h"

#include <atomic>
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <link.h>
#include <string>
#include <thread>
#include <vector>

namespace tuneup::agent {
namespace {

const std::string kLibraryDir = TUNEUP_CUDA_LIBRARY_DIR;

// A real library, opened RTLD_LOCAL (out of the global scope, as Python loads torch's). RTLD_NODELETE:
// cuBLAS links its own libstdc++, whose exception pool would be unreachable, a leak to LeakSanitizer,
// once the library were unmapped; a program never unloads it either.
struct Library {
    explicit Library(const std::string& name)
        : handle(dlopen((kLibraryDir + "/" + name).c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE)) { }
    ~Library() {
        if (handle) dlclose(handle);
    }
    const link_map* map() const {
        link_map* m = nullptr;
        return handle && dlinfo(handle, RTLD_DI_LINKMAP, &m) == 0 ? m : nullptr;
    }
    void* handle;
};

bool inObject(const void* address, const link_map* object) {
    Dl_info info {};
    link_map* found = nullptr;
    return dladdr1(address, &info, reinterpret_cast<void**>(&found), RTLD_DL_LINKMAP) && found == object;
}

TEST(SymbolVersion, TheVersionALibrarysReferenceAsksFor) {
    const Library cublas("libcublas.so.13");
    ASSERT_TRUE(cublas.handle) << dlerror();
    // libcublas calls cuBLASLt's matmul, at cuBLASLt's version.
    EXPECT_EQ(versionNeeded(cublas.map(), "cublasLtMatmul"), "libcublasLt.so.13");
    EXPECT_EQ(versionNeeded(cublas.map(), "cublasSgemm_v2"), "") << "defined there, not referred to";
    EXPECT_EQ(versionNeeded(cublas.map(), "noSuchFunction"), "");
    EXPECT_EQ(versionNeeded(nullptr, "cublasLtMatmul"), "");
}

TEST(ResolveForCaller, FindsTheDefinitionTheCallersReferenceBindsTo) {
    const Library cublas("libcublas.so.13");
    ASSERT_TRUE(cublas.handle) << dlerror();
    void* lt = dlopen("libcublasLt.so.13", RTLD_NOW | RTLD_NOLOAD);
    ASSERT_TRUE(lt);
    // A call of cublasLtMatmul from inside libcublas: neither library is in the global scope.
    const void* caller = dlsym(cublas.handle, "cublasSgemm_v2");
    const Resolved r = resolveForCaller("cublasLtMatmul", kCublasLt, caller);
    EXPECT_EQ(r.function, dlvsym(lt, "cublasLtMatmul", "libcublasLt.so.13"));
    // Cached for every address of the calling library.
    EXPECT_TRUE(inObject(reinterpret_cast<const void*>(r.begin), cublas.map()));
    EXPECT_TRUE(inObject(reinterpret_cast<const void*>(r.begin + r.size - 1), cublas.map()));
    EXPECT_LT(reinterpret_cast<uintptr_t>(caller) - r.begin, r.size);
    dlclose(lt);
}

TEST(ResolveForCaller, CodeOutsideAnyLibraryGetsTheFirstLoadedCopy) {
    const Library lt("libcublasLt.so.13");
    ASSERT_TRUE(lt.handle) << dlerror();
    std::vector<char> code(64); // an address in no loaded object, as generated code's
    const Resolved r = resolveForCaller("cublasLtMatmul", kCublasLt, code.data() + 8);
    EXPECT_EQ(r.function, dlsym(lt.handle, "cublasLtMatmul"));
    EXPECT_EQ(r.begin, reinterpret_cast<uintptr_t>(code.data() + 8));
    EXPECT_EQ(r.size, 1u) << "only that call site";
    EXPECT_EQ(resolveForCaller("noSuchFunction", kCublasLt, code.data()).function, nullptr);
}

TEST(ResolveBeside, TakesTheFunctionFromTheSiblingsCopy) {
    const Library lt("libcublasLt.so.13");
    ASSERT_TRUE(lt.handle) << dlerror();
    const void* matmul = dlsym(lt.handle, "cublasLtMatmul");
    const Resolved r = resolveBeside("cublasLtMatrixLayoutGetAttribute", matmul);
    EXPECT_EQ(r.function, dlsym(lt.handle, "cublasLtMatrixLayoutGetAttribute"));
    EXPECT_TRUE(inObject(r.function, lt.map()));
    EXPECT_LT(reinterpret_cast<uintptr_t>(matmul) - r.begin, r.size);
}

void* functionNumber(uintptr_t i) {
    return reinterpret_cast<void*>(0x1000 + i);
}

TEST(ResolvedCache, ReadersSeeOnlyWholeSlotsWhileWritersAdd) {
    ResolvedCache cache;
    constexpr uintptr_t kRanges = 8, kWidth = 0x100;
    std::atomic<bool> stop { false };
    std::atomic<uint64_t> wrong { 0 };
    std::vector<std::thread> readers;
    readers.reserve(2);
    for (int t = 0; t < 2; ++t)
        readers.emplace_back([&] {
            while (!stop.load(std::memory_order_relaxed))
                for (uintptr_t i = 0; i < kRanges; ++i)
                    if (void* f = cache.find(0x10000 + i * kWidth + 7); f && f != functionNumber(i)) ++wrong;
        });
    std::vector<std::thread> writers;
    writers.reserve(kRanges);
    for (uintptr_t i = 0; i < kRanges; ++i)
        writers.emplace_back([&, i] {
            // Another writer may hold the table: a real caller just resolves again on its next call.
            while (cache.find(0x10000 + i * kWidth) == nullptr)
                cache.add({ functionNumber(i), 0x10000 + i * kWidth, kWidth });
        });
    for (auto& w : writers)
        w.join();
    stop = true;
    for (auto& r : readers)
        r.join();
    EXPECT_EQ(wrong.load(), 0u);
    for (uintptr_t i = 0; i < kRanges; ++i) {
        EXPECT_EQ(cache.find(0x10000 + i * kWidth), functionNumber(i));
        EXPECT_EQ(cache.find(0x10000 + i * kWidth + kWidth - 1), functionNumber(i));
    }
    EXPECT_EQ(cache.find(0x10000 - 1), nullptr);
    EXPECT_EQ(cache.find(0x10000 + kRanges * kWidth), nullptr);
    // Full: more callers resolve on every call (correct, only slower).
    cache.add({ functionNumber(99), 0x90000, kWidth });
    EXPECT_EQ(cache.find(0x90000), nullptr);
    // The same range twice is kept once.
    ResolvedCache twice;
    twice.add({ functionNumber(1), 0x100, 0x10 });
    twice.add({ functionNumber(2), 0x100, 0x10 });
    EXPECT_EQ(twice.find(0x105), functionNumber(1));
}

} // namespace
} // namespace tuneup::agent
