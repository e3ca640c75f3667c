// Convolution bias followed by BatchNorm: BatchNorm subtracts the channel mean, so the bias a
// convolution adds just before it is cancelled, yet costs a kernel (or an epilogue) and a gradient
// every step. --fixed builds the convolutions with bias=false.

#include "sample.h"

int main(int argc, char** argv) {
    const auto options = sample::parse(argc, argv, "conv_bias_bn",
        "A CNN whose convolutions have a bias before BatchNorm; --fixed drops the bias.", { { "batch", "16" } });
    torch::manual_seed(0);
    const auto device = sample::device();
    const bool bias = !options.fixed;
    auto conv = [&](int64_t in, int64_t out) {
        return torch::nn::Conv2d(torch::nn::Conv2dOptions(in, out, 3).padding(1).bias(bias));
    };
    torch::nn::Sequential model(conv(3, 32), torch::nn::BatchNorm2d(32), torch::nn::ReLU(), conv(32, 64),
        torch::nn::BatchNorm2d(64), torch::nn::ReLU(), torch::nn::AdaptiveAvgPool2d(1), torch::nn::Flatten(),
        torch::nn::Linear(64, 10));
    model->to(device);
    torch::optim::SGD optimizer(model->parameters(), torch::optim::SGDOptions(0.01).momentum(0.9));
    const int64_t batch = static_cast<int64_t>(options.number("batch"));
    const auto images = torch::randn({ batch, 3, 32, 32 }, device);
    const auto labels = torch::randint(0, 10, { batch }, torch::TensorOptions(device).dtype(torch::kLong));
    sample::train(options, [&](int) { sample::sgdStep(model, optimizer, images, labels); });
    return 0;
}
