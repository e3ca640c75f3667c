// Gradients zeroed by fills: before each backward pass every parameter's gradient is overwritten with
// zeros, one fill kernel per parameter per step (what Optimizer::zero_grad() did up to LibTorch 1.13,
// and zero_grad(false) still does). --fixed sets the gradients to undefined tensors (None in Python):
// no kernels, and backward writes the fresh gradients instead of adding to zeros.

#include "sample.h"

int main(int argc, char** argv) {
    const auto options = sample::parse(argc, argv, "zero_grad_fill",
        "A deep MLP (many parameters); --fixed sets gradients to None instead of filling them with zeros.",
        { { "layers", "12" } });
    torch::manual_seed(0);
    const auto device = sample::device();
    torch::nn::Sequential model;
    for (int i = 0; i < static_cast<int>(options.number("layers")); ++i) {
        model->push_back(torch::nn::Linear(256, 256));
        model->push_back(torch::nn::ReLU());
    }
    model->push_back(torch::nn::Linear(256, 10));
    model->to(device);
    torch::optim::SGD optimizer(model->parameters(), torch::optim::SGDOptions(0.01).momentum(0.9));
    const auto inputs = torch::randn({ 64, 256 }, device);
    const auto targets = torch::randint(0, 10, { 64 }, torch::TensorOptions(device).dtype(torch::kLong));

    sample::fact("tuneup.zero_grad.set_to_none", options.fixed);
    sample::train(options, [&](int) {
        {
            sample::Range r("Optimizer.zero_grad");
            for (auto& p : model->parameters()) {
                if (!p.mutable_grad().defined()) continue;
                if (options.fixed)
                    p.mutable_grad() = torch::Tensor();
                else
                    p.mutable_grad().zero_();
            }
        }
        torch::Tensor loss;
        {
            sample::Range r("forward");
            loss = torch::nn::functional::cross_entropy(model->forward(inputs), targets);
        }
        {
            sample::Range r("backward");
            loss.backward();
        }
        sample::Range r("Optimizer.step");
        optimizer.step();
    });
    return 0;
}
