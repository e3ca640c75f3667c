// Synthetic training traces of any size, for benchmarks (import, advise, the GUI) and tests that
// need volume. Writes a PyTorch profiler (Kineto) Chrome trace or a tuneup file of a plausible
// training loop: per step a DataLoader wait, a pageable host-to-device copy, a zero_grad that fills
// every gradient, forward and backward GEMMs and pointwise kernels, an optimizer step.
//   tuneup-tracegen --kernels N [--steps S] [--format kineto|tuneup] [--gzip] -o FILE
// With --ranks R, a data-parallel job: R files rank<i>.json[.gz] in the folder -o names, each step
// ending in an NCCL all-reduce that finishes on every rank together; rank --slow-rank computes
// --slow-factor times longer, so that the others wait for it (a straggler).

#include "trace_schema.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sqlite3.h>
#include <string>
#include <vector>
#include <zlib.h>

namespace {

struct Options {
    long long kernels = 100000;
    long long steps = 0;
    std::string format = "kineto";
    bool gzip = false;
    std::string output;
    int ranks = 0; // 0: one trace, no communication
    int slowRank = -1;
    double slowFactor = 1.2;
};

constexpr const char* kAllReduce = "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevComm*, unsigned long, ncclWork*)";
constexpr long long kAllReduceNs = 400'000; // the all-reduce itself, once every rank has arrived

// One kernel of the synthetic model, with the CPU op that launched it.
struct KernelSpec {
    const char* op;
    const char* kernel;
    long long durationNs;
    const char* dims; // Kineto "Input Dims" JSON, or nullptr
};

const KernelSpec kForward[] = {
    { "aten::addmm", "ampere_sgemm_128x64_tn", 180000, "[[64, 1001], [1001, 512], []]" },
    { "aten::relu",
        "void at::native::vectorized_elementwise_kernel<4, at::native::(anonymous namespace)::launch_clamp_scalar>",
        6000, nullptr },
    { "aten::addmm", "ampere_sgemm_64x64_tn", 90000, "[[64, 512], [512, 512], []]" },
    { "aten::add", "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>>", 5000,
        nullptr },
    { "aten::mul",
        "void at::native::vectorized_elementwise_kernel<4, at::native::BinaryFunctor<float, float, float, "
        "at::native::binary_internal::MulFunctor<float>>>",
        5000, nullptr },
};
const KernelSpec kBackward[] = {
    { "aten::mm", "ampere_sgemm_64x64_nt", 120000, "[[512, 64], [64, 512]]" },
    { "aten::threshold_backward",
        "void at::native::vectorized_elementwise_kernel<4, at::native::threshold_kernel_impl>", 7000, nullptr },
    { "aten::mm", "ampere_sgemm_128x64_nn", 200000, "[[64, 512], [512, 1001]]" },
    { "aten::sum",
        "void at::native::reduce_kernel<512, 1, at::native::ReduceOp<float, at::native::func_wrapper_t<float, "
        "at::native::sum_functor>>>",
        8000, nullptr },
};
constexpr const char* kFill
    = "void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>, at::detail::Array<char*, 1>>";
constexpr const char* kAdam
    = "void at::native::(anonymous namespace)::multi_tensor_apply_kernel<at::native::(anonymous "
      "namespace)::TensorListMetadata<4>, at::native::(anonymous namespace)::FusedAdamMathFunctor<float, 4>>";

class Sink {
public:
    virtual ~Sink() = default;
    virtual void cpuRange(const char* category, const std::string& name, long long startNs, long long endNs,
        const char* dims, long long correlation)
        = 0;
    virtual void kernel(const char* name, long long startNs, long long endNs, long long correlation) = 0;
    virtual void memcpy(long long startNs, long long endNs, long long bytes, long long correlation) = 0;
    virtual void finish() = 0;
};

// Kineto JSON. Times are µs with three decimals, as PyTorch writes them.
class KinetoSink final : public Sink {
public:
    KinetoSink(const std::string& path, bool gzip, int rank, int worldSize)
        : m_gzip(gzip) {
        if (gzip)
            m_gz = gzopen(path.c_str(), "wb6");
        else
            m_file = fopen(path.c_str(), "w");
        if (!m_gz && !m_file) {
            fprintf(stderr, "tuneup-tracegen: cannot write %s\n", path.c_str());
            exit(1);
        }
        write(R"({"schemaVersion": 1, "deviceProperties": [{"id": 0, "name": "NVIDIA A100-SXM4-80GB", )"
              R"("totalGlobalMem": 85097971712, "computeMajor": 8, "computeMinor": 0, "numSms": 108}], )"
              R"("distributedInfo": {"backend": "nccl", "rank": )");
        write(std::to_string(rank).c_str());
        write(R"(, "world_size": )");
        write(std::to_string(worldSize).c_str());
        write(R"(}, "traceEvents": [)");
    }

    void cpuRange(const char* category, const std::string& name, long long startNs, long long endNs, const char* dims,
        long long correlation) override {
        char args[256] = "";
        if (correlation >= 0)
            snprintf(
                args, sizeof args, R"(, "args": {"correlation": %lld, "External id": %lld})", correlation, correlation);
        else if (dims)
            snprintf(
                args, sizeof args, R"(, "args": {"Input Dims": %s, "Input type": ["float", "float", "float"]})", dims);
        event(category, name.c_str(), 1, 1, startNs, endNs, args);
    }

    void kernel(const char* name, long long startNs, long long endNs, long long correlation) override {
        char args[256];
        snprintf(args, sizeof args,
            R"(, "args": {"device": 0, "stream": 7, "correlation": %lld, "grid": [128, 1, 1], "block": [256, 1, 1], )"
            R"("registers per thread": 32, "shared memory": 0})",
            correlation);
        event("kernel", name, 0, 7, startNs, endNs, args);
    }

    void memcpy(long long startNs, long long endNs, long long bytes, long long correlation) override {
        char args[160];
        snprintf(args, sizeof args, R"(, "args": {"device": 0, "stream": 7, "correlation": %lld, "bytes": %lld})",
            correlation, bytes);
        event("gpu_memcpy", "Memcpy HtoD (Pageable -> Device)", 0, 7, startNs, endNs, args);
    }

    void finish() override {
        write(R"(], "traceName": "tuneup-tracegen"})");
        write("\n");
        if (m_gz) gzclose(m_gz);
        if (m_file) fclose(m_file);
    }

private:
    void event(const char* category, const char* name, int pid, int tid, long long startNs, long long endNs,
        const char* args) {
        char line[1024];
        const long long dur = endNs - startNs;
        snprintf(line, sizeof line,
            R"(%s{"ph": "X", "cat": "%s", "name": "%s", "pid": %d, "tid": %d, "ts": %lld.%03lld, "dur": %lld.%03lld%s})",
            m_first ? "\n  " : ",\n  ", category, name, pid, tid, startNs / 1000, startNs % 1000, dur / 1000,
            dur % 1000, args);
        m_first = false;
        write(line);
    }

    void write(const char* text) {
        if (m_gz)
            gzputs(m_gz, text);
        else
            fputs(text, m_file);
    }

    bool m_gzip;
    gzFile m_gz = nullptr;
    FILE* m_file = nullptr;
    bool m_first = true;
};

// A tuneup file (schema.sql), as the agent would write it with NVTX ranges for the CPU ops.
class TuneupSink final : public Sink {
public:
    explicit TuneupSink(const std::string& path) {
        remove(path.c_str());
        if (sqlite3_open(path.c_str(), &m_db) != SQLITE_OK) {
            fprintf(stderr, "tuneup-tracegen: cannot write %s\n", path.c_str());
            exit(1);
        }
        const std::string setup = "PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF; PRAGMA application_id="
            + std::to_string(tuneup::schema::kApplicationId)
            + "; PRAGMA user_version=" + std::to_string(tuneup::schema::kSchemaVersion) + "; BEGIN;";
        exec(setup.c_str());
        exec(std::string(tuneup::schema::schemaSql()).c_str());
        exec("INSERT INTO meta VALUES ('format', 'tuneup-trace'), ('schema_version', '1'), ('pid', '1'), "
             "('role', 'main'), ('command_line', 'tuneup-tracegen'), ('start_ns', '0'), "
             "('capture.nvtx', 'on'), ('capture.cuda', 'on');"
             "INSERT INTO devices(id, name, compute_major, compute_minor, sm_count, global_memory_bytes) "
             "VALUES (0, 'NVIDIA A100-SXM4-80GB', 8, 0, 108, 85097971712);"
             "INSERT INTO nvtx_domains VALUES (0, NULL); INSERT INTO threads VALUES (1, 1, NULL);");
        sqlite3_prepare_v2(m_db,
            "INSERT INTO nvtx_ranges(start_ns, end_ns, tid, domain_id, name_id, kind, depth) "
            "VALUES (?, ?, 1, 0, ?, 1, ?)",
            -1, &m_range, nullptr);
        sqlite3_prepare_v2(m_db,
            "INSERT INTO api_calls(start_ns, end_ns, tid, api, cbid, name_id, correlation_id) "
            "VALUES (?, ?, 1, 1, 211, ?, ?)",
            -1, &m_api, nullptr);
        sqlite3_prepare_v2(m_db,
            "INSERT INTO kernels(start_ns, end_ns, device_id, stream_id, correlation_id, name_id, "
            "grid_x, grid_y, grid_z, block_x, block_y, block_z) "
            "VALUES (?, ?, 0, 7, ?, ?, 128, 1, 1, 256, 1, 1)",
            -1, &m_kernel, nullptr);
        sqlite3_prepare_v2(m_db,
            "INSERT INTO memcpys(start_ns, end_ns, device_id, stream_id, correlation_id, "
            "copy_kind, src_kind, dst_kind, bytes) VALUES (?, ?, 0, 7, ?, 1, 1, 3, ?)",
            -1, &m_memcpy, nullptr);
        sqlite3_prepare_v2(m_db, "INSERT INTO strings(id, value) VALUES (?, ?)", -1, &m_string, nullptr);
    }

    void cpuRange(const char* category, const std::string& name, long long startNs, long long endNs, const char*,
        long long correlation) override {
        if (!strcmp(category, "cuda_runtime")) {
            bind(m_api, startNs, endNs, intern(name), correlation);
        } else {
            bind(m_range, startNs, endNs, intern(name), strcmp(category, "cpu_op") ? 0 : 1);
        }
    }

    void kernel(const char* name, long long startNs, long long endNs, long long correlation) override {
        bind(m_kernel, startNs, endNs, correlation, intern(name));
    }

    void memcpy(long long startNs, long long endNs, long long bytes, long long correlation) override {
        bind(m_memcpy, startNs, endNs, correlation, bytes);
    }

    void finish() override {
        for (sqlite3_stmt* s : { m_range, m_api, m_kernel, m_memcpy, m_string })
            sqlite3_finalize(s);
        exec("INSERT INTO meta VALUES ('end_ns', (SELECT max(end_ns) FROM kernels)); COMMIT;");
        sqlite3_close(m_db);
    }

private:
    void exec(const char* sql) {
        char* error = nullptr;
        if (sqlite3_exec(m_db, sql, nullptr, nullptr, &error) != SQLITE_OK) {
            fprintf(stderr, "tuneup-tracegen: %s\n", error);
            exit(1);
        }
    }

    long long intern(const std::string& text) {
        for (size_t i = 0; i < m_strings.size(); ++i)
            if (m_strings[i] == text) return (long long)i + 1;
        m_strings.push_back(text);
        sqlite3_bind_int64(m_string, 1, (long long)m_strings.size());
        sqlite3_bind_text(m_string, 2, text.c_str(), -1, SQLITE_TRANSIENT);
        sqlite3_step(m_string);
        sqlite3_reset(m_string);
        return (long long)m_strings.size();
    }

    void bind(sqlite3_stmt* s, long long a, long long b, long long c, long long d) {
        sqlite3_bind_int64(s, 1, a);
        sqlite3_bind_int64(s, 2, b);
        sqlite3_bind_int64(s, 3, c);
        sqlite3_bind_int64(s, 4, d);
        sqlite3_step(s);
        sqlite3_reset(s);
    }

    sqlite3* m_db = nullptr;
    sqlite3_stmt *m_range = nullptr, *m_api = nullptr, *m_kernel = nullptr, *m_memcpy = nullptr, *m_string = nullptr;
    std::vector<std::string> m_strings; // few distinct names: a linear search is fine
};

// Writes nothing: for working out a step's length before writing it.
class NullSink final : public Sink {
public:
    void cpuRange(const char*, const std::string&, long long, long long, const char*, long long) override { }
    void kernel(const char*, long long, long long, long long) override { }
    void memcpy(long long, long long, long long, long long) override { }
    void finish() override { }
};

// Emits one CPU op, its launch call and its kernel (`scale` times its usual length); returns the time the
// CPU is free again.
long long launch(
    Sink& sink, const KernelSpec& spec, long long cpuNs, long long& gpuNs, long long& correlation, double scale = 1.0) {
    const long long launchNs = 4000;
    const long long durationNs = (long long)(double(spec.durationNs) * scale);
    sink.cpuRange("cpu_op", spec.op, cpuNs, cpuNs + launchNs + 2000, spec.dims, -1);
    sink.cpuRange("cuda_runtime", "cudaLaunchKernel", cpuNs + 1000, cpuNs + 1000 + launchNs, nullptr, correlation);
    const long long start = std::max(gpuNs + 1000, cpuNs + 1000 + launchNs);
    sink.kernel(spec.kernel, start, start + durationNs, correlation);
    gpuNs = start + durationNs;
    ++correlation;
    return cpuNs + launchNs + 3000;
}

struct Loop {
    long long steps = 0, repeat = 1, kernels = 0;
    static constexpr int kParameters = 8;
    static constexpr int kLayers = 4;
};

// One training step from `cpu` (the GPU free at `gpu`); `scale` stretches the compute kernels. With
// `allReduceEndNs` > 0 the step ends in an all-reduce kernel that ends then. Returns the step's end.
long long step(Sink& sink, Loop& loop, long long number, long long cpu, long long& gpu, long long& correlation,
    double scale, long long allReduceEndNs) {
    const long long stepStart = cpu;
    // The DataLoader: 2 ms in the main process while the GPU idles.
    sink.cpuRange("user_annotation", "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__", cpu,
        cpu + 2'000'000, nullptr, -1);
    cpu += 2'000'000;
    sink.cpuRange("cuda_runtime", "cudaMemcpyAsync", cpu, cpu + 30000, nullptr, correlation);
    sink.memcpy(std::max(gpu, cpu) + 2000, std::max(gpu, cpu) + 150000, 64 * 1001 * 4, correlation++);
    gpu = std::max(gpu, cpu) + 150000;
    cpu += 40000;
    const long long zeroStart = cpu;
    for (int p = 0; p < Loop::kParameters; ++p, ++loop.kernels)
        cpu = launch(sink, { "aten::zero_", kFill, 2000, nullptr }, cpu, gpu, correlation);
    sink.cpuRange("user_annotation", "Optimizer.zero_grad#Adam.zero_grad", zeroStart, cpu, nullptr, -1);
    for (long long r = 0; r < loop.repeat; ++r)
        for (int l = 0; l < Loop::kLayers; ++l)
            for (const auto& spec : kForward)
                cpu = launch(sink, spec, cpu, gpu, correlation, scale), ++loop.kernels;
    for (long long r = 0; r < loop.repeat; ++r)
        for (int l = 0; l < Loop::kLayers; ++l)
            for (const auto& spec : kBackward)
                cpu = launch(sink, spec, cpu, gpu, correlation, scale), ++loop.kernels;
    if (allReduceEndNs > 0) {
        // The gradients' all-reduce: it starts when this rank is done and ends when the last rank is.
        sink.cpuRange("cpu_op", "nccl:all_reduce", cpu, cpu + 8000, nullptr, -1);
        sink.cpuRange("cuda_runtime", "cudaLaunchKernel", cpu + 1000, cpu + 5000, nullptr, correlation);
        const long long start = std::max(gpu + 1000, cpu + 5000);
        sink.kernel(kAllReduce, start, std::max(start + 1000, allReduceEndNs), correlation++);
        gpu = std::max(start + 1000, allReduceEndNs);
        cpu += 9000;
        ++loop.kernels;
    }
    const long long optimizerStart = cpu;
    cpu = launch(sink, { "aten::_fused_adam_", kAdam, 50000, nullptr }, cpu, gpu, correlation);
    ++loop.kernels;
    sink.cpuRange("user_annotation", "Optimizer.step#Adam.step", optimizerStart, cpu, nullptr, -1);
    cpu = std::max(cpu, gpu); // the step ends with a synchronising .item()
    sink.cpuRange("user_annotation", "ProfilerStep#" + std::to_string(number), stepStart, cpu, nullptr, -1);
    return cpu;
}

// A data-parallel job: every rank runs the same steps, the slow one longer, and all leave each
// step's all-reduce together.
int writeJob(const Options& options, Loop loop) {
    const std::string dir = options.output;
    const std::string mkdir = "mkdir -p '" + dir + "'";
    if (system(mkdir.c_str()) != 0) {
        fprintf(stderr, "tuneup-tracegen: cannot create %s\n", dir.c_str());
        return 1;
    }
    const long long origin = 1'700'000'000'000'000LL;
    long long totalKernels = 0;
    for (int rank = 0; rank < options.ranks; ++rank) {
        const std::string path = dir + "/rank" + std::to_string(rank) + (options.gzip ? ".json.gz" : ".json");
        KinetoSink sink(path, options.gzip, rank, options.ranks);
        const double scale = rank == options.slowRank ? options.slowFactor : 1.0;
        long long cpu = origin, gpu = origin, correlation = 1;
        loop.kernels = 0;
        for (long long s = 0; s < loop.steps; ++s) {
            // When the slowest rank reaches the all-reduce from this step's start (all ranks start together).
            NullSink none;
            Loop dry = loop;
            long long dryCpu = cpu, dryGpu = gpu, dryCorrelation = 0;
            const double slowest = options.slowRank >= 0 ? std::max(1.0, options.slowFactor) : 1.0;
            step(none, dry, s, dryCpu, dryGpu, dryCorrelation, slowest, 0);
            const long long slowestGpu = dryGpu - 50000 - 1000; // before the optimizer kernel
            cpu = step(sink, loop, s, cpu, gpu, correlation, scale, slowestGpu + kAllReduceNs);
        }
        sink.finish();
        totalKernels += loop.kernels;
    }
    fprintf(stderr, "tuneup-tracegen: %d ranks, %lld kernels each in %lld steps (rank %d %.2fx slower) -> %s\n",
        options.ranks, totalKernels / std::max(1, options.ranks), loop.steps, options.slowRank, options.slowFactor,
        dir.c_str());
    return 0;
}

} // namespace

int main(int argc, char** argv) {
    Options options;
    for (int i = 1; i < argc; ++i) {
        const std::string arg = argv[i];
        const char* value = i + 1 < argc ? argv[i + 1] : nullptr;
        if (arg == "--kernels" && value)
            options.kernels = atoll(argv[++i]);
        else if (arg == "--steps" && value)
            options.steps = atoll(argv[++i]);
        else if (arg == "--format" && value)
            options.format = argv[++i];
        else if (arg == "--gzip")
            options.gzip = true;
        else if (arg == "-o" && value)
            options.output = argv[++i];
        else if (arg == "--ranks" && value)
            options.ranks = atoi(argv[++i]);
        else if (arg == "--slow-rank" && value)
            options.slowRank = atoi(argv[++i]);
        else if (arg == "--slow-factor" && value)
            options.slowFactor = atof(argv[++i]);
        else {
            fprintf(stderr,
                "usage: tuneup-tracegen --kernels N [--steps S] [--format kineto|tuneup] [--gzip] -o FILE\n"
                "       tuneup-tracegen --ranks R [--slow-rank I] [--slow-factor F] --kernels N [--gzip] -o DIR\n"
                "  writes a synthetic training trace with about N kernels in S steps; with --ranks, R rank traces\n"
                "  of a data-parallel job (rank<i>.json) in DIR, rank I computing F times longer (default 1.2)\n");
            return 2;
        }
    }
    if (options.output.empty() || (options.format != "kineto" && options.format != "tuneup") || options.kernels <= 0) {
        fprintf(stderr, "tuneup-tracegen: need -o FILE, --kernels N > 0 and --format kineto|tuneup\n");
        return 2;
    }
    Loop loop;
    const long long perStep = Loop::kParameters + Loop::kLayers * (std::size(kForward) + std::size(kBackward)) + 1;
    loop.steps = options.steps > 0 ? options.steps : std::max(1LL, options.kernels / perStep);
    loop.repeat = std::max(1LL, options.kernels / (loop.steps * perStep));
    if (options.ranks > 0) {
        if (options.format != "kineto") {
            fprintf(stderr, "tuneup-tracegen: --ranks writes Kineto traces only\n");
            return 2;
        }
        return writeJob(options, loop);
    }

    KinetoSink* kineto = nullptr;
    Sink* sink;
    TuneupSink* tuneup = nullptr;
    if (options.format == "kineto")
        sink = kineto = new KinetoSink(options.output, options.gzip, 0, 1);
    else
        sink = tuneup = new TuneupSink(options.output);

    long long cpu = 1'700'000'000'000'000LL, gpu = cpu, correlation = 1;
    for (long long s = 0; s < loop.steps; ++s)
        cpu = step(*sink, loop, s, cpu, gpu, correlation, 1.0, 0);
    sink->finish();
    delete kineto;
    delete tuneup;
    fprintf(stderr, "tuneup-tracegen: %lld kernels in %lld steps -> %s\n", loop.kernels, loop.steps,
        options.output.c_str());
    return 0;
}
