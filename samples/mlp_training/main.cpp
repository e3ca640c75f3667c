// A small, complete LibTorch training loop: an MLP on synthetic data, each step marked with NVTX
// ranges (step, forward, backward, optimizer) the way instrumented training code does. Runs on
// CUDA when LibTorch and a GPU are there, else on the CPU.
//   mlp_training [--steps N] [--batch B] [--hidden H]

#include <nvtx3/nvToolsExt.h>
#include <torch/torch.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace {

struct Options {
    int steps = 50;
    int batch = 64;
    int hidden = 256;
};

Options parse(int argc, char** argv)
{
    Options options;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--steps"))
            options.steps = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--batch"))
            options.batch = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--hidden"))
            options.hidden = atoi(argv[i + 1]);
        else {
            fprintf(stderr, "usage: mlp_training [--steps N] [--batch B] [--hidden H]\n");
            exit(2);
        }
    }
    return options;
}

// RAII NVTX range, so an exception cannot leave a range open.
struct Range {
    explicit Range(const char* name) { nvtxRangePushA(name); }
    ~Range() { nvtxRangePop(); }
};

} // namespace

int main(int argc, char** argv)
{
    const Options options = parse(argc, argv);
    const torch::Device device = torch::cuda::is_available() ? torch::kCUDA : torch::kCPU;
    torch::manual_seed(0);

    torch::nn::Sequential model(torch::nn::Linear(128, options.hidden), torch::nn::ReLU(),
        torch::nn::Linear(options.hidden, options.hidden), torch::nn::ReLU(), torch::nn::Linear(options.hidden, 10));
    model->to(device);
    torch::optim::SGD optimizer(model->parameters(), torch::optim::SGDOptions(0.01).momentum(0.9));

    const auto inputs = torch::randn({ options.batch, 128 }, device);
    const auto targets = torch::randint(0, 10, { options.batch }, torch::TensorOptions(device).dtype(torch::kLong));
    double loss = 0;
    for (int step = 0; step < options.steps; ++step) {
        Range stepRange("step");
        {
            Range r("zero_grad");
            optimizer.zero_grad();
        }
        torch::Tensor output;
        {
            Range r("forward");
            output = torch::nn::functional::cross_entropy(model->forward(inputs), targets);
        }
        {
            Range r("backward");
            output.backward();
        }
        {
            Range r("optimizer.step");
            optimizer.step();
        }
        loss = output.item<double>();
    }
    printf("trained %d steps on %s, final loss %.4f\n", options.steps, device.is_cuda() ? "cuda" : "cpu", loss);
    return 0;
}
