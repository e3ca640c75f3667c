#include "html_test_support.h"

#include "export/tuneup_writer.h"
#include "four_step_trace.h"

#include <cstdlib>
#include <filesystem>
#include <sstream>
#include <unistd.h>

namespace tuneup::htmltest {

using namespace analysis;

std::string writeRun(const std::string& dir) {
    TraceBuilder b(SourceFormat::TuneupDb, "run.db");
    b.info().metadata.emplace_back("role", "main");
    test::addFourSteps(b);
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
