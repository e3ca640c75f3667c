#pragma once
// Buffers of megabytes written through at once (the JSON windows the parsing threads read): backed by
// transparent huge pages where the kernel gives them on request (Linux's THP "madvise" mode, a common
// default), so that filling one takes a few page faults instead of one per 4 KiB. On a VM a fault costs
// about 2 us: the 17 MB of a Kineto import's windows took ~10 ms of faults, on the thread that fills them.

#include <algorithm>
#include <cstddef>
#include <cstdlib>
#include <memory>
#include <new>

#if defined(__linux__)
#include <sys/mman.h>
#endif

namespace tuneup::analysis {

struct FreeBuffer {
    void operator()(char* p) const { std::free(p); }
};
using LargeBuffer = std::unique_ptr<char[], FreeBuffer>;

// `bytes` of uninitialised memory; throws std::bad_alloc. From 2 MiB on, rounded up to whole huge pages
// (choose sizes just under a multiple of 2 MiB: a huge page is backed whole once touched).
inline LargeBuffer allocateLargeBuffer(size_t bytes) {
    constexpr size_t kHugePage = size_t(2) << 20;
    void* p = nullptr;
    if (bytes >= kHugePage) {
        const size_t rounded = (bytes + kHugePage - 1) / kHugePage * kHugePage;
        p = std::aligned_alloc(kHugePage, rounded);
#if defined(__linux__) && defined(MADV_HUGEPAGE)
        if (p) madvise(p, rounded, MADV_HUGEPAGE); // advice: refused (THP off), it is ordinary memory
#endif
    } else {
        p = std::malloc(std::max<size_t>(bytes, 1));
    }
    if (!p) throw std::bad_alloc();
    return LargeBuffer(static_cast<char*>(p));
}

} // namespace tuneup::analysis
