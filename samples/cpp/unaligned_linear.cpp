// GEMM dimensions that are not multiples of 8: Linear layers with in_features 1001 and out_features 30,
// fed batches of 30, so every GEMM has M, N and K off the 16-byte multiples Tensor Cores want (cuBLAS
// still uses them, more slowly). --fixed pads to batch 32, in 1008, out 32. On a GPU the model runs in
// fp16, where the multiple is 8.

#include "sample.h"

int main(int argc, char** argv) {
    const auto options = sample::parse(argc, argv, "unaligned_linear",
        "Linear layers of batch 30, in 1001, out 30; --fixed pads them to 32, 1008, 32.");
    torch::manual_seed(0);
    const auto device = sample::device();
    const int64_t batch = options.fixed ? 32 : 30, in = options.fixed ? 1008 : 1001, out = options.fixed ? 32 : 30;
    const auto dtype = device.is_cuda() ? torch::kHalf : torch::kFloat;

    torch::nn::Sequential model(torch::nn::Linear(in, out), torch::nn::ReLU(), torch::nn::Linear(out, out));
    model->to(device, dtype);
    torch::optim::SGD optimizer(model->parameters(), torch::optim::SGDOptions(0.01));
    const auto inputs = torch::randn({ batch, in }, torch::TensorOptions(device).dtype(dtype));
    const auto targets = torch::randint(0, out, { batch }, torch::TensorOptions(device).dtype(torch::kLong));
    sample::train(options, [&](int) {
        // A few GEMMs per step, so they dominate the step as in a real model.
        for (int i = 0; i < 8; ++i)
            sample::sgdStep(model, optimizer, inputs, targets);
    });
    return 0;
}
