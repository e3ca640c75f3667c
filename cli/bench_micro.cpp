// `tuneup bench --micro RUN` (docs/bench.md#micro-benchmarks): what a GPU would time of the recorded
// work itself — each recorded GEMM shape against its padded-to-aligned twin, each recorded convolution
// with the heuristic's algorithm against the autotuner's, pageable against pinned copies of the recorded
// sizes, fills against set-to-none — planned from the recording here. The timing itself runs on a GPU
// only; without one, the plan is shown and the exit code is 2. No timing is ever made up.

#include "advise/gemm_shapes.h"
#include "job/job.h"
#include "output_file.h"
#include "subcommand.h"
#include "units.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <map>
#include <ostream>
#include <string>
#include <tuple>
#include <vector>

namespace tuneup::cli {

using namespace analysis;

namespace {

struct GemmItem {
    std::string function, types;
    int64_t m, n, k, batch;
    int elementBytes;
    int64_t calls = 0;
    bool unaligned() const {
        return unalignedDim(m, elementBytes) || unalignedDim(n, elementBytes) || unalignedDim(k, elementBytes);
    }
    // The twin: each unaligned dimension padded up to 16 bytes' worth of elements.
    int64_t padded(int64_t d) const {
        const int64_t step = elementBytes > 0 ? std::max<int64_t>(1, 16 / elementBytes) : 8;
        return unalignedDim(d, elementBytes) ? (d + step - 1) / step * step : d;
    }
};

struct ConvItem {
    std::string shape; // "n32 c64 h56 w56 -> k64 3x3 s1 p1 fp16 NHWC forward"
    int64_t runs = 0, heuristic = 0, searched = 0;
};

struct SizeItem {
    int64_t bytes = 0, count = 0;
};

struct MicroPlan {
    std::vector<GemmItem> gemms;
    std::vector<ConvItem> convs;
    std::vector<SizeItem> pageableCopies, fills;
};

std::string convShape(const TraceModel& m, size_t i) {
    const auto& c = m.convCalls;
    const char* direction = c.direction[i] == ConvDirection::Forward ? "forward"
        : c.direction[i] == ConvDirection::BackwardData              ? "backward-data"
        : c.direction[i] == ConvDirection::BackwardFilter            ? "backward-filter"
                                                                     : "?";
    char text[256];
    snprintf(text, sizeof text, "n%d c%d h%d w%d -> k%d %dx%d stride %d pad %d groups %d %s %s %s", c.n[i], c.c[i],
        c.h[i], c.w[i], c.k[i], c.r[i], c.s[i], c.strideH[i], c.padH[i], c.groups[i],
        c.dataType[i] >= 0 ? std::to_string(c.dataType[i]).c_str() : "?",
        c.layout[i] == TensorLayout::Nhwc       ? "NHWC"
            : c.layout[i] == TensorLayout::Nchw ? "NCHW"
                                                : "",
        direction);
    return text;
}

MicroPlan planOf(const TraceModel& m) {
    MicroPlan plan;
    std::map<std::tuple<std::string, int64_t, int64_t, int64_t, int64_t, int32_t, int32_t>, GemmItem> gemms;
    const auto& g = m.gemmCalls;
    for (size_t i = 0; i < g.size(); ++i) {
        if (g.status[i] != 0 || g.m[i] <= 0 || g.n[i] <= 0 || g.k[i] <= 0) continue;
        const auto key = std::make_tuple(
            std::string(m.str(g.name[i])), g.m[i], g.n[i], g.k[i], g.batch[i], g.aType[i], g.computeType[i]);
        GemmItem& item = gemms[key];
        if (item.calls == 0)
            item = { std::string(m.str(g.name[i])), cudaTypeName(g.aType[i]), g.m[i], g.n[i], g.k[i], g.batch[i],
                cudaTypeBytes(g.aType[i]), 0 };
        ++item.calls;
    }
    for (auto& [key, item] : gemms)
        plan.gemms.push_back(item);
    std::map<std::string, ConvItem> convs;
    const auto& c = m.convCalls;
    for (size_t i = 0; i < c.size(); ++i) {
        ConvItem& item = convs[convShape(m, i)];
        item.shape = convShape(m, i);
        if (c.kind[i] == ConvCallKind::Run) ++item.runs;
        if (c.kind[i] == ConvCallKind::Find) ++item.searched;
        if (c.kind[i] == ConvCallKind::Heuristic || c.algoSource[i] == AlgoSource::Heuristic) ++item.heuristic;
    }
    for (auto& [key, item] : convs)
        if (item.runs) plan.convs.push_back(item);
    std::map<int64_t, int64_t> copies, fills;
    for (size_t i = 0; i < m.memcpys.size(); ++i)
        if (m.memcpys.copyKind[i] == CopyKind::HtoD && m.memcpys.srcKind[i] == MemoryKind::Pageable
            && m.memcpys.bytes[i] > 0)
            ++copies[m.memcpys.bytes[i]];
    for (size_t i = 0; i < m.memsets.size(); ++i)
        if (m.memsets.bytes[i] > 0) ++fills[m.memsets.bytes[i]];
    for (auto [bytes, count] : copies)
        plan.pageableCopies.push_back({ bytes, count });
    for (auto [bytes, count] : fills)
        plan.fills.push_back({ bytes, count });
    const auto byCount = [](const auto& a, const auto& b) { return a.calls > b.calls; };
    std::stable_sort(plan.gemms.begin(), plan.gemms.end(), byCount);
    return plan;
}

// A GPU the NVIDIA driver knows: what /proc and /dev say, without loading CUDA (tuneup-static runs on
// machines where dlopen of the driver would not work).
bool haveNvidiaGpu(std::string& why) {
    namespace fs = std::filesystem;
    std::error_code ec;
    if (fs::exists("/proc/driver/nvidia/gpus", ec) && !fs::is_empty("/proc/driver/nvidia/gpus", ec)) return true;
    if (fs::exists("/dev/nvidia0", ec)) return true;
    why = "no NVIDIA GPU on this machine (no /proc/driver/nvidia/gpus, no /dev/nvidia0)";
    return false;
}

void writePlan(std::ostream& out, const MicroPlan& plan, const std::string& recording) {
    out << "tuneup bench --micro " << recording << ": what a GPU would time\n";
    out << "\nGEMMs (" << plan.gemms.size() << " shapes): each against its padded twin; padding is advised only "
        << "when the twin wins by 1.1x or more, padding's own copy included\n";
    for (const GemmItem& g : plan.gemms)
        out << "  " << g.function << " " << g.types << " m" << g.m << " n" << g.n << " k" << g.k
            << (g.batch > 1 ? " batch " + std::to_string(g.batch) : "") << " x" << g.calls
            << (g.unaligned() ? "  -> twin m" + std::to_string(g.padded(g.m)) + " n" + std::to_string(g.padded(g.n))
                           + " k" + std::to_string(g.padded(g.k))
                              : "  (aligned: timed alone)")
            << "\n";
    out << "\nConvolutions (" << plan.convs.size()
        << " shapes): the heuristic's algorithm against the autotuner's choice\n";
    for (const ConvItem& c : plan.convs)
        out << "  " << c.shape << " x" << c.runs << (c.searched ? " (autotuned in the run)" : "") << "\n";
    out << "\nHost-to-device copies from pageable memory (" << plan.pageableCopies.size()
        << " sizes): against the same sizes from pinned memory\n";
    for (const SizeItem& s : plan.pageableCopies)
        out << "  " << formatBytes(s.bytes) << " x" << s.count << "\n";
    out << "\nFills (" << plan.fills.size() << " sizes): memset against set-to-none (no kernel)\n";
    for (const SizeItem& s : plan.fills)
        out << "  " << formatBytes(s.bytes) << " x" << s.count << "\n";
    out << "\nEach timing: L2 flushed between repetitions, warm-up, repeated until the spread is under 2%, clocks "
           "checked for throttling.\n";
}

void writePlanJson(std::ostream& out, const MicroPlan& plan, const std::string& recording, const std::string& why) {
    const auto esc = [](const std::string& s) {
        std::string o;
        for (char c : s)
            o += c == '"' || c == '\\' ? std::string("\\") + c : std::string(1, c);
        return o;
    };
    out << "{\n  \"schema_version\": 1,\n  \"recording\": \"" << esc(recording) << "\",\n  \"timed\": false,\n"
        << "  \"why_not_timed\": \"" << esc(why) << "\",\n  \"gemms\": [";
    for (size_t i = 0; i < plan.gemms.size(); ++i) {
        const GemmItem& g = plan.gemms[i];
        out << (i ? "," : "") << "\n    {\"function\": \"" << esc(g.function) << "\", \"types\": \"" << esc(g.types)
            << "\", \"m\": " << g.m << ", \"n\": " << g.n << ", \"k\": " << g.k << ", \"batch\": " << g.batch
            << ", \"calls\": " << g.calls << ", \"twin\": [" << g.padded(g.m) << ", " << g.padded(g.n) << ", "
            << g.padded(g.k) << "]}";
    }
    out << "\n  ],\n  \"convolutions\": [";
    for (size_t i = 0; i < plan.convs.size(); ++i)
        out << (i ? "," : "") << "\n    {\"shape\": \"" << esc(plan.convs[i].shape)
            << "\", \"runs\": " << plan.convs[i].runs << "}";
    out << "\n  ],\n  \"pageable_copies\": [";
    for (size_t i = 0; i < plan.pageableCopies.size(); ++i)
        out << (i ? "," : "") << "{\"bytes\": " << plan.pageableCopies[i].bytes
            << ", \"count\": " << plan.pageableCopies[i].count << "}";
    out << "],\n  \"fills\": [";
    for (size_t i = 0; i < plan.fills.size(); ++i)
        out << (i ? "," : "") << "{\"bytes\": " << plan.fills[i].bytes << ", \"count\": " << plan.fills[i].count << "}";
    out << "]\n}\n";
}

} // namespace

int runBenchMicro(const std::string& recording, const std::string& format, const std::string& output) {
    if (format != "text" && format != "json") {
        fprintf(stderr, "tuneup bench: --micro writes text or json, not '%s'\n", format.c_str());
        return kUsageError;
    }
    std::unique_ptr<Job> job;
    try {
        JobOptions options;
        options.advise = false;
        job = openJob({ recording }, options);
    } catch (const std::exception& e) {
        fprintf(stderr, "tuneup bench: %s\n", e.what());
        return kUsageError;
    }
    if (job->models.empty()) {
        fprintf(stderr, "tuneup bench: %s holds no process with recorded work\n", recording.c_str());
        return kUsageError;
    }
    const MicroPlan plan = planOf(job->models.front());
    std::string why;
    const bool gpu = haveNvidiaGpu(why);
    if (gpu)
        why = "this tuneup does not time on the GPU yet: the plan is what the GPU bundle's micro-benchmarks will "
              "time (issue 14)";
    const std::string error = writeOutput(output, [&](std::ostream& out) {
        if (format == "json")
            writePlanJson(out, plan, recording, why);
        else
            writePlan(out, plan, recording);
    });
    if (!error.empty()) {
        fprintf(stderr, "tuneup bench: %s\n", error.c_str());
        return kUsageError;
    }
    if (plan.gemms.empty() && plan.convs.empty() && plan.pageableCopies.empty() && plan.fills.empty())
        fprintf(stderr,
            "tuneup bench: %s recorded no GEMM, convolution, pageable copy or fill to time (a CPU "
            "run, or GPU capture was off: tuneup info says why)\n",
            recording.c_str());
    fprintf(stderr, "tuneup bench: %s: nothing was timed\n", why.c_str());
    return kUsageError;
}

} // namespace tuneup::cli
