#pragma once
// The items of a trace selection (TUNEUP_TRACE, `tuneup record --trace`), with what each records: one
// list for the agent's parser, the CLI's check and help, and the test that the docs name them all.

#include <string>
#include <string_view>

namespace tuneup {

struct TraceItem {
    std::string_view name;
    std::string_view what; // for --help: "(…)" after the name, "" when the name says it
};

inline constexpr TraceItem kTraceItems[] = {
    { "nvtx", "" },
    { "torch", "PyTorch settings, read during NVTX calls" },
    { "cuda", "= kernel,memcpy,memset,sync,runtime,driver,memory" },
    { "kernel", "" },
    { "memcpy", "" },
    { "memset", "" },
    { "sync", "" },
    { "runtime", "" },
    { "driver", "" },
    { "memory", "GPU memory allocations and releases (cudaMalloc, cudaFree, ...)" },
    { "gemm", "cuBLAS/cuBLASLt GEMM shapes" },
    { "conv", "cuDNN convolutions and how their algorithms were chosen" },
    { "noisy-api",
        "also write noisy CUDA API calls such as cudaGetDevice as rows; by default they are counted per name" },
    { "none", "" },
};

inline bool isTraceItem(std::string_view name) {
    for (const TraceItem& item : kTraceItems)
        if (item.name == name) return true;
    return false;
}

// "nvtx, torch, cuda, …, none"
inline std::string traceItemNames() {
    std::string names;
    for (const TraceItem& item : kTraceItems)
        names.append(names.empty() ? "" : ", ").append(item.name);
    return names;
}

} // namespace tuneup
