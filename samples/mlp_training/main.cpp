// A small, complete LibTorch training loop: an MLP on synthetic data, each step marked with NVTX
// ranges (step, forward, backward, optimizer) the way instrumented training code does. Runs on
// CUDA when LibTorch and a GPU are there, else on the CPU.
//   mlp_training [--steps N] [--batch B] [--hidden H] [--cudnn-benchmark] [--anomaly]
// --cudnn-benchmark and --anomaly turn those torch settings on (for the torch probes' tests).

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <nvtx3/nvToolsExt.h>
#include <torch/torch.h>

namespace {

struct Options {
    int steps = 50;
    int batch = 64;
    int hidden = 256;
    bool cudnnBenchmark = false;
    bool anomaly = false;
};

Options parse(int argc, char** argv) {
    Options options;
    for (int i = 1; i < argc; ++i) {
        const bool hasValue = i + 1 < argc;
        if (!strcmp(argv[i], "--steps") && hasValue)
            options.steps = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--batch") && hasValue)
            options.batch = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--hidden") && hasValue)
            options.hidden = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--cudnn-benchmark"))
            options.cudnnBenchmark = true;
        else if (!strcmp(argv[i], "--anomaly"))
            options.anomaly = true;
        else {
            fprintf(
                stderr, "usage: mlp_training [--steps N] [--batch B] [--hidden H] [--cudnn-benchmark] [--anomaly]\n");
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

int train(int argc, char** argv) {
    const Options options = parse(argc, argv);
    const torch::Device device = torch::cuda::is_available() ? torch::kCUDA : torch::kCPU;
    torch::manual_seed(0);
    at::globalContext().setBenchmarkCuDNN(options.cudnnBenchmark);
    torch::autograd::AnomalyMode::set_enabled(options.anomaly);

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

int main(int argc, char** argv) {
    try {
        return train(argc, argv);
    } catch (const std::exception& e) {
        fprintf(stderr, "mlp_training: %s\n", e.what());
        return 1;
    }
}
