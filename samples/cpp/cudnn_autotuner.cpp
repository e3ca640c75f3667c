// cuDNN autotuner off: a convolutional network with fixed input shapes trained with
// cudnn.benchmark off, so cuDNN picks each convolution's algorithm by heuristics instead of timing
// the candidates once. --fixed turns the autotuner on (at::globalContext().setBenchmarkCuDNN(true)).

#include "sample.h"

int main(int argc, char** argv) {
    const auto options = sample::parse(argc, argv, "cudnn_autotuner",
        "A small CNN on fixed-size images; --fixed turns cudnn.benchmark on.", { { "batch", "16" } });
    at::globalContext().setBenchmarkCuDNN(options.fixed);
    torch::manual_seed(0);
    const auto device = sample::device();
    const int64_t batch = static_cast<int64_t>(options.number("batch"));

    torch::nn::Sequential model(torch::nn::Conv2d(torch::nn::Conv2dOptions(3, 32, 3).padding(1)),
        torch::nn::BatchNorm2d(32), torch::nn::ReLU(),
        torch::nn::Conv2d(torch::nn::Conv2dOptions(32, 64, 3).padding(1)), torch::nn::BatchNorm2d(64),
        torch::nn::ReLU(), torch::nn::AdaptiveAvgPool2d(1), torch::nn::Flatten(), torch::nn::Linear(64, 10));
    model->to(device);
    torch::optim::SGD optimizer(model->parameters(), torch::optim::SGDOptions(0.01).momentum(0.9));
    const auto images = torch::randn({ batch, 3, 32, 32 }, device);
    const auto labels = torch::randint(0, 10, { batch }, torch::TensorOptions(device).dtype(torch::kLong));
    sample::train(options, [&](int) { sample::sgdStep(model, optimizer, images, labels); });
    return 0;
}
