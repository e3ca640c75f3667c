#include "import/import_many.h"

#include <algorithm>
#include <atomic>
#include <exception>
#include <mutex>
#include <optional>
#include <thread>

namespace tuneup::analysis {

void forEachTrace(const std::vector<std::string>& paths, const std::function<void(size_t, TraceModel&&)>& use,
    const ImportManyOptions& options) {
    const size_t count = paths.size();
    std::vector<std::exception_ptr> errors(count);
    std::vector<uint64_t> bytes(count, 0);
    std::atomic<size_t> next { 0 };
    std::atomic<bool> failed { false };
    size_t done = 0;
    uint64_t total = 0;
    std::mutex progressMutex;

    auto report = [&](size_t file, uint64_t fileBytes, bool finished) {
        if (!options.progress) return;
        const std::lock_guard lock(progressMutex);
        total += fileBytes - bytes[file];
        bytes[file] = fileBytes;
        done += finished;
        options.progress(done, total);
    };
    auto work = [&] {
        for (size_t i = next++; i < count && !failed; i = next++) {
            try {
                ImportOptions one;
                one.progress = [&, i](uint64_t b) { report(i, b, false); };
                use(i, importTrace(paths[i], one));
                report(i, bytes[i], true);
            } catch (...) {
                errors[i] = std::current_exception();
                failed = true;
            }
        }
    };

    const unsigned cores = options.threads ? options.threads : std::max(1u, std::thread::hardware_concurrency());
    const size_t helpers = std::min<size_t>(count, cores) - (count > 0 ? 1 : 0);
    std::vector<std::thread> threads;
    for (size_t t = 0; t < helpers; ++t)
        threads.emplace_back(work);
    work(); // this thread imports too
    for (std::thread& t : threads)
        t.join();
    for (const std::exception_ptr& error : errors)
        if (error) std::rethrow_exception(error);
}

std::vector<TraceModel> importTraces(const std::vector<std::string>& paths, const ImportManyOptions& options) {
    std::vector<std::optional<TraceModel>> models(paths.size());
    forEachTrace(
        paths, [&](size_t i, TraceModel&& model) { models[i].emplace(std::move(model)); }, options);
    std::vector<TraceModel> result;
    result.reserve(models.size());
    for (auto& model : models)
        result.push_back(std::move(*model));
    return result;
}

} // namespace tuneup::analysis
