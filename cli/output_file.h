#pragma once
// Writes a command's output to a file or stdout so that a failure is never silent and never leaves half
// a file: a file is written beside its final name, synced and renamed over it once complete; every
// write and the close are checked. A device or FIFO named as the output (/dev/null, /dev/stdout) is
// written in place.

#include <functional>
#include <ostream>
#include <string>

namespace tuneup::cli {

// Writes with `write` to `path`, or to stdout when `path` is empty or "-". Returns an empty string on
// success, else what went wrong ("cannot write report.html: No space left on device").
std::string writeOutput(const std::string& path, const std::function<void(std::ostream&)>& write);

// Flushes stdout and says whether everything written to it so far arrived ("" when it did): main()
// checks it after every command, so that `tuneup info run.db > /dev/full` fails.
std::string checkStdout();

} // namespace tuneup::cli
