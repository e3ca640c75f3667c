// libFuzzer target: the tuneup file reader on any bytes, written to a file and imported. Its errors
// (TuneupFileError, ImportError) are the expected answer to bad input; anything else, and any
// sanitizer report, is a bug.

#include "fuzz_common.h"
#include "import/tuneup_import.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    using namespace tuneup::analysis;
    const std::string& path = tuneup::fuzz::writeInput(data, size);
    try {
        const TraceModel model = importTuneupFile(path);
        tuneup::fuzz::checkModel(model);
        tuneup::fuzz::checkAnalysis(model);
    } catch (const TuneupFileError&) {
    } catch (const ImportError&) { }
    return 0;
}
