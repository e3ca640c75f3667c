// amp-unused: GEMMs and convolutions computing in fp32 (or TF32) on a GPU with tensor cores, where
// mixed precision (autocast to bf16/fp16) would run them several times faster. See amp-unused.md.

#include "advise/kernel_precision.h"
#include "advise/rule_context.h"
#include "all_rules.h"

#include <algorithm>
#include <array>
#include <unordered_map>

namespace tuneup::rules {

using namespace analysis;

namespace {

constexpr double kFp32Saving = 0.5; // fp32 CUDA cores -> fp16/bf16 tensor cores: at least 2x
constexpr double kTf32Saving = 1.0 / 3.0; // TF32 -> bf16 tensor cores: about 1.5x (2x peak)
constexpr double kQuietShare = 0.005;

struct Arch {
    int major = 0, minor = 0;
    std::string source; // "deviceProperties" or "kernel names (volta_...)"
    std::string name; // the GPU's name when known
};

// The kernels whose precision decides tensor-core use: GEMMs, convolutions and fused attention (whose
// matrix products run on the tensor cores in fp16/bf16/fp8).
bool isMatmul(KernelClass c) {
    return c == KernelClass::Gemm || c == KernelClass::Convolution || c == KernelClass::Attention;
}

bool has(std::string_view s, std::string_view part) {
    return s.find(part) != std::string_view::npos;
}

// The oldest architecture the GEMM/convolution kernels' names require (cuBLAS/cuDNN/CUTLASS name their
// kernels after the architecture they target: volta_sgemm, cutlass_80_tensorop, sm90_xmma, nvjet).
// A lower bound: a Turing GPU runs volta_ kernels, an H100 cutlass_80_ ones.
std::optional<Arch> archFromKernelNames(const RuleContext& context) {
    const TraceModel& m = context.model();
    struct Hint {
        std::string_view marker;
        int major, minor;
    };
    static constexpr std::array<Hint, 14> kHints { { { "sm100", 10, 0 }, { "sm_100", 10, 0 }, { "sm90", 9, 0 },
        { "nvjet", 9, 0 }, { "hopper", 9, 0 }, { "sm86", 8, 6 }, { "sm80", 8, 0 }, { "ampere", 8, 0 },
        { "cutlass_80", 8, 0 }, { "sm75", 7, 5 }, { "turing", 7, 5 }, { "cutlass_75", 7, 5 }, { "volta", 7, 0 },
        { "sm70", 7, 0 } } };
    std::optional<Arch> best;
    std::vector<char> seen(m.strings.size(), 0);
    for (size_t i = 0; i < m.kernels.size(); ++i) {
        if (!isMatmul(context.kernelClass(i))) continue;
        const StringId id = m.kernels.name[i];
        if (id < seen.size()) {
            if (seen[id]) continue;
            seen[id] = 1;
        }
        const std::string_view name = m.str(id);
        for (const Hint& h : kHints)
            if (has(name, h.marker) && (!best || h.major * 10 + h.minor > best->major * 10 + best->minor)) {
                best = Arch { h.major, h.minor, "kernel names (" + std::string(h.marker) + "...)", "" };
                break;
            }
    }
    return best;
}

std::string ccText(const Arch& a) {
    return std::to_string(a.major) + "." + std::to_string(a.minor);
}

class AmpUnused final : public Rule {
public:
    const RuleInfo& info() const override {
        static const RuleInfo info { "amp-unused", "Mixed precision not used",
            "GEMMs and convolutions compute in fp32 (or TF32) on a GPU with tensor cores; autocast to bf16/fp16 "
            "would run them several times faster.",
            { Input::GpuKernels } };
        return info;
    }

    void evaluate(const RuleContext& context, RuleOutcome& outcome) const override {
        const TraceModel& m = context.model();
        int32_t device = context.steps().device;
        const DeviceInfo* info = device >= 0 ? m.device(device) : nullptr;
        if (!info && !m.devices.empty()) info = &m.devices.front();

        // Time per precision of the GEMM and convolution kernels.
        int64_t fp32Ns = 0, tf32Ns = 0, lowNs = 0, otherNs = 0, tf32GemmNs = 0, fp32GemmNs = 0;
        std::vector<std::pair<int64_t, RowIndex>> fp32Kernels; // fp32 and TF32: what autocast would speed up
        size_t count = 0;
        RowIndex unknownExample = kNoRow; // the longest kernel of unknown precision, to name in the finding
        // By name and the launching op's input types (what a Triton kernel's precision is read from).
        std::unordered_map<uint64_t, Precision> precisionOf;
        for (size_t i = 0; i < m.kernels.size(); ++i) {
            const KernelClass c = context.kernelClass(i);
            if (!isMatmul(c)) continue;
            ++count;
            const int64_t ns = m.kernels.endNs[i] - m.kernels.startNs[i];
            const RowIndex op = m.kernels.cpuOp[i];
            const StringId types = op == kNoRow ? kEmptyString : m.cpuOps.inputTypes[size_t(op)];
            auto [cached, added]
                = precisionOf.try_emplace(uint64_t(m.kernels.name[i]) << 32 | types, Precision::Unknown);
            if (added) cached->second = kernelPrecision(m, i);
            switch (cached->second) {
            case Precision::Fp32:
                fp32Ns += ns;
                if (c == KernelClass::Gemm) fp32GemmNs += ns;
                fp32Kernels.emplace_back(ns, RowIndex(i));
                break;
            case Precision::Tf32:
                tf32Ns += ns;
                fp32Kernels.emplace_back(ns, RowIndex(i));
                if (c == KernelClass::Gemm) tf32GemmNs += ns;
                break;
            case Precision::Fp16:
            case Precision::Bf16:
            case Precision::Fp8:
            case Precision::Fp4:
            case Precision::Int8:
                lowNs += ns;
                break;
            case Precision::Fp64:
            case Precision::Unknown:
                otherNs += ns;
                if (cached->second == Precision::Unknown
                    && (unknownExample == kNoRow
                        || ns > m.kernels.endNs[size_t(unknownExample)] - m.kernels.startNs[size_t(unknownExample)]))
                    unknownExample = RowIndex(i);
                break;
            }
        }
        // What the GEMM/convolution/attention time of unknown precision is, for every message: it counts
        // neither for nor against mixed precision.
        const std::string unknownText = otherNs == 0 ? std::string()
                                                     : "; " + formatDuration(otherNs) + " of unknown precision or fp64"
                + (unknownExample == kNoRow ? std::string()
                                            : " (names that do not say it, e.g. "
                            + std::string(m.str(m.kernels.name[size_t(unknownExample)])).substr(0, 80) + ")");
        if (m.info.vendor == GpuVendor::Amd || (info && info->vendor == GpuVendor::Amd)) {
            outcome.status = RuleStatus::NotApplicable;
            outcome.reason = "an AMD GPU" + (info && !info->name.empty() ? " (" + info->name + ")" : std::string())
                + ": the speed-ups this rule estimates are NVIDIA tensor cores'; its GEMM/convolution kernels "
                  "(hipBLASLt "
                  "Cijk_*, MIOpen) were read: fp32 "
                + formatDuration(fp32Ns) + ", xf32 " + formatDuration(tf32Ns) + ", fp16/bf16/fp8/int8 "
                + formatDuration(lowNs) + unknownText;
            return;
        }
        if (count == 0) {
            outcome.reason = "no GEMM or convolution kernels in the trace";
            return;
        }

        Arch arch;
        if (info && info->computeMajor > 0) {
            arch = { info->computeMajor, info->computeMinor, "deviceProperties", info->name };
        } else if (auto fromNames = archFromKernelNames(context)) {
            arch = *fromNames;
        } else {
            outcome.status = RuleStatus::NotEvaluated;
            outcome.reason = "needs " + std::string(inputName(Input::DeviceProperties))
                + ": the trace has no deviceProperties and its GEMM/convolution kernel names do not reveal the GPU "
                  "architecture";
            return;
        }
        const std::string gpu = arch.source == "deviceProperties"
            ? (arch.name.empty() ? "the GPU" : arch.name) + " (compute " + ccText(arch) + ")"
            : "the GPU (compute " + ccText(arch) + " or newer, from " + arch.source + ")";
        if (arch.major < 7 && arch.source == "deviceProperties") {
            outcome.status = RuleStatus::NotApplicable;
            outcome.reason = gpu + " has no tensor cores (they arrived with Volta, compute 7.0)";
            return;
        }

        const int64_t matmulNs = fp32Ns + tf32Ns + lowNs;
        if (matmulNs == 0) {
            outcome.reason = std::to_string(count) + " GEMM/convolution/attention kernels, none with a known precision"
                + unknownText;
            return;
        }
        if (lowNs * 2 >= matmulNs) {
            outcome.reason = "fp16/bf16/fp8 kernels take " + formatDuration(lowNs) + " of " + formatDuration(matmulNs)
                + " GEMM/convolution/attention time (" + formatPercent(double(lowNs) / double(matmulNs))
                + "): mixed precision is in use" + unknownText;
            return;
        }

        const bool ampere = arch.major >= 8;
        const int64_t savedNs = int64_t(double(fp32Ns) * kFp32Saving + double(tf32Ns) * kTf32Saving);
        const bool tf32Case = tf32Ns > fp32Ns;
        Gain gain = context.gain(context.perStep(savedNs),
            tf32Case ? "bf16 tensor cores run about 1.5x faster than TF32 (2x peak) and fp32 CUDA-core GEMMs at "
                       "least 2x slower: a third of the TF32 time plus half of the fp32 time"
                     : std::string(ampere ? "bf16" : "fp16")
                    + " tensor cores run GEMMs and convolutions at least 2x faster than fp32 CUDA cores (8-16x peak): "
                      "half of the fp32 GEMM/convolution time, plus a third of the TF32 time",
            tf32Case ? "low" : "medium");
        double share = gain.stepShare;
        if (context.stepNs() == 0) {
            int64_t busy = 0;
            for (size_t i = 0; i < m.kernels.size(); ++i)
                busy += m.kernels.endNs[i] - m.kernels.startNs[i];
            share = busy > 0 ? double(savedNs) / double(busy) : 0;
        }
        if (share < kQuietShare) {
            outcome.reason = "fp32/TF32 GEMM and convolution kernels take "
                + formatDuration(context.perStep(fp32Ns + tf32Ns)) + " per step: mixed precision would save "
                + formatPercent(share) + ", negligible" + unknownText;
            return;
        }

        Finding f;
        Evidence& e = f.evidence;
        e.facts = { { "GPU", gpu },
            { "fp32 GEMM/convolution time (CUDA cores)",
                formatDuration(fp32Ns) + " (" + formatDuration(context.perStep(fp32Ns)) + " per step)" },
            { "TF32 GEMM/convolution time",
                formatDuration(tf32Ns) + " (" + formatDuration(context.perStep(tf32Ns)) + " per step)" },
            { "fp16/bf16/fp8 GEMM/convolution time", formatDuration(lowNs) } };
        if (otherNs > 0)
            e.facts.emplace_back("GEMM/convolution/attention time of unknown precision (or fp64)",
                formatDuration(otherNs) + " (" + formatPercent(double(otherNs) / double(matmulNs + otherNs))
                    + "), counted neither way");
        std::sort(fp32Kernels.begin(), fp32Kernels.end(), std::greater<>());
        e.eventsTotal = fp32Kernels.size();
        for (size_t i = 0; i < fp32Kernels.size() && i < 50; ++i)
            e.events.push_back({ EventTable::Kernel, fp32Kernels[i].second });

        const std::string perStepText = formatDuration(context.perStep(fp32Ns + tf32Ns));
        if (tf32Case) {
            f.severity = share >= 0.015 ? Severity::Warning : Severity::Info; // softer: TF32 is already fast
            f.title = "TF32 is on, but GEMMs and convolutions still compute in 32-bit: " + perStepText
                + " per step; bf16 autocast would run them about 1.5-2x faster";
            f.detail = "GEMM and convolution kernels were classified by name: TF32 tensor-core kernels (s1688gemm, "
                       "tf32 xmma) take "
                + formatDuration(tf32Ns) + ", fp32 CUDA-core kernels " + formatDuration(fp32Ns) + ", fp16/bf16 ones "
                + formatDuration(lowNs)
                + ". TF32 already uses tensor cores; bf16 halves "
                  "the bytes moved and doubles the tensor-core peak again.";
            if (fp32GemmNs > 0)
                f.detail += " Some GEMMs still run on CUDA cores in fp32 (" + formatDuration(fp32GemmNs)
                    + "): cuBLAS picks them for shapes where TF32 kernels do not pay.";
        } else {
            f.severity = share >= 0.20 ? Severity::Error : share >= 0.015 ? Severity::Warning : Severity::Info;
            f.title = "GEMMs and convolutions run in fp32 on CUDA cores, not on the tensor cores of " + gpu + ": "
                + perStepText + " per step";
            f.detail = "GEMM and convolution kernels were classified by name (volta_sgemm, scudnn, "
                       "implicit_convolve_sgemm, <float> templates are fp32 on CUDA cores): fp32 takes "
                + formatDuration(fp32Ns) + ", TF32 " + formatDuration(tf32Ns) + ", fp16/bf16 " + formatDuration(lowNs)
                + ". Tensor cores need fp16/bf16 inputs (or TF32 on Ampere and newer); autocast casts GEMM and "
                  "convolution inputs and keeps numerically sensitive ops in fp32.";
            if (ampere && tf32GemmNs == 0 && fp32GemmNs > 0)
                f.detail += " cuBLAS GEMMs run in plain fp32: torch.backends.cuda.matmul.allow_tf32 is off "
                            "(the default since PyTorch 1.12).";
        }
        if (otherNs > 0)
            f.detail += " " + formatDuration(otherNs) + " of GEMM/convolution/attention time ("
                + formatPercent(double(otherNs) / double(matmulNs + otherNs))
                + ") is of kernels whose names do not say their precision (or fp64) and counts as unknown: the "
                  "estimate leaves it out.";
        f.gain = std::move(gain);
        if (ampere) {
            f.fixPython = "# Ampere and newer: bf16 autocast (no loss scaling needed)\n"
                          "with torch.autocast(device_type=\"cuda\", dtype=torch.bfloat16):\n"
                          "    loss = loss_fn(model(x), y)\n"
                          "loss.backward()\n"
                          "optimizer.step()\n"
                          "# At least, let fp32 GEMMs and convolutions use TF32 tensor cores:\n"
                          "torch.backends.cuda.matmul.allow_tf32 = True  # or set_float32_matmul_precision(\"high\")\n"
                          "torch.backends.cudnn.allow_tf32 = True";
            f.fixCpp = "at::globalContext().setAllowTF32CuBLAS(true);  // TF32 for fp32 GEMMs\n"
                       "at::globalContext().setAllowTF32CuDNN(true);\n"
                       "at::autocast::set_autocast_gpu_dtype(at::kBFloat16);\n"
                       "at::autocast::set_enabled(true);  // LibTorch >= 2.4: set_autocast_enabled(at::kCUDA, true)\n"
                       "auto loss = loss_fn(model->forward(x), y);\n"
                       "at::autocast::set_enabled(false);\n"
                       "at::autocast::clear_cache();\n"
                       "loss.backward();\n"
                       "optimizer.step();";
        } else {
            f.fixPython = "# Volta/Turing: fp16 autocast with a GradScaler (no bf16 tensor cores before Ampere)\n"
                          "scaler = torch.amp.GradScaler(\"cuda\")  # PyTorch < 2.3: torch.cuda.amp.GradScaler()\n"
                          "with torch.autocast(device_type=\"cuda\", dtype=torch.float16):\n"
                          "    loss = loss_fn(model(x), y)\n"
                          "scaler.scale(loss).backward()\n"
                          "scaler.step(optimizer)\n"
                          "scaler.update()";
            f.fixCpp = "at::autocast::set_autocast_gpu_dtype(at::kHalf);\n"
                       "at::autocast::set_enabled(true);  // LibTorch >= 2.4: set_autocast_enabled(at::kCUDA, true)\n"
                       "auto loss = loss_fn(model->forward(x), y);\n"
                       "at::autocast::set_enabled(false);\n"
                       "at::autocast::clear_cache();\n"
                       "// fp16 needs loss scaling (LibTorch has no GradScaler): scale, then unscale the gradients\n"
                       "const double scale = 65536.0;\n"
                       "(loss * scale).backward();\n"
                       "for (auto& p : model->parameters())\n"
                       "    if (p.grad().defined()) p.grad().div_(scale);\n"
                       "optimizer.step();";
        }
        outcome.findings.push_back(std::move(f));
    }
};

} // namespace

std::unique_ptr<Rule> makeAmpUnused() {
    return std::make_unique<AmpUnused>();
}

} // namespace tuneup::rules
