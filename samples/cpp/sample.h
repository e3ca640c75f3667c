#pragma once
// What every C++ sample shares: its command line (--steps N, --fixed, sample-specific --NAME VALUE),
// the device, NVTX ranges around each step and its phases, and facts stated the way tuneup's Python
// bootstrap states them (marks with an integer payload in the NVTX domain "tuneup", docs/agent.md).
// Each sample shows one anti-pattern; --fixed runs its corrected twin.

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <nvtx3/nvToolsExt.h>
#include <string>
#include <torch/torch.h>

namespace sample {

struct Options {
    const char* name = "";
    int steps = 20;
    bool fixed = false;
    std::map<std::string, std::string> values; // --NAME VALUE flags the sample declared

    double number(const std::string& flag) const { return std::atof(values.at(flag).c_str()); }
};

// `defaults` names the sample's own flags with their default values.
inline Options parse(
    int argc, char** argv, const char* name, const char* what, std::map<std::string, std::string> defaults = {}) {
    Options options;
    options.name = name;
    options.values = std::move(defaults);
    auto usage = [&](FILE* to) {
        std::fprintf(to, "usage: %s [--steps N] [--fixed]", name);
        for (const auto& [flag, value] : options.values)
            std::fprintf(to, " [--%s %s]", flag.c_str(), value.c_str());
        std::fprintf(to, "\n%s\n", what);
    };
    for (int i = 1; i < argc; ++i) {
        const std::string arg = argv[i];
        const bool hasValue = i + 1 < argc;
        if (arg == "--steps" && hasValue) {
            options.steps = std::atoi(argv[++i]);
        } else if (arg == "--fixed") {
            options.fixed = true;
        } else if (arg == "--help" || arg == "-h") {
            usage(stdout);
            std::exit(0);
        } else if (arg.starts_with("--") && hasValue && options.values.count(arg.substr(2))) {
            options.values[arg.substr(2)] = argv[++i];
        } else {
            std::fprintf(stderr, "%s: unknown argument '%s'\n", name, arg.c_str());
            usage(stderr);
            std::exit(2);
        }
    }
    if (options.steps < 1) {
        std::fprintf(stderr, "%s: --steps must be at least 1\n", name);
        std::exit(2);
    }
    return options;
}

inline torch::Device device() {
    return torch::cuda::is_available() ? torch::kCUDA : torch::kCPU;
}

// An NVTX range for a scope (RAII, so an exception cannot leave it open).
struct Range {
    explicit Range(const char* name) { nvtxRangePushA(name); }
    ~Range() { nvtxRangePop(); }
    Range(const Range&) = delete;
    Range& operator=(const Range&) = delete;
};

// A fact about the program for tuneup's rules ("tuneup.dataloader.num_workers", ...).
inline void fact(const char* name, int64_t value) {
    static const nvtxDomainHandle_t domain = nvtxDomainCreateA("tuneup");
    nvtxEventAttributes_t attributes {};
    attributes.version = NVTX_VERSION;
    attributes.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
    attributes.messageType = NVTX_MESSAGE_TYPE_ASCII;
    attributes.message.ascii = name;
    attributes.payloadType = NVTX_PAYLOAD_TYPE_INT64;
    attributes.payload.llValue = value;
    nvtxDomainMarkEx(domain, &attributes);
}

// Runs `step` options.steps times, each inside a range named "step", and prints the time per step.
inline void train(const Options& options, const std::function<void(int)>& step) {
    const auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < options.steps; ++i) {
        Range range("step");
        step(i);
    }
    if (device().is_cuda()) torch::cuda::synchronize();
    const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    std::printf("%s%s: %d steps on %s, %.2f ms per step\n", options.name, options.fixed ? " --fixed" : "",
        options.steps, device().is_cuda() ? "cuda" : "cpu", ms / options.steps);
}

// One SGD step of `model` on (inputs, targets) with cross-entropy, its phases marked as ranges.
template <class Model>
torch::Tensor sgdStep(
    Model& model, torch::optim::Optimizer& optimizer, const torch::Tensor& inputs, const torch::Tensor& targets) {
    {
        Range r("Optimizer.zero_grad");
        optimizer.zero_grad();
    }
    torch::Tensor loss;
    {
        Range r("forward");
        loss = torch::nn::functional::cross_entropy(model->forward(inputs), targets);
    }
    {
        Range r("backward");
        loss.backward();
    }
    {
        Range r("Optimizer.step");
        optimizer.step();
    }
    return loss;
}

} // namespace sample
