#include "compare/environment.h"

#include <algorithm>
#include <charconv>
#include <set>

namespace tuneup::analysis {

const std::vector<EnvironmentKey> kEnvironmentKeys = {
    { "gpu.model", "GPU model" },
    { "gpu.count", "GPUs per process" },
    { "driver", "CUDA driver" },
    { "cuda", "CUDA runtime" },
    { "cupti", "CUPTI" },
    { "cudnn", "cuDNN" },
    { "world_size", "world size" },
    { "arch", "CPU architecture" },
};

std::string_view environmentLabel(std::string_view key) {
    for (const EnvironmentKey& k : kEnvironmentKeys)
        if (k.key == key) return k.label;
    return key;
}

std::string cudaVersionText(std::string_view value) {
    int number = 0;
    const auto [end, error] = std::from_chars(value.data(), value.data() + value.size(), number);
    if (error != std::errc() || end != value.data() + value.size() || number < 1000) return std::string(value);
    // CUDA_VERSION's encoding: 1000 * major + 10 * minor.
    return std::to_string(number / 1000) + "." + std::to_string((number % 1000) / 10);
}

namespace {

// "/x/nvidia/cudnn/lib/libcudnn.so.9 (called from libtorch_cuda.so)" -> "libcudnn.so.9": the folder
// differs between machines and virtual environments, the library's major version is what matters.
std::string libraryName(std::string_view value) {
    if (const size_t space = value.find(" ("); space != std::string_view::npos) value = value.substr(0, space);
    if (const size_t semicolon = value.find(';'); semicolon != std::string_view::npos)
        value = value.substr(0, semicolon);
    if (const size_t slash = value.rfind('/'); slash != std::string_view::npos) value.remove_prefix(slash + 1);
    return std::string(value);
}

std::string joined(const std::set<std::string>& values) {
    std::string out;
    for (const std::string& v : values)
        out += (out.empty() ? "" : " + ") + v;
    return out;
}

} // namespace

Environment jobEnvironment(const Job& job) {
    std::set<std::string> models, counts, drivers, runtimes, cuptis, cudnns, worlds, arches;
    bool anyKernels = false;
    for (const RankSummary& rank : job.report.ranks) {
        if (!rank.deviceName.empty()) models.insert(rank.deviceName);
        anyKernels |= rank.kernelCount > 0;
    }
    for (const TraceModel& model : job.models) {
        const TraceInfo& info = model.info;
        if (!model.devices.empty()) counts.insert(std::to_string(model.devices.size()));
        if (const std::string v = info.metadataValue("cuda_driver_version"); !v.empty())
            drivers.insert(cudaVersionText(v));
        if (const std::string v = info.metadataValue("cuda_runtime_version"); !v.empty())
            runtimes.insert(cudaVersionText(v));
        for (const char* key : { "cupti_version", "cupti.version" })
            if (const std::string v = info.metadataValue(key); !v.empty()) cuptis.insert(v);
        if (const std::string v = info.metadataValue("library.cudnn"); !v.empty()) cudnns.insert(libraryName(v));
        if (info.worldSize) worlds.insert(std::to_string(*info.worldSize));
        if (!info.machine.empty()) arches.insert(info.machine);
    }
    // tuneup recordings write the world size whenever the environment set one: without it, the job's ranks
    // are the world. Other traces (and job summaries) that do not say leave it unknown: a Kineto trace of
    // one rank of eight may lack distributedInfo.
    const bool allRecordings = !job.models.empty()
        && std::all_of(job.models.begin(), job.models.end(),
            [](const TraceModel& m) { return m.info.format == SourceFormat::TuneupDb; });
    if (worlds.empty() && allRecordings) worlds.insert(std::to_string(job.models.size()));
    // No device listed and no kernel: the run used no GPU (a CPU run), which differs from any GPU.
    if (models.empty() && !anyKernels && !job.models.empty()
        && std::all_of(job.models.begin(), job.models.end(), [](const TraceModel& m) { return m.devices.empty(); }))
        models.insert("none");

    Environment env;
    const auto add = [&env](std::string_view key, const std::set<std::string>& values) {
        if (!values.empty()) env.push_back({ std::string(key), joined(values) });
    };
    add("gpu.model", models);
    add("gpu.count", counts);
    add("driver", drivers);
    add("cuda", runtimes);
    add("cupti", cuptis);
    add("cudnn", cudnns);
    add("world_size", worlds);
    add("arch", arches);
    return env;
}

std::string environmentValue(const Environment& env, std::string_view key) {
    for (const EnvironmentFact& f : env)
        if (f.key == key) return f.value;
    return {};
}

EnvironmentDiff diffEnvironments(const Environment& base, const Environment& now) {
    EnvironmentDiff diff;
    for (const EnvironmentKey& k : kEnvironmentKeys) {
        const std::string a = environmentValue(base, k.key), b = environmentValue(now, k.key);
        if (a == b) continue;
        EnvironmentChange change { std::string(k.key), a, b };
        (a.empty() || b.empty() ? diff.oneSided : diff.changed).push_back(std::move(change));
    }
    return diff;
}

} // namespace tuneup::analysis
