#include "advise/gemm_shapes.h"

#include "advise/kernel_precision.h"

#include <algorithm>

namespace tuneup::analysis {

namespace {

int64_t product(const std::vector<int64_t>& dims, size_t from, size_t to) {
    int64_t p = 1;
    for (size_t i = from; i < to; ++i)
        p *= dims[i];
    return p;
}

} // namespace

bool isGemmOp(std::string_view name) {
    return name == "aten::mm" || name == "aten::addmm" || name == "aten::bmm" || name == "aten::baddbmm"
        || name == "aten::linear" || name == "aten::matmul";
}

std::optional<GemmShape> gemmShape(std::string_view op, const std::vector<std::vector<int64_t>>& in) {
    auto has = [&](size_t i, size_t rank) { return in.size() > i && in[i].size() == rank; };
    GemmShape s;
    if (op == "aten::mm" && has(0, 2) && has(1, 2)) {
        s = { 1, in[0][0], in[1][1], in[0][1], 0 };
        if (in[1][0] != s.k) return std::nullopt;
    } else if (op == "aten::addmm" && has(1, 2) && has(2, 2)) {
        s = { 1, in[1][0], in[2][1], in[1][1], 1 };
        if (in[2][0] != s.k) return std::nullopt;
    } else if ((op == "aten::bmm" && has(0, 3) && has(1, 3)) || (op == "aten::baddbmm" && has(1, 3) && has(2, 3))) {
        const size_t a = op == "aten::bmm" ? 0 : 1;
        s = { in[a][0], in[a][1], in[a + 1][2], in[a][2], a };
        if (in[a + 1][1] != s.k) return std::nullopt;
    } else if (op == "aten::linear" && in.size() >= 2 && !in[0].empty() && has(1, 2)) {
        // input [..., K], weight [N, K]: every leading dim of the input is a row of the GEMM.
        const auto& x = in[0];
        s = { 1, product(x, 0, x.size() - 1), in[1][0], x.back(), 0 };
        if (in[1][1] != s.k) return std::nullopt;
    } else if (op == "aten::matmul" && in.size() >= 2 && !in[0].empty() && !in[1].empty()) {
        const auto& a = in[0];
        const auto& b = in[1];
        if (a.size() == 1 && b.size() == 1) return std::nullopt; // a dot product
        s.k = a.back();
        s.m = a.size() >= 2 ? a[a.size() - 2] : 1;
        s.n = b.size() >= 2 ? b.back() : 1;
        const int64_t kb = b.size() >= 2 ? b[b.size() - 2] : b[0];
        if (kb != s.k) return std::nullopt;
        if (b.size() <= 2) // [..., M, K] x [K, N]: the leading dims fold into M
            s.m *= a.size() > 2 ? product(a, 0, a.size() - 2) : 1;
        else
            s.batch = std::max(a.size() > 2 ? product(a, 0, a.size() - 2) : 1, product(b, 0, b.size() - 2));
    } else {
        return std::nullopt;
    }
    if (s.m <= 0 || s.n <= 0 || s.k <= 0) return std::nullopt;
    return s;
}

int torchTypeBytes(std::string_view type) {
    if (const Precision p = torchTypePrecision(type); p != Precision::Unknown) return precisionBytes(p);
    if (type.starts_with("c10::")) type.remove_prefix(5);
    if (type == "unsigned char") return 1;
    return dtypeBytes(type); // integers, bool, complex
}

int cudaTypeBytes(int32_t type) {
    switch (type) {
    case 0:
    case 10:
    case 12:
        return 4; // fp32, int32, uint32
    case 1:
    case 24:
    case 26:
        return 8; // fp64, int64, uint64
    case 2:
    case 14:
    case 20:
    case 22:
        return 2; // fp16, bf16, int16, uint16
    case 3:
    case 8:
    case 28:
    case 29:
    case 30:
        return 1; // int8, uint8, fp8
    case 4:
        return 8; // complex fp32
    case 5:
        return 16; // complex fp64
    case 6:
    case 15:
        return 4; // complex fp16 / bf16
    default:
        return 0;
    }
}

std::string cudaTypeName(int32_t type) {
    switch (type) {
    case 0:
        return "fp32";
    case 1:
        return "fp64";
    case 2:
        return "fp16";
    case 14:
        return "bf16";
    case 3:
        return "int8";
    case 28:
        return "fp8 e4m3";
    case 29:
        return "fp8 e5m2";
    default:
        return "type " + std::to_string(type);
    }
}

bool fastTensorCoreCompute(int32_t computeType) {
    return computeType == 74 || computeType == 75 || computeType == 77;
}

bool unalignedDim(int64_t elements, int elementBytes) {
    const int64_t align = std::max(1, 16 / std::max(1, elementBytes));
    return elements > 1 && elements % align != 0;
}

void GemmKernels::add(const TraceModel& model, RowIndex kernel) {
    const auto& k = model.kernels;
    const int64_t ns = k.endNs[size_t(kernel)] - k.startNs[size_t(kernel)];
    kernelNs += ns;
    ++kernels;
    const std::string_view name = model.str(k.name[size_t(kernel)]);
    if (ns > longestKernelNs) {
        longestKernelNs = ns;
        precision = kernelPrecision(model, size_t(kernel));
    }
    if (firstKernel == kNoRow) firstKernel = kernel;
    if (name.find("_align1") != std::string_view::npos || name.find("_align2") != std::string_view::npos)
        narrowKernel = true;
}

GemmOps gemmOps(const TraceModel& model, const std::function<bool(size_t kernel)>& isGemmKernel) {
    GemmOps out;
    const auto& ops = model.cpuOps;
    std::vector<char> isGemm(ops.size(), 0), hasGemmInside(ops.size(), 0);
    std::unordered_map<StringId, bool> gemmName;
    for (size_t i = 0; i < ops.size(); ++i) {
        auto [it, added] = gemmName.try_emplace(ops.name[i], false);
        if (added) it->second = isGemmOp(model.str(ops.name[i]));
        if (!it->second) continue;
        isGemm[i] = 1;
        ++out.count;
        for (RowIndex p = ops.parent[i]; p != kNoRow; p = ops.parent[size_t(p)])
            if (isGemm[size_t(p)]) // parents come first in time order, so they are marked already
                hasGemmInside[size_t(p)] = 1;
    }
    if (out.count == 0) return out;
    const auto& k = model.kernels;
    for (size_t i = 0; i < k.size(); ++i) {
        if (k.cpuOp[i] == kNoRow || !isGemmKernel(i)) continue;
        RowIndex op = k.cpuOp[i];
        for (int hops = 0; op != kNoRow && hops < 64 && !(isGemm[size_t(op)] && !hasGemmInside[size_t(op)]); ++hops)
            op = ops.parent[size_t(op)];
        if (op == kNoRow || !isGemm[size_t(op)] || hasGemmInside[size_t(op)]) continue;
        out.innermost[op].add(model, RowIndex(i));
    }
    return out;
}

} // namespace tuneup::analysis
