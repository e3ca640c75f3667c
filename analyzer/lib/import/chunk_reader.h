#pragma once
// Streaming input for importers: a file or a buffer, plain or gzip, read in chunks, optionally on a
// second thread so that reading and inflating overlap with parsing. Memory stays bounded by the
// chunks in flight whatever the file size.

#include "import/large_buffer.h"

#include <condition_variable>
#include <cstdint>
#include <exception>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

namespace tuneup::analysis {

/** A source of bytes. read() returns 0 at the end and throws ImportError on failure. */
class ByteSource {
public:
    virtual ~ByteSource() = default;
    virtual size_t read(char* dst, size_t capacity) = 0;
};

// Opens a file for reading; throws ImportError(NotFound / Unreadable) naming the path. "-" is standard
// input; a pipe, a FIFO or a device is read once, its head kept for format detection (stream_input.h).
std::unique_ptr<ByteSource> openFileSource(const std::string& path);
// Serves `prefix` (bytes already read, to recognise the format) before the rest of `rest`.
std::unique_ptr<ByteSource> prefixedSource(std::string prefix, std::unique_ptr<ByteSource> rest);
// The bytes are not copied: they must outlive the source.
std::unique_ptr<ByteSource> memorySource(std::string_view bytes);
// Inflates gzip data (several members are read one after the other). Errors name `path` and the
// offset in the uncompressed stream. Through ISA-L's igzip where the build has it (import/igzip_source.h),
// else zlib (streamingGzipSource, also what tests compare ISA-L with).
std::unique_ptr<ByteSource> gzipSource(std::unique_ptr<ByteSource> compressed, std::string path);
std::unique_ptr<ByteSource> streamingGzipSource(std::unique_ptr<ByteSource> compressed, std::string path);

/** Hands out the bytes of a source as a series of chunks. */
class ChunkReader {
public:
    // background: read on a second thread, `chunks` buffers of `chunkBytes` in flight.
    explicit ChunkReader(
        std::unique_ptr<ByteSource> source, bool background = true, size_t chunkBytes = 1 << 20, int chunks = 4);
    ~ChunkReader();
    ChunkReader(const ChunkReader&) = delete;
    ChunkReader& operator=(const ChunkReader&) = delete;

    // The next chunk, empty at the end or after an error. It stays valid until the next call.
    std::string_view next();
    // The exception that ended the source early, if any.
    std::exception_ptr error() const;

private:
    struct Buffer {
        char* data = nullptr; // in m_memory
        size_t size = 0;
    };
    void produce();
    size_t fill(Buffer& buffer);

    std::unique_ptr<ByteSource> m_source;
    const size_t m_chunkBytes;
    LargeBuffer m_memory; // every buffer's bytes, in one block (huge pages where offered)
    std::vector<Buffer> m_buffers;
    // Buffers cycle in order: the producer fills m_buffers[m_produced % n], the consumer reads
    // m_buffers[m_consumed % n]; a buffer is free again once the consumer moved past it.
    uint64_t m_produced = 0, m_consumed = 0;
    bool m_holding = false; // the consumer still holds the chunk it got last
    bool m_done = false; // the producer reached the end (or failed)
    bool m_stop = false; // the consumer went away
    std::exception_ptr m_error;
    mutable std::mutex m_mutex;
    std::condition_variable m_changed;
    std::thread m_thread;
    bool m_background;
};

} // namespace tuneup::analysis
