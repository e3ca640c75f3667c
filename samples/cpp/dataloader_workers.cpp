// A slow dataset read in the training thread: every sample takes --load-ms to make (reading it) and --decode-ms
// of the CPU's work (decoding, augmentation), and with 0 workers the loop waits for each batch while the model has
// nothing to do.
// --fixed reads it with 4 worker threads that prepare batches ahead. Each wait for a batch is an NVTX
// range "DataLoader.next" (how tuneup sees data waits in C++ programs, docs/agent.md).

#include "sample.h"

#include <cmath>
#include <thread>

namespace {

volatile double g_decoded = 0; // what decoding made, kept so that it is computed

// Arithmetic for `ms`, as decoding an image would keep the CPU busy.
double decode(double ms) {
    const auto end = std::chrono::steady_clock::now() + std::chrono::duration<double, std::milli>(ms);
    double x = 0;
    while (std::chrono::steady_clock::now() < end)
        for (int i = 0; i < 20000; ++i)
            x = x * 0.999 + std::sqrt(x + i); // decode: the CPU's work
    return x;
}

class SlowDataset : public torch::data::datasets::Dataset<SlowDataset> {
public:
    SlowDataset(size_t size, double loadMs, double decodeMs)
        : m_size(size)
        , m_loadMs(loadMs)
        , m_decodeMs(decodeMs) { }
    torch::data::Example<> get(size_t index) override {
        std::this_thread::sleep_for(std::chrono::duration<double, std::milli>(m_loadMs));
        if (m_decodeMs > 0) g_decoded = g_decoded + decode(m_decodeMs);
        auto generator = at::make_generator<at::CPUGeneratorImpl>(index);
        return { torch::randn({ 512 }, generator), torch::tensor(static_cast<int64_t>(index % 10)) };
    }
    torch::optional<size_t> size() const override { return m_size; }

private:
    size_t m_size;
    double m_loadMs, m_decodeMs;
};

} // namespace

int main(int argc, char** argv) {
    const auto options = sample::parse(argc, argv, "dataloader_workers",
        "An MLP fed by a slow dataset loaded in the training thread; --fixed loads it with worker threads.",
        { { "batch", "8" }, { "load-ms", "0.2" }, { "decode-ms", "0" }, { "workers", "4" } });
    const size_t batch = static_cast<size_t>(options.number("batch"));
    const size_t workers = options.fixed ? static_cast<size_t>(options.number("workers")) : 0;
    torch::manual_seed(0);
    const auto device = sample::device();
    torch::nn::Sequential model(torch::nn::Linear(512, 1024), torch::nn::ReLU(), torch::nn::Linear(1024, 1024),
        torch::nn::ReLU(), torch::nn::Linear(1024, 10));
    model->to(device);
    torch::optim::SGD optimizer(model->parameters(), torch::optim::SGDOptions(0.01).momentum(0.9));

    auto loader = torch::data::make_data_loader<torch::data::samplers::SequentialSampler>(
        SlowDataset(batch * static_cast<size_t>(options.steps), options.number("load-ms"), options.number("decode-ms"))
            .map(torch::data::transforms::Stack<>()),
        torch::data::DataLoaderOptions().batch_size(batch).workers(workers));
    sample::fact("tuneup.dataloader.num_workers", static_cast<int64_t>(workers));
    sample::fact("tuneup.dataloader.pin_memory", 0);

    auto next = loader->begin();
    sample::train(options, [&](int step) {
        torch::data::Example<> example;
        {
            sample::Range wait("DataLoader.next");
            if (step > 0) ++next;
            example = *next;
        }
        sample::sgdStep(model, optimizer, example.data.to(device), example.target.to(device));
    });
    return 0;
}
