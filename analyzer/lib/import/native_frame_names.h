#pragma once
// Names the native frames the agent sampled (native_samples: a module, an address and its callers) with the file,
// line and function of the binary's debug information, through binutils' addr2line, once the program has ended:
// `tuneup record` does it to every file it made, while the binaries are those that ran. The innermost frame in the
// user's sources is kept (not a system header's inline function or template). Frames already named, and modules
// that are gone or have no debug information, are left as they are (the module and the address, or the exported
// function's name); a run without native samples is not touched.

#include <cstddef>
#include <string>

namespace tuneup::analysis {

struct NativeFrameNaming {
    size_t frames = 0; // distinct sampled places (module, address, callers) that had no file and line
    size_t named = 0; // of which now have them
    std::string problem; // what kept the others from being named ("addr2line not found: install binutils"), if any
};

// `addr2line`: the program to run (found on PATH when it has no '/'). Never throws.
NativeFrameNaming nameNativeFrames(const std::string& recordingPath, const std::string& addr2line = "addr2line");

} // namespace tuneup::analysis
