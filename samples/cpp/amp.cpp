// fp32 training on a GPU with Tensor Cores: every GEMM runs in fp32 (or TF32 at best). --fixed runs the
// forward pass under autocast (fp16 GEMMs) with a scaled loss, the C++ twin of torch.autocast and
// GradScaler. Without a GPU the sample trains in fp32 on the CPU either way (autocast is CUDA's here).

#include "sample.h"

#include <ATen/autocast_mode.h>
#include <torch/version.h>

// CUDA's autocast on or off: LibTorch 2.4+ names the device; 1.x had one switch, CUDA's.
void setCudaAutocast(bool enabled) {
#if TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 4)
    at::autocast::set_autocast_enabled(at::kCUDA, enabled);
#else
    at::autocast::set_enabled(enabled);
#endif
}

int main(int argc, char** argv) {
    const auto options = sample::parse(argc, argv, "amp",
        "An MLP trained in fp32; --fixed uses autocast (mixed precision).", { { "hidden", "2048" } });
    torch::manual_seed(0);
    const auto device = sample::device();
    const int64_t hidden = static_cast<int64_t>(options.number("hidden"));
    torch::nn::Sequential model(torch::nn::Linear(1024, hidden), torch::nn::ReLU(), torch::nn::Linear(hidden, hidden),
        torch::nn::ReLU(), torch::nn::Linear(hidden, 16));
    model->to(device);
    torch::optim::SGD optimizer(model->parameters(), torch::optim::SGDOptions(0.01).momentum(0.9));
    const auto inputs = torch::randn({ 256, 1024 }, device);
    const auto targets = torch::randint(0, 16, { 256 }, torch::TensorOptions(device).dtype(torch::kLong));
    constexpr double kLossScale = 1024.0; // a fixed scale: enough for this model (GradScaler adapts it)

    sample::train(options, [&](int) {
        {
            sample::Range r("Optimizer.zero_grad");
            optimizer.zero_grad();
        }
        torch::Tensor loss;
        setCudaAutocast(options.fixed);
        {
            sample::Range r("forward"); // inside the autocast region, where tuneup's probes can see it on
            loss = torch::nn::functional::cross_entropy(model->forward(inputs).to(torch::kFloat), targets);
        }
        setCudaAutocast(false);
        at::autocast::clear_cache();
        {
            sample::Range r("backward");
            (options.fixed ? loss * kLossScale : loss).backward();
        }
        sample::Range r("Optimizer.step");
        if (options.fixed)
            for (auto& p : model->parameters())
                if (p.grad().defined()) p.mutable_grad().div_(kLossScale);
        optimizer.step();
    });
    return 0;
}
