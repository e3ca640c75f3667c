#pragma once
// Inputs that can be read only once: standard input ("-", /dev/stdin), a pipe (`tuneup advise
// <(zcat t.json.gz)`), a FIFO, a character device. Format detection reads a file's head, and the
// importer then reads it again from the start; a pipe cannot be read twice, so the first opening of
// such a path keeps its head (kStreamHeadBytes) in memory: every later opening is served the head
// from there, and the one reader that goes past it streams the rest from the pipe. A FIFO that
// nothing writes to does not hang silently: after a moment, what the wait is for is said.

#include "import/chunk_reader.h"

#include <chrono>
#include <functional>
#include <memory>
#include <string>

namespace tuneup::analysis {

// The head kept of a read-once input: what format detection reads (kFormatHeadBytes).
inline constexpr size_t kStreamHeadBytes = 4096;

// True for "-" (standard input).
bool isReadOnce(const std::string& path);

// The source for a read-once input: `fd` opened on `path` (O_NONBLOCK, not a regular file), or -1 to
// open it here ("-": standard input). Throws ImportError when its rest was taken by an earlier reader.
std::unique_ptr<ByteSource> openReadOnce(const std::string& path, int fd = -1);

// True when `path` is an input that can be read only once (standard input, a pipe, a FIFO, a device),
// without opening it.
bool isReadOnceInput(const std::string& path);

// Where "waiting for ... " goes when a read-once input has given no data for `after` (standard error
// by default, "tuneup: waiting for data from FIFO in.json: is anything writing to it?").
void setStreamWaitNotice(std::chrono::milliseconds after, std::function<void(const std::string&)> notice);

} // namespace tuneup::analysis
