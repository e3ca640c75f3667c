// Host-to-device copies from pageable memory: each batch is made in ordinary host memory and copied
// to the GPU, which the driver stages through a pinned buffer and does synchronously. --fixed makes
// batches in pinned (page-locked) memory and copies them with non_blocking, overlapping the copy with
// compute. Without a GPU there is nothing to copy: the sample trains on the CPU.

#include "sample.h"

int main(int argc, char** argv) {
    const auto options = sample::parse(argc, argv, "pageable_copy",
        "Batches copied to the GPU from pageable memory; --fixed pins them and copies asynchronously.",
        { { "batch", "256" } });
    torch::manual_seed(0);
    const auto device = sample::device();
    const int64_t batch = static_cast<int64_t>(options.number("batch"));
    torch::nn::Sequential model(torch::nn::Linear(1024, 1024), torch::nn::ReLU(), torch::nn::Linear(1024, 10));
    model->to(device);
    torch::optim::SGD optimizer(model->parameters(), torch::optim::SGDOptions(0.01).momentum(0.9));

    const bool pin = options.fixed && device.is_cuda(); // pinning needs CUDA
    auto hostInputs = torch::randn({ batch, 1024 });
    auto hostTargets = torch::randint(0, 10, { batch }, torch::kLong);
    if (pin) {
        hostInputs = hostInputs.pin_memory();
        hostTargets = hostTargets.pin_memory();
    }
    sample::train(options, [&](int) {
        torch::Tensor inputs, targets;
        {
            sample::Range r("copy batch");
            inputs = hostInputs.to(device, /*non_blocking=*/pin);
            targets = hostTargets.to(device, /*non_blocking=*/pin);
        }
        sample::sgdStep(model, optimizer, inputs, targets);
    });
    return 0;
}
