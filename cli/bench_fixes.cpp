#include "bench_fixes.h"

#include <algorithm>
#include <cmath>

namespace tuneup::cli {

using namespace analysis;

namespace {

std::string settingOf(const RankSummary& rank, std::string_view name) {
    for (const auto& [key, value] : rank.settings)
        if (key == name) return value;
    return "";
}

bool contains(std::string_view text, std::string_view part) {
    return text.find(part) != std::string_view::npos;
}

constexpr std::string_view kNeedsCode = "the fix is a code change: bench your edited program with --candidate 'CMD'";

} // namespace

const std::vector<BenchFix>& benchFixes() {
    static const std::vector<BenchFix> kFixes = {
        { "cudnn-benchmark", "", true, true, false,
            "turns cuDNN's autotuner on: torch.backends.cudnn.benchmark = True, kept on whatever the program sets "
            "(LibTorch: at::globalContext().setBenchmarkCuDNN(true) on every NVTX push)",
            "the program never loaded torch" },
        { "anomaly-off", "", true, true, false,
            "keeps autograd anomaly detection off: torch.set_anomaly_enabled(True) turns it off instead "
            "(LibTorch: torch::autograd::AnomalyMode's flag cleared on every NVTX push)",
            "the program never turned anomaly detection on" },
        { "tf32", "", true, true, true,
            "allows TF32 for float32 matmuls and convolutions: torch.backends.cuda.matmul.allow_tf32, "
            "torch.backends.cudnn.allow_tf32 and set_float32_matmul_precision('high') (torch 2.9+: "
            "fp32_precision = 'tf32'), re-applied after each optimizer step (LibTorch: setAllowTF32CuBLAS/CuDNN)",
            "the program never loaded torch" },
        { "set-to-none", "", true, false, false,
            "Optimizer.zero_grad(set_to_none=True) whatever the program passes: gradients are freed, not "
            "filled with zeros",
            "the program never called Optimizer.zero_grad" },
        { "dataloader-workers", "N", true, false, false,
            "DataLoader(num_workers=N) for every map-style dataset (an IterableDataset is left alone: each "
            "worker would yield all of it)",
            "the program made no DataLoader" },
        { "pin-memory", "", true, false, false, "DataLoader(pin_memory=True) when a GPU is there",
            "the program made no DataLoader" },
        { "persistent-workers", "", true, false, false,
            "DataLoader(persistent_workers=True) when the DataLoader has workers", "the program made no DataLoader" },
        { "fused-optimizer", "", true, false, false,
            "optimizers made with fused=True when their parameters are on the GPU and the class takes it, "
            "else foreach=True",
            "the program made no torch.optim optimizer" },
        { "amp-bf16", "", true, false, true,
            "autocast to bfloat16 on the training thread for the whole step (forward and loss), renewed after "
            "each optimizer step; a what-if whose loss is compared with the baseline's",
            "the program never loaded torch" },
        { "amp-fp16", "", true, false, true,
            "autocast to float16 as amp-bf16, with a GradScaler: the loss scaled before backward, the optimizer "
            "stepped through the scaler (GPU only)",
            "the program never loaded torch" },
        { "channels-last", "", true, false, false,
            "every 4-D parameter the optimizer holds (convolution weights) made channels_last when the optimizer "
            "is made; convolutions then run in NHWC",
            "the program made no torch.optim optimizer" },
    };
    return kFixes;
}

const BenchFix* findBenchFix(std::string_view name) {
    for (const BenchFix& f : benchFixes())
        if (f.name == name) return &f;
    return nullptr;
}

std::vector<FixSpec> parseFixList(const std::string& text, std::string& error) {
    std::vector<FixSpec> fixes;
    std::string known;
    for (const BenchFix& f : benchFixes())
        known
            += (known.empty() ? "" : ", ") + std::string(f.name) + (f.value.empty() ? "" : "=" + std::string(f.value));
    size_t pos = 0;
    while (pos <= text.size()) {
        const size_t comma = std::min(text.find(',', pos), text.size());
        std::string item = text.substr(pos, comma - pos);
        pos = comma + 1;
        item.erase(0, item.find_first_not_of(" \t"));
        item.erase(item.find_last_not_of(" \t") + 1);
        FixSpec spec;
        const size_t equals = item.find('=');
        spec.name = item.substr(0, equals);
        if (equals != std::string::npos) spec.value = item.substr(equals + 1);
        const BenchFix* fix = findBenchFix(spec.name);
        if (!fix) {
            error = "unknown fix '" + spec.name + "' in --fix " + text + " (known: " + known + ")";
            return {};
        }
        if (!fix->value.empty()) {
            const bool number = !spec.value.empty() && spec.value.size() <= 4
                && std::all_of(spec.value.begin(), spec.value.end(), [](char c) { return c >= '0' && c <= '9'; });
            if (!number || std::stoi(spec.value) < 1) {
                error = "--fix " + spec.name + " needs a number of workers, 1 or more: e.g. --fix " + spec.name + "=4";
                return {};
            }
        } else if (!spec.value.empty()) {
            error = "--fix " + spec.name + " takes no value (got '" + spec.value + "')";
            return {};
        }
        if (std::any_of(fixes.begin(), fixes.end(), [&](const FixSpec& f) { return f.name == spec.name; })) {
            error = "--fix " + text + " names " + spec.name + " twice";
            return {};
        }
        fixes.push_back(spec);
    }
    return fixes;
}

FindingFix fixForFinding(
    const Finding& finding, const RankSummary& rank, bool python, unsigned cpus, int computeMajor) {
    const std::string& rule = finding.ruleId;
    const auto one = [](std::string name, std::string value = "") {
        return FindingFix { { FixSpec { std::move(name), std::move(value) } }, "" };
    };
    const auto pythonOnly = [&](FindingFix fix) {
        return python ? fix
                      : FindingFix { {},
                            "a LibTorch program: this fix is in its code; bench your edit with --candidate "
                            "'CMD'" };
    };
    if (rule == "cudnn-autotuner-off") return one("cudnn-benchmark");
    if (rule == "debug-api-enabled") {
        if (contains(finding.title, "anomaly")) return one("anomaly-off");
        return { {}, "the profiler, emit_nvtx or gradcheck is called by the program: " + std::string(kNeedsCode) };
    }
    if (rule == "zero-grad-fill") return pythonOnly(one("set-to-none"));
    if (rule == "dataloader-stall") {
        // The main process busy receiving its batches: the rule's title says more workers will not help.
        if (contains(finding.title, "more workers will not help"))
            return { {},
                "the main process is busy receiving the batches, so more workers will not help: make them cheaper to "
                "hand over (dataloader-stall's fix); "
                    + std::string(kNeedsCode) };
        // As the rule advises: as many workers as CPU cores (twice the current ones when there are some),
        // at least 2.
        const std::string current = settingOf(rank, "dataloader.num_workers");
        const unsigned now = current.empty() ? 0 : unsigned(std::max(0, std::atoi(current.c_str())));
        const unsigned workers = std::max(2u, now > 0 ? 2 * now : std::min(cpus, 8u));
        return pythonOnly(one("dataloader-workers", std::to_string(workers)));
    }
    if (rule == "pageable-memcpy") {
        if (settingOf(rank, "dataloader.num_workers").empty())
            return { {}, "the copies do not come from a DataLoader: pin the tensors in the code (--candidate 'CMD')" };
        return pythonOnly(one("pin-memory"));
    }
    if (rule == "amp-unused") {
        // bfloat16 needs no loss scaling, on GPUs that have it (compute capability 8.0, Ampere, and later).
        const bool bf16 = computeMajor >= 8;
        return pythonOnly(one(bf16 ? "amp-bf16" : "amp-fp16"));
    }
    return { {}, std::string(kNeedsCode) };
}

const Finding* findingForFixes(const std::vector<FixSpec>& fixes, const std::vector<const Finding*>& findings,
    const RankSummary& rank, bool python, unsigned cpus, int computeMajor) {
    for (const Finding* f : findings) {
        const FindingFix answer = fixForFinding(*f, rank, python, cpus, computeMajor);
        for (const FixSpec& a : answer.fixes)
            if (std::any_of(fixes.begin(), fixes.end(), [&](const FixSpec& g) { return g.name == a.name; })) return f;
    }
    return nullptr;
}

} // namespace tuneup::cli
