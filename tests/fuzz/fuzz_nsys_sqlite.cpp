// libFuzzer target: the Nsight Systems SQLite importer on any bytes, written to a file and imported.
// An ImportError is the expected answer to bad input; anything else, and any sanitizer report, is a bug.

#include "fuzz_common.h"
#include "import/nsys_sqlite.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    using namespace tuneup::analysis;
    const std::string& path = tuneup::fuzz::writeInput(data, size);
    try {
        tuneup::fuzz::checkModel(importNsysSqlite(path));
    } catch (const ImportError&) { }
    return 0;
}
