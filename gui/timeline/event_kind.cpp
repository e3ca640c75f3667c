#include "timeline/event_kind.h"

#include <array>

namespace tuneup::gui {

namespace {

// Tableau 10 (distinct in hue and lightness, readable for most colour-blind readers), matched to the
// breakdown chart where a part has a colour there.
constexpr std::array<KindStyle, size_t(EventKind::Count)> kStyles = { {
    { 0x4e79a7, "compute kernel" },
    { 0x59a14f, "GEMM / conv" },
    { 0xb07aa1, "communication" },
    { 0xf28e2b, "copy" },
    { 0xedc948, "memset" },
    { 0x76b7b2, "range" },
    { 0xe15759, "DataLoader wait" },
    { 0xa0cbe8, "CPU op" },
    { 0xbab0ac, "CUDA call" },
    { 0xff9da7, "blocking call" },
    { 0x8cd17d, "cuBLAS / cuDNN" },
    { 0xd9d9d9, "step" },
    { 0xe15759, "GPU idle: waiting for data" },
    { 0xff9da7, "GPU idle: after synchronisation" },
    { 0xbab0ac, "GPU idle: launch / Python overhead" },
    { 0x9c755f, "thread running" },
    { 0xd7c9bd, "thread waiting" },
    { 0x86bcb6, "GPU idle: inside a CUDA graph replay" },
    { 0x499894, "GPU memory" },
} };

} // namespace

const KindStyle& kindStyle(EventKind kind) {
    const size_t i = size_t(kind);
    return kStyles[i < kStyles.size() ? i : 0];
}

bool isBlockingCudaCall(std::string_view name) {
    // cudaStreamSynchronize, cudaDeviceSynchronize, cudaEventSynchronize, cuCtxSynchronize... and the
    // synchronous copies (cudaMemcpy, not cudaMemcpyAsync).
    if (name.find("Synchronize") != std::string_view::npos) return true;
    return name == "cudaMemcpy" || name == "cuMemcpy" || name == "cudaMemcpy2D" || name == "cuMemcpyDtoH_v2"
        || name == "cuMemcpyHtoD_v2" || name == "cudaMemset";
}

} // namespace tuneup::gui
