#include "advise/kernel_class.h"

#include "model/parallel_for.h"

#include <algorithm>
#include <cctype>
#include <string>
#include <unordered_map>

namespace tuneup::analysis {

namespace {

bool has(std::string_view name, std::string_view part) {
    return name.find(part) != std::string_view::npos;
}

// A kernel name with its lower-case copy, made once per name: names run to hundreds of characters
// (template arguments) and some searches ignore case (NCCL vs nccl).
struct Name {
    explicit Name(std::string_view name)
        : text(name)
        , lower(name.size(), ' ') {
        std::transform(name.begin(), name.end(), lower.begin(),
            [](char c) { return char(std::tolower(static_cast<unsigned char>(c))); });
    }
    std::string_view text;
    std::string lower;
};

bool has(const Name& name, std::string_view part) {
    return has(name.text, part);
}

// Case-insensitive search; `part` is in lower case.
bool hasNoCase(const Name& name, std::string_view part) {
    return name.lower.find(part) != std::string::npos;
}

// `part` (lower case) somewhere in the name, ignoring case, other than inside one of the longer words
// `unlike`: names carry the libraries and types of their template arguments ("fbgemm_gpu::FixedDivisor" in
// FBGEMM's embedding kernels, "_typeConvert" in vLLM's norms, "normal_and_transform" in torch.randn's kernel).
bool hasWord(const Name& name, std::string_view part, std::string_view unlike) {
    const size_t first = name.lower.find(part);
    if (first == std::string::npos) return false;
    if (name.lower.find(unlike) == std::string::npos) return true;
    std::string text = name.lower;
    for (size_t at = text.find(unlike); at != std::string::npos; at = text.find(unlike, at + 1))
        text.replace(at, unlike.size(), unlike.size(), ' ');
    return text.find(part, first) != std::string::npos;
}

// Fused attention kernels: FlashAttention 2 (flash_fwd_kernel, flash_bwd_*), 3 (FlashAttnFwdSm90, flash::),
// cuDNN's SDPA engines (cudnn_generated_fort_native_sdpa_*), TensorRT-LLM/FlashInfer FMHA (fmhaSm100a...),
// xFormers/PyTorch memory-efficient attention (fmha_cutlassF, efficient_attention), vLLM paged attention.
bool isAttention(const Name& name) {
    return hasNoCase(name, "flash_fwd") || hasNoCase(name, "flash_bwd") || hasNoCase(name, "flashattn")
        || has(name, "flash::") || hasNoCase(name, "fmha") || has(name, "_sdpa") || has(name, "sdpa_")
        || has(name, "efficient_attention") || has(name, "paged_attention") || has(name, "attention_kernel");
}

// hipBLASLt/rocBLAS (Tensile) GEMMs: Cijk_<A layout>_<B layout>_<types>_..., the types token being the
// data type letter(s) with the destination and compute types when they differ, then B when beta is used:
// SB (fp32), DB (fp64), HB/HHS (fp16), BBS (bf16), I8II (int8), F8.../B8... (fp8), XB/XSS (xf32).
// hipBLASLt's hand-tuned kernels carry a Custom_ prefix (Custom_Cijk_Ailk_Bljk_BBS_BH_...).
std::string_view tensileTypes(std::string_view name) {
    if (name.starts_with("Custom_")) name.remove_prefix(7);
    if (!name.starts_with("Cijk_")) return {};
    size_t at = 0;
    for (int skip = 0; skip < 3; ++skip) { // "Cijk", the A layout, the B layout
        at = name.find('_', at);
        if (at == std::string_view::npos) return {};
        ++at;
    }
    const size_t end = name.find('_', at);
    return name.substr(at, end == std::string_view::npos ? std::string_view::npos : end - at);
}

Precision tensilePrecision(std::string_view types) {
    if (types.starts_with("F8") || types.starts_with("B8")) return Precision::Fp8;
    switch (types.empty() ? ' ' : types.front()) {
    case 'S':
        return Precision::Fp32;
    case 'D':
        return Precision::Fp64;
    case 'H':
        return Precision::Fp16;
    case 'B':
        return Precision::Bf16;
    case 'I':
        return Precision::Int8;
    case 'X':
        return Precision::Tf32;
    default:
        return Precision::Unknown; // complex (C, Z) and what is not known yet
    }
}

} // namespace

KernelClass classifyKernel(std::string_view text) {
    const Name name(text);
    if (hasNoCase(name, "nccl") || hasNoCase(name, "rccl") || has(name, "cross_device_reduce")
        || has(name, "all_reduce") || has(name, "allreduce"))
        return KernelClass::Communication;
    if (!tensileTypes(text).empty()) return KernelClass::Gemm; // hipBLASLt/rocBLAS (Tensile)
    // TensorRT-LLM's batched (MoE) GEMMs on Blackwell: bmm_MxE4m3_MxE2m1MxE4m3_Fp32_t128x16x256..._sm100f.
    if (text.starts_with("bmm_")) return KernelClass::Gemm;
    // Inductor's templates: triton_tem_fused_mm_0, triton_tem_fused_addmm_1, ...; reductions and persistent
    // reductions: triton_red_*, triton_per_*.
    if (text.starts_with("triton_tem_") && (has(name, "mm") || has(name, "bmm"))) return KernelClass::Gemm;
    if (text.starts_with("triton_red_") || text.starts_with("triton_per_")) return KernelClass::Reduction;
    if (isAttention(name)) return KernelClass::Attention;
    // MIOpen: batch norm (MIOpenBatchNorm*) before the convolution words; implicit-GEMM convolutions
    // (igemm_fwd_gtcx_*, igemm_bwd_*, igemm_wrw_*), assembly ones (miopenSp3AsmConv*), naive_conv_*.
    if (has(name, "MIOpenBatchNorm")) return KernelClass::Reduction;
    if (text.starts_with("igemm_") || has(name, "miopenSp3AsmConv") || has(name, "MIOpenConv")
        || text.starts_with("naive_conv"))
        return KernelClass::Convolution;
    if (has(name, "FillFunctor") || has(name, "fill_kernel") || has(name, "zero_kernel")) return KernelClass::Fill;
    if (has(name, "multi_tensor_apply") || has(name, "Adam") || has(name, "adam_") || has(name, "sgd_kernel"))
        return KernelClass::Optimizer;
    // cuDNN batch-norm kernels (cudnn::bn_fw_tr_1C11_kernel_NCHW, bn_bw_1C11_kernel_new) are not convolutions.
    if (has(name, "bn_fw") || has(name, "bn_bw")) return KernelClass::Reduction;
    if (has(name, "cudnn") || hasWord(name, "conv", "convert") || has(name, "winograd")
        || has(name, "implicit_convolve") || has(name, "fft2d") || has(name, "fft_") || has(name, "dgrad")
        || has(name, "wgrad") || has(name, "fprop"))
        return has(name, "nchwToNhwc") || has(name, "nhwcToNchw") ? KernelClass::Copy : KernelClass::Convolution;
    if (hasWord(name, "gemm", "fbgemm") || has(name, "nvjet") || has(name, "gemv") || has(name, "xmma")
        || has(name, "wgmma") || has(name, "cublas") || has(name, "matmul") || has(name, "Kernel2<cutlass"))
        return KernelClass::Gemm;
    if (has(name, "reduce_kernel") || has(name, "softmax") || hasWord(name, "norm", "normal_")
        || has(name, "reduction"))
        return KernelClass::Reduction;
    if (has(name, "elementwise_kernel") || has(name, "elementwise") || has(name, "pointwise")
        || has(name, "triton_poi"))
        return KernelClass::Pointwise;
    if (has(name, "copy_kernel") || has(name, "direct_copy") || has(name, "CatArrayBatchedCopy")
        || has(name, "nchwToNhwc") || has(name, "nhwcToNchw"))
        return KernelClass::Copy;
    return KernelClass::Other;
}

std::vector<KernelClass> classifyKernels(const TraceModel& model) {
    // Each distinct name once (names run to hundreds of characters, a few microseconds each), the
    // names split between threads when there are enough of them to pay for one.
    std::unordered_map<StringId, size_t> nameIndex; // name -> its place in `names`
    std::vector<StringId> names;
    std::vector<uint32_t> kernelName(model.kernels.size());
    for (size_t i = 0; i < model.kernels.size(); ++i) {
        auto [it, added] = nameIndex.try_emplace(model.kernels.name[i], names.size());
        if (added) names.push_back(model.kernels.name[i]);
        kernelName[i] = static_cast<uint32_t>(it->second);
    }
    constexpr size_t kNamesPerPiece = 16, kNamesForTwoThreads = 64;
    std::vector<KernelClass> nameClasses(names.size());
    const size_t pieces = (names.size() + kNamesPerPiece - 1) / kNamesPerPiece;
    parallelFor(pieces, names.size() >= kNamesForTwoThreads ? usefulThreads(pieces, 2) : 1, [&](size_t piece) {
        for (size_t k = piece * kNamesPerPiece; k < std::min(names.size(), (piece + 1) * kNamesPerPiece); ++k)
            nameClasses[k] = classifyKernel(model.str(names[k]));
    });
    std::vector<KernelClass> classes(model.kernels.size());
    for (size_t i = 0; i < classes.size(); ++i)
        classes[i] = nameClasses[kernelName[i]];
    return classes;
}

Precision kernelPrecision(std::string_view name) {
    if (const std::string_view types = tensileTypes(name); !types.empty()) return tensilePrecision(types);
    // Order matters: the most specific markers first.
    if (has(name, "e4m3") || has(name, "E4m3") || has(name, "e5m2") || has(name, "E5m2") || has(name, "fp8")
        || has(name, "Fp8") || has(name, "Float8"))
        return Precision::Fp8;
    if (has(name, "e2m1") || has(name, "E2m1") || has(name, "fp4")) return Precision::Fp4;
    // cuBLASLt's nvjet kernels spell their types: nvjet_tst runs bf16 GEMMs (aten::addmm on BFloat16 launches it
    // on B200; the bf16 nvFuser benchmark on H200 too), nvjet_hsh fp16 ones.
    if (has(name, "bf16") || has(name, "bfloat16") || has(name, "BFloat16") || has(name, "Bfloat16")
        || has(name, "nvjet_tst"))
        return Precision::Bf16;
    if (has(name, "fp16") || has(name, "h884") || has(name, "h1688") || has(name, "h16816") || has(name, "hgemm")
        || has(name, "half") || has(name, "nvjet_hsh") || has(name, "_f16"))
        return Precision::Fp16;
    if (has(name, "tf32") || has(name, "tfloat32") || has(name, "s1688") || has(name, "s16816") || has(name, "xf32"))
        return Precision::Tf32;
    // cuBLAS's fp32 GEMMs on CUDA cores since Ampere: sm80/sm90_xmma_gemm_f32f32_f32f32_f32_..._ffma_... (the
    // FFMA instruction: no tensor cores); without tf32 in the name, f32f32_f32f32 inputs compute in fp32.
    if (has(name, "ffma") || has(name, "f32f32_f32f32_f32")) return Precision::Fp32;
    if (has(name, "i8") || has(name, "int8") || has(name, "imma")) return Precision::Int8;
    if (has(name, "dgemm") || has(name, "d884") || has(name, "double")) return Precision::Fp64;
    if (has(name, "sgemm") || has(name, "scudnn") || has(name, "nvjet_sss") || has(name, "<float")
        || has(name, "float,") || has(name, "fp32"))
        return Precision::Fp32;
    return Precision::Unknown;
}

int precisionBytes(Precision p) {
    switch (p) {
    case Precision::Fp64:
        return 8;
    case Precision::Fp32:
    case Precision::Tf32:
        return 4;
    case Precision::Fp16:
    case Precision::Bf16:
        return 2;
    case Precision::Int8:
    case Precision::Fp8:
    case Precision::Fp4:
        return 1;
    case Precision::Unknown:
        return 0;
    }
    return 0;
}

std::string_view kernelClassName(KernelClass c) {
    switch (c) {
    case KernelClass::Gemm:
        return "gemm";
    case KernelClass::Convolution:
        return "convolution";
    case KernelClass::Communication:
        return "communication";
    case KernelClass::Fill:
        return "fill";
    case KernelClass::Pointwise:
        return "pointwise";
    case KernelClass::Reduction:
        return "reduction";
    case KernelClass::Copy:
        return "copy";
    case KernelClass::Optimizer:
        return "optimizer";
    case KernelClass::Attention:
        return "attention";
    case KernelClass::Other:
        return "other";
    }
    return "other";
}

std::string_view precisionName(Precision p) {
    switch (p) {
    case Precision::Unknown:
        return "unknown";
    case Precision::Fp64:
        return "fp64";
    case Precision::Fp32:
        return "fp32";
    case Precision::Tf32:
        return "tf32";
    case Precision::Fp16:
        return "fp16";
    case Precision::Bf16:
        return "bf16";
    case Precision::Int8:
        return "int8";
    case Precision::Fp8:
        return "fp8";
    case Precision::Fp4:
        return "fp4";
    }
    return "unknown";
}

bool usesTensorCores(Precision p) {
    return p == Precision::Tf32 || p == Precision::Fp16 || p == Precision::Bf16 || p == Precision::Int8
        || p == Precision::Fp8 || p == Precision::Fp4;
}

} // namespace tuneup::analysis
