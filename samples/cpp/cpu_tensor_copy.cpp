// Tensors made on the CPU then copied: each step builds its noise and mask on the host and moves them
// to the GPU (a pageable copy and a wait per tensor). --fixed makes them on the device directly.

#include "sample.h"

int main(int argc, char** argv) {
    const auto options = sample::parse(argc, argv, "cpu_tensor_copy",
        "Per-step tensors made on the CPU then copied to the device; --fixed makes them on the device.");
    torch::manual_seed(0);
    const auto device = sample::device();
    torch::nn::Sequential model(torch::nn::Linear(512, 512), torch::nn::ReLU(), torch::nn::Linear(512, 10));
    model->to(device);
    torch::optim::SGD optimizer(model->parameters(), torch::optim::SGDOptions(0.01).momentum(0.9));
    const auto inputs = torch::randn({ 128, 512 }, device);
    const auto targets = torch::randint(0, 10, { 128 }, torch::TensorOptions(device).dtype(torch::kLong));

    sample::train(options, [&](int) {
        torch::Tensor noise, mask;
        {
            sample::Range r("augment");
            if (options.fixed) {
                noise = torch::randn({ 128, 512 }, device);
                mask = torch::rand({ 128, 512 }, device) > 0.1;
            } else {
                noise = torch::randn({ 128, 512 }).to(device);
                mask = (torch::rand({ 128, 512 }) > 0.1).to(device);
            }
        }
        sample::sgdStep(model, optimizer, (inputs + 0.01 * noise) * mask, targets);
    });
    return 0;
}
