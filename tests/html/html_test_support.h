#pragma once
// What the HTML report tests share: a small recording that findings come from, tuneup run on it as a
// user runs it, and a headless Chromium where one is installed.

#include "run_program.h"

#include <string>

namespace tuneup::htmltest {

// Writes a tuneup file of four 10 ms steps (a 1 ms pageable copy, 5 ms of GEMM, 2 ms of fill, the rest
// idle) at <dir>/run.db, and returns its path: pageable-memcpy and gpu-idle fire on it.
std::string writeRun(const std::string& dir);

// `tuneup advise <input> --format <format> -o <dir>/report.<format>`: the report's text ("" when it failed,
// with `error` saying why).
std::string advise(const std::string& input, const std::string& format, const std::string& dir, std::string& error);

// The headless browser to use: $TUNEUP_CHROMIUM, else the first of chromium-headless-shell, chromium,
// chromium-browser and google-chrome on PATH; "" when there is none.
std::string findChromium();

} // namespace tuneup::htmltest
