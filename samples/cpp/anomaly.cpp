// Anomaly detection left on: autograd records a stack trace for every operation of the forward pass
// and checks every backward result for NaN, a debugging aid that slows every step. --fixed leaves it
// off (the default).

#include "sample.h"

int main(int argc, char** argv) {
    const auto options = sample::parse(argc, argv, "anomaly",
        "An MLP trained with autograd anomaly detection on; "
        "--fixed leaves it off.");
    torch::autograd::AnomalyMode::set_enabled(!options.fixed);
    torch::manual_seed(0);
    const auto device = sample::device();
    torch::nn::Sequential model(torch::nn::Linear(128, 256), torch::nn::ReLU(), torch::nn::Linear(256, 256),
        torch::nn::ReLU(), torch::nn::Linear(256, 10));
    model->to(device);
    torch::optim::SGD optimizer(model->parameters(), torch::optim::SGDOptions(0.01).momentum(0.9));
    const auto inputs = torch::randn({ 64, 128 }, device);
    const auto targets = torch::randint(0, 10, { 64 }, torch::TensorOptions(device).dtype(torch::kLong));
    sample::train(options, [&](int) { sample::sgdStep(model, optimizer, inputs, targets); });
    return 0;
}
