// libFuzzer target: the Nsight Systems SQLite importer on any bytes, written to a file and imported.
// An ImportError is the expected answer to bad input; anything else, and any sanitizer report, is a bug.

#include "fuzz_common.h"
#include "import/nsys_sqlite.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    using namespace tuneup::analysis;
    const std::string& path = tuneup::fuzz::writeInput(data, size);
    try {
        const TraceModel model = importNsysSqlite(path);
        tuneup::fuzz::checkModel(model);
        tuneup::fuzz::checkAnalysis(model);
    } catch (const ImportError&) { }
    return 0;
}
