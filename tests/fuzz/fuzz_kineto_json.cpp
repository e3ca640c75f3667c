// libFuzzer target: the Kineto JSON importer on any bytes (plain or gzip). An ImportError is the
// expected answer to bad input; anything else that escapes, and any sanitizer report, is a bug.

#include "fuzz_common.h"
#include "import/kineto_json.h"

#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    using namespace tuneup::analysis;
    KinetoImportOptions options;
    options.background = false; // one thread: reproducible, and what libFuzzer measures
    try {
        const TraceModel model
            = importKinetoJsonBytes(std::string_view(reinterpret_cast<const char*>(data), size), "fuzz-input", options);
        tuneup::fuzz::checkModel(model);
        tuneup::fuzz::checkAnalysis(model);
    } catch (const ImportError&) { }
    return 0;
}
