// unfused-pointwise: runs of short elementwise kernels back to back on a stream, each reading and
// writing memory and paying a launch, that a fusing compiler (torch.compile) or a fused optimizer would
// merge into one kernel. Kernels torch.compile's Inductor chose to run in its compiled regions are not
// advice; a backend that does not fuse gets advice to use one that does. See unfused-pointwise.md.

#include "advise/kernel_origin.h"
#include "advise/rule_context.h"
#include "all_rules.h"

#include <algorithm>
#include <cctype>
#include <map>

namespace tuneup::rules {

using namespace analysis;

namespace {

constexpr int64_t kMaxKernelNs = 100'000; // a member of a run: a memory-bound elementwise kernel, not a big one
constexpr int64_t kMaxGapNs = 50'000; // back to back: the GPU did not go idle for something else
constexpr size_t kMinRun = 4; // kernels in a run
constexpr int64_t kLaunchGapNs = 10'000; // launch overhead per kernel that fusion removes (eager PyTorch: ~5-10 us)
constexpr double kQuietShare = 0.005;

struct Run {
    size_t first = 0, last = 0; // positions in the stream's kernel list
    int64_t startNs = 0, endNs = 0, longestNs = 0, kernelNs = 0;
    size_t kernels = 0, pointwise = 0;
    int64_t savedNs = 0;
    bool inOptimizer = false;
    bool inCompiledRegion = false; // most of its kernels were launched from a torch.compile region
};

bool contains(const std::vector<TimeSpan>& merged, int64_t t) {
    auto it
        = std::upper_bound(merged.begin(), merged.end(), t, [](int64_t v, const TimeSpan& s) { return v < s.startNs; });
    return it != merged.begin() && t < (it - 1)->endNs;
}

// A short name for an elementwise kernel: the functor or kernel function inside at::native's templates
// ("MulFunctor", "rsqrt_kernel_cuda"), else the first identifier that is not a wrapper.
std::string shortKernelName(std::string_view name) {
    static constexpr std::string_view kWrappers[] = { "void", "at", "native", "elementwise_kernel",
        "vectorized_elementwise_kernel", "unrolled_elementwise_kernel", "gpu_kernel_impl_nocast", "gpu_kernel_impl",
        "BinaryFunctor", "AUnaryFunctor", "BUnaryFunctor", "anonymous", "namespace", "binary_internal", "c10", "std",
        "detail", "float", "double", "int", "long", "bool", "Half", "BFloat16", "unsigned", "char", "const" };
    auto wrapper = [](std::string_view id) {
        return std::find(std::begin(kWrappers), std::end(kWrappers), id) != std::end(kWrappers)
            || std::isdigit(static_cast<unsigned char>(id[0]));
    };
    auto endsWith = [](std::string_view s, std::string_view tail) {
        return s.size() >= tail.size() && s.substr(s.size() - tail.size()) == tail;
    };
    std::string_view fallback;
    for (size_t i = 0; i < name.size();) {
        if (!(std::isalnum(static_cast<unsigned char>(name[i])) || name[i] == '_')) {
            ++i;
            continue;
        }
        size_t j = i;
        while (j < name.size() && (std::isalnum(static_cast<unsigned char>(name[j])) || name[j] == '_'))
            ++j;
        const std::string_view id = name.substr(i, j - i);
        i = j;
        if (wrapper(id)) continue;
        if (endsWith(id, "Functor") || id.substr(0, 11) == "CUDAFunctor" || endsWith(id, "_kernel_cuda")
            || endsWith(id, "_kernel_impl") || endsWith(id, "_kernel"))
            return std::string(id);
        if (fallback.empty()) fallback = id;
    }
    return std::string(fallback.empty() ? name.substr(0, 60) : fallback);
}

std::string aotInductorFix() {
    return "// LibTorch has no torch.compile: compile the model ahead of time with AOTInductor in Python\n"
           "// (torch._inductor.aoti_compile_and_package) and run the fused kernels from C++:\n"
           "#include <torch/csrc/inductor/aoti_package/model_package_loader.h>\n"
           "torch::inductor::AOTIModelPackageLoader loader(\"model.pt2\");\n"
           "auto outputs = loader.run({x});\n"
           "// In hand-written code, prefer fused ATen ops:\n"
           "// at::addcmul_, at::lerp_, torch::gelu, at::layer_norm.";
}

class UnfusedPointwise final : public Rule {
public:
    const RuleInfo& info() const override {
        static const RuleInfo info { "unfused-pointwise", "Unfused elementwise kernels",
            "Runs of short elementwise kernels back to back on a stream, which torch.compile or a fused optimizer "
            "would merge into one kernel each.",
            { Input::GpuKernels } };
        return info;
    }

    void evaluate(const RuleContext& context, RuleOutcome& outcome) const override {
        const TraceModel& m = context.model();
        const auto& k = m.kernels;

        std::vector<TimeSpan> optimizer;
        for (size_t i = 0; i < m.annotations.size(); ++i)
            if (m.str(m.annotations.name[i]).find("Optimizer.step") != std::string_view::npos)
                optimizer.push_back({ m.annotations.startNs[i], m.annotations.endNs[i] });
        optimizer = mergeSpans(std::move(optimizer));

        // torch.compile's regions: when the compiler fuses (Inductor: its regions launch Triton kernels), the
        // other kernels of a region are what it chose not to fuse (library calls, fallbacks), not advice.
        // A backend that does not fuse (cudagraphs, aot_eager) leaves eager chains inside its regions.
        const std::vector<char> compiled = launchedInCompiledRegion(m);
        std::vector<char> triton(k.size(), 0);
        size_t tritonTotal = 0, tritonCompiled = 0;
        for (size_t i = 0; i < k.size(); ++i) {
            triton[i] = m.str(k.name[i]).find("triton") != std::string_view::npos;
            tritonTotal += triton[i];
            tritonCompiled += triton[i] && compiled[i];
        }
        const bool regionsFuse = tritonCompiled > 0;

        // Kernels per (device, stream), in time order.
        std::map<std::pair<int32_t, int32_t>, std::vector<RowIndex>> streams;
        size_t pointwiseTotal = 0, leftInRegions = 0;
        std::vector<char> member(k.size(), 0); // 1 pointwise, 2 reduction
        for (size_t i = 0; i < k.size(); ++i) {
            streams[{ k.device[i], k.stream[i] }].push_back(RowIndex(i));
            const KernelClass c = context.kernelClass(i);
            pointwiseTotal += c == KernelClass::Pointwise;
            const bool candidate = c == KernelClass::Pointwise || c == KernelClass::Reduction;
            if (triton[i] || k.endNs[i] - k.startNs[i] >= kMaxKernelNs) continue;
            if (regionsFuse && compiled[i]) {
                leftInRegions += candidate;
                continue;
            }
            member[i] = c == KernelClass::Pointwise ? 1 : c == KernelClass::Reduction ? 2 : 0;
        }

        std::vector<Run> runs;
        std::vector<std::vector<RowIndex>> runKernels;
        for (const auto& stream : streams) {
            const auto& rows = stream.second; // not a structured binding: the lambda below captures it
            size_t begin = 0;
            auto close = [&](size_t end) { // rows[begin, end) are members
                if (end - begin < kMinRun) return;
                Run r;
                r.first = begin;
                r.last = end - 1;
                r.startNs = k.startNs[size_t(rows[begin])];
                r.endNs = k.endNs[size_t(rows[end - 1])];
                std::vector<RowIndex> members;
                size_t inRegion = 0;
                for (size_t j = begin; j < end; ++j) {
                    const size_t i = size_t(rows[j]);
                    const int64_t ns = k.endNs[i] - k.startNs[i];
                    r.longestNs = std::max(r.longestNs, ns);
                    r.kernelNs += ns;
                    ++r.kernels;
                    r.pointwise += member[i] == 1;
                    inRegion += compiled[i];
                    members.push_back(rows[j]);
                }
                r.inCompiledRegion = inRegion * 2 > r.kernels;
                if (r.pointwise * 2 < r.kernels) return; // mostly reductions: not an elementwise chain
                // One fused kernel reads the inputs and writes the outputs once: about the longest member,
                // twice for safety; the rest of the kernel time goes, and so does the launch overhead between
                // them (each gap up to kLaunchGapNs: longer gaps are other host work that fusion keeps).
                int64_t gapsNs = 0;
                for (size_t j = begin + 1; j < end; ++j)
                    gapsNs += std::clamp<int64_t>(
                        k.startNs[size_t(rows[j])] - k.endNs[size_t(rows[j - 1])], 0, kLaunchGapNs);
                r.savedNs = std::max<int64_t>(0, r.kernelNs - 2 * r.longestNs) + gapsNs;
                const RowIndex api = k.apiCall[size_t(rows[begin])];
                r.inOptimizer = api != kNoRow && contains(optimizer, m.apiCalls.startNs[size_t(api)]);
                runs.push_back(r);
                runKernels.push_back(std::move(members));
            };
            for (size_t j = 0; j < rows.size(); ++j) {
                const size_t i = size_t(rows[j]);
                const bool joins = member[i] && j > begin && k.startNs[i] - k.endNs[size_t(rows[j - 1])] < kMaxGapNs;
                if (joins) continue;
                close(j);
                begin = member[i] ? j : j + 1;
            }
            close(rows.size());
        }

        int64_t savedNs = 0, runNs = 0, optimizerSavedNs = 0, compiledSavedNs = 0;
        size_t kernelsInRuns = 0;
        for (const Run& r : runs) {
            savedNs += r.savedNs;
            runNs += r.kernelNs;
            kernelsInRuns += r.kernels;
            if (r.inOptimizer) optimizerSavedNs += r.savedNs;
            if (r.inCompiledRegion) compiledSavedNs += r.savedNs;
        }
        const std::string leftOut = leftInRegions > 0 ? "; " + std::to_string(leftInRegions)
                + " elementwise kernels launched inside torch.compile regions left out (the compiler's choice)"
                                                      : std::string();
        if (runs.empty()) {
            outcome.reason = std::to_string(pointwiseTotal) + " elementwise kernels, no run of "
                + std::to_string(kMinRun) + " or more back to back (each under " + formatDuration(kMaxKernelNs) + ")"
                + leftOut;
            return;
        }
        const int64_t perStepSaved = context.perStep(savedNs);
        Gain gain = context.gain(perStepSaved,
            "a fused kernel takes about twice the longest kernel of its run: the rest of the run's kernel time is "
            "saved, plus the launch gaps between its kernels (up to 10 us each)",
            "low");
        double share = gain.stepShare;
        if (context.stepNs() == 0) {
            int64_t busy = 0;
            for (size_t i = 0; i < k.size(); ++i)
                busy += k.endNs[i] - k.startNs[i];
            share = busy > 0 ? double(savedNs) / double(busy) : 0;
        }
        if (share < kQuietShare) {
            outcome.reason = std::to_string(runs.size()) + " runs of back-to-back elementwise kernels ("
                + std::to_string(kernelsInRuns) + " kernels); fusing them would save " + formatDuration(perStepSaved)
                + " per step (" + formatPercent(share) + "): negligible" + leftOut;
            return;
        }

        // The most frequent kernels in runs, for the evidence.
        std::map<std::string, size_t> names;
        for (const auto& members : runKernels)
            for (RowIndex row : members)
                if (member[size_t(row)] == 1) ++names[shortKernelName(m.str(k.name[size_t(row)]))];
        std::vector<std::pair<size_t, std::string>> top;
        top.reserve(names.size());
        for (auto& [n, c] : names)
            top.emplace_back(c, n);
        std::sort(top.begin(), top.end(), std::greater<>());
        std::string topText;
        for (size_t i = 0; i < top.size() && i < 5; ++i)
            topText += (i ? ", " : "") + top[i].second + " x" + std::to_string(top[i].first);

        const bool optimizerMostly = optimizerSavedNs * 2 > savedNs;
        const size_t steps = std::max<size_t>(context.stepCount(), 1);
        Finding f;
        f.severity = share >= 0.20 ? Severity::Error : share >= 0.015 ? Severity::Warning : Severity::Info;
        f.title = std::to_string(runs.size() / steps) + " runs of back-to-back elementwise kernels per step ("
            + std::to_string(kernelsInRuns / steps) + " kernels, " + formatDuration(context.perStep(runNs))
            + ") that fusion would merge" + (optimizerMostly ? ", mostly in the optimizer" : "");
        f.detail = "Consecutive elementwise kernels on one stream (at::native elementwise and small reduction "
                   "kernels, each under "
            + formatDuration(kMaxKernelNs) + ", less than " + formatDuration(kMaxGapNs) + " apart, at least "
            + std::to_string(kMinRun)
            + " in a row) were grouped into runs. Each kernel reads "
              "its inputs from memory and writes its output back and costs a launch; a fused kernel does the "
              "whole chain in one pass.";
        if (tritonTotal > 0)
            f.detail += " The trace also has " + std::to_string(tritonTotal)
                + " Triton kernels: torch.compile is in use "
                  "for part of the model; these runs come from regions it does not cover (graph breaks, eager code).";
        if (leftInRegions > 0)
            f.detail += " The " + std::to_string(leftInRegions)
                + " elementwise kernels launched inside its compiled regions are not counted: the compiler chose them.";
        const bool compiledMostly = !regionsFuse && compiledSavedNs * 2 > savedNs;
        if (!regionsFuse && compiledSavedNs > 0)
            f.detail += " " + formatPercent(double(compiledSavedNs) / double(savedNs))
                + " of the saving is in runs launched inside torch.compile regions (CompiledFunction, Torch-Compiled "
                  "Region) that ran no Triton kernel: the backend in use does not fuse (backend=\"cudagraphs\" and "
                  "\"aot_eager\" keep every eager kernel); the default backend, Inductor, would.";
        f.gain = std::move(gain);
        Evidence& e = f.evidence;
        e.facts = { { "runs", std::to_string(runs.size()) + " (" + std::to_string(runs.size() / steps) + " per step)" },
            { "kernels in runs",
                std::to_string(kernelsInRuns) + " (" + std::to_string(kernelsInRuns / steps) + " per step)" },
            { "their GPU time", formatDuration(runNs) + " (" + formatDuration(context.perStep(runNs)) + " per step)" },
            { "launches fusion would remove per step", std::to_string((kernelsInRuns - runs.size()) / steps) },
            { "in Optimizer.step",
                formatPercent(savedNs > 0 ? double(optimizerSavedNs) / double(savedNs) : 0) + " of the saving" },
            { "most frequent", topText } };
        if (leftInRegions > 0)
            e.facts.push_back({ "left out in torch.compile regions",
                std::to_string(leftInRegions) + " elementwise kernels (the compiler's choice)" });
        else if (!regionsFuse && compiledSavedNs > 0)
            e.facts.push_back({ "in torch.compile regions",
                formatPercent(double(compiledSavedNs) / double(savedNs))
                    + " of the saving (no Triton kernels: the backend does not fuse)" });
        // The runs that would save the most.
        std::vector<size_t> order(runs.size());
        for (size_t i = 0; i < order.size(); ++i)
            order[i] = i;
        std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return runs[a].savedNs > runs[b].savedNs; });
        for (size_t i : order) {
            if (e.spans.size() < 10) e.spans.push_back({ runs[i].startNs, runs[i].endNs });
            for (RowIndex row : runKernels[i])
                if (e.events.size() < 50) e.events.push_back({ EventTable::Kernel, row });
        }
        e.eventsTotal = kernelsInRuns;

        if (optimizerMostly) {
            f.fixPython = "# One multi-tensor kernel per update instead of several kernels per parameter:\n"
                          "optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3, fused=True)\n"
                          "# SGD (fused=True from PyTorch 2.3):\n"
                          "# optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9, foreach=True)";
            f.fixCpp = "// LibTorch's optimizers update parameter by parameter; update all of them with foreach ops:\n"
                       "std::vector<at::Tensor> params, grads;\n"
                       "for (auto& p : model->parameters())\n"
                       "    if (p.grad().defined()) { params.push_back(p); grads.push_back(p.grad()); }\n"
                       "torch::NoGradGuard no_grad;\n"
                       "at::_foreach_add_(params, grads, /*alpha=*/-lr);  // SGD step as one multi-tensor kernel";
        } else if (compiledMostly) {
            f.fixPython = "# The model is compiled with a backend that does not fuse: use Inductor, the default\n"
                          "model = torch.compile(model)  # fuses elementwise chains into Triton kernels\n"
                          "# or torch.compile(model, mode=\"reduce-overhead\"): fusion and CUDA graphs\n"
                          "# rather than torch.compile(model, backend=\"cudagraphs\") or backend=\"aot_eager\",\n"
                          "# which run every eager kernel as it was";
            f.fixCpp = aotInductorFix();
        } else {
            f.fixPython = "# Let torch.compile fuse chains of elementwise ops (and norms) into single kernels:\n"
                          "model = torch.compile(model)\n"
                          "# or only the hot function, e.g. a norm or an activation block:\n"
                          "@torch.compile\n"
                          "def rms_norm(x, weight, eps: float = 1e-6):\n"
                          "    x32 = x.float()\n"
                          "    x32 = x32 * torch.rsqrt(x32.pow(2).mean(-1, keepdim=True) + eps)\n"
                          "    return x32.to(x.dtype) * weight\n"
                          "# PyTorch 1.x, which has no torch.compile: TorchScript fuses them on the GPU\n"
                          "@torch.jit.script\n"
                          "def fused_gelu(x):\n"
                          "    return x * 0.5 * (1.0 + torch.erf(x / 1.41421))";
            f.fixCpp = aotInductorFix();
        }
        outcome.findings.push_back(std::move(f));
    }
};

} // namespace

std::unique_ptr<Rule> makeUnfusedPointwise() {
    return std::make_unique<UnfusedPointwise>();
}

} // namespace tuneup::rules
