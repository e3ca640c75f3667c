#include "html_test_support.h"

#include "export/tuneup_writer.h"
#include "model/trace_builder.h"

#include <cstdlib>
#include <filesystem>
#include <sstream>
#include <unistd.h>

namespace tuneup::htmltest {

using namespace analysis;

std::string writeRun(const std::string& dir) {
    constexpr int64_t kMs = 1'000'000;
    TraceBuilder b(SourceFormat::TuneupDb, "run.db");
    b.info().metadata.emplace_back("role", "main");
    DeviceInfo gpu;
    gpu.id = 0;
    gpu.name = "NVIDIA H100";
    gpu.computeMajor = 9;
    b.addDevice(gpu);
    const ThreadIndex thread = b.thread(100, 100);
    for (int s = 0; s < 4; ++s) {
        const int64_t t0 = 1'000 * kMs + s * 10 * kMs;
        Annotation step;
        step.startNs = t0;
        step.endNs = t0 + 10 * kMs;
        step.thread = thread;
        step.name = b.intern("ProfilerStep#" + std::to_string(s));
        b.addAnnotation(step);
        Memcpy copy;
        copy.startNs = t0;
        copy.endNs = t0 + kMs;
        copy.device = 0;
        copy.stream = 7;
        copy.bytes = 4 << 20;
        copy.copyKind = CopyKind::HtoD;
        copy.srcKind = MemoryKind::Pageable;
        copy.dstKind = MemoryKind::Device;
        b.addMemcpy(copy);
        Kernel k;
        k.device = 0;
        k.stream = 7;
        k.startNs = t0 + kMs;
        k.endNs = k.startNs + 5 * kMs;
        k.name = b.intern("volta_sgemm_128x64_nn");
        b.addKernel(k);
        k.startNs = k.endNs;
        k.endNs = k.startNs + 2 * kMs;
        k.name = b.intern("void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>, "
                          "at::detail::Array<char*, 1> >(int, at::native::FillFunctor<float>, "
                          "at::detail::Array<char*, 1>)");
        b.addKernel(k);
    }
    const std::string path = dir + "/run.db";
    writeTuneupFile(b.finish(), path);
    return path;
}

std::string advise(const std::string& input, const std::string& format, const std::string& dir, std::string& error) {
    const std::string out = dir + "/report." + format;
    const test::ProgramResult r = test::runProgram(TUNEUP_BINARY, { "advise", input, "--format", format, "-o", out });
    if (r.code != 0) {
        error = "tuneup advise --format " + format + " exited " + std::to_string(r.code) + ": " + r.err;
        return {};
    }
    return test::readFile(out);
}

std::string findChromium() {
    if (const char* chosen = std::getenv("TUNEUP_CHROMIUM"); chosen && *chosen) return chosen;
    const char* path = std::getenv("PATH");
    std::istringstream dirs(path ? path : "/usr/bin:/bin");
    for (std::string dir; std::getline(dirs, dir, ':');)
        for (const char* name : { "chromium-headless-shell", "chromium", "chromium-browser", "google-chrome" }) {
            const std::string candidate = dir + "/" + name;
            if (access(candidate.c_str(), X_OK) == 0) return candidate;
        }
    return {};
}

} // namespace tuneup::htmltest
