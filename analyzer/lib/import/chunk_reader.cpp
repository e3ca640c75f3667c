#include "import/chunk_reader.h"

#include "import/igzip_source.h"
#include "import/import_error.h"
#include "import/stream_input.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <utility>
#include <zlib.h>

namespace tuneup::analysis {

namespace {

class FileSource final : public ByteSource {
public:
    FileSource(int fd, std::string path)
        : m_fd(fd)
        , m_path(std::move(path)) { }
    ~FileSource() override { ::close(m_fd); }
    FileSource(const FileSource&) = delete;
    FileSource& operator=(const FileSource&) = delete;

    size_t read(char* dst, size_t capacity) override {
        for (;;) {
            const ssize_t n = ::read(m_fd, dst, capacity);
            if (n >= 0) {
                m_offset += static_cast<uint64_t>(n);
                return static_cast<size_t>(n);
            }
            if (errno != EINTR)
                throw ImportError(ImportError::Kind::Unreadable, m_path,
                    std::string("read failed: ") + std::strerror(errno), m_offset);
        }
    }

private:
    int m_fd;
    std::string m_path;
    uint64_t m_offset = 0;
};

class MemorySource final : public ByteSource {
public:
    explicit MemorySource(std::string_view bytes)
        : m_bytes(bytes) { }
    size_t read(char* dst, size_t capacity) override {
        const size_t n = std::min(capacity, m_bytes.size() - m_pos);
        std::memcpy(dst, m_bytes.data() + m_pos, n);
        m_pos += n;
        return n;
    }

private:
    std::string_view m_bytes;
    size_t m_pos = 0;
};

class PrefixedSource final : public ByteSource {
public:
    PrefixedSource(std::string prefix, std::unique_ptr<ByteSource> rest)
        : m_prefix(std::move(prefix))
        , m_rest(std::move(rest)) { }
    size_t read(char* dst, size_t capacity) override {
        if (m_pos < m_prefix.size()) {
            const size_t n = std::min(capacity, m_prefix.size() - m_pos);
            std::memcpy(dst, m_prefix.data() + m_pos, n);
            m_pos += n;
            return n;
        }
        return m_rest->read(dst, capacity);
    }

private:
    std::string m_prefix;
    size_t m_pos = 0;
    std::unique_ptr<ByteSource> m_rest;
};

class GzipSource final : public ByteSource {
public:
    GzipSource(std::unique_ptr<ByteSource> in, std::string path)
        : m_in(std::move(in))
        , m_path(std::move(path))
        , m_inBuffer(std::make_unique_for_overwrite<unsigned char[]>(kInBytes)) {
        std::memset(&m_z, 0, sizeof(m_z));
        // 16 + MAX_WBITS: gzip framing only, so that the CRC and length trailer are checked.
        if (inflateInit2(&m_z, 16 + MAX_WBITS) != Z_OK)
            throw ImportError(ImportError::Kind::Unreadable, m_path, "cannot start gzip decompression (zlib)");
    }
    ~GzipSource() override { inflateEnd(&m_z); }
    GzipSource(const GzipSource&) = delete;
    GzipSource& operator=(const GzipSource&) = delete;

    size_t read(char* dst, size_t capacity) override {
        if (m_pending) std::rethrow_exception(std::exchange(m_pending, nullptr));
        if (m_end) return 0;
        m_z.next_out = reinterpret_cast<Bytef*>(dst);
        m_z.avail_out = static_cast<uInt>(std::min<size_t>(capacity, 1u << 30));
        const uInt wanted = m_z.avail_out;
        try {
            inflateInto();
        } catch (...) {
            // Hand out what was inflated before the problem; report the problem on the next call.
            const size_t produced = wanted - m_z.avail_out;
            m_produced += produced;
            if (produced == 0) throw;
            m_pending = std::current_exception();
            return produced;
        }
        const size_t produced = wanted - m_z.avail_out;
        m_produced += produced;
        return produced;
    }

private:
    static constexpr size_t kInBytes = 256 * 1024;

    bool refill() {
        if (m_inEof) return false;
        const size_t n = m_in->read(reinterpret_cast<char*>(m_inBuffer.get()), kInBytes);
        if (n == 0) {
            m_inEof = true;
            return false;
        }
        m_z.next_in = m_inBuffer.get();
        m_z.avail_in = static_cast<uInt>(n);
        return true;
    }

    void inflateInto() {
        const uInt wanted = m_z.avail_out;
        while (m_z.avail_out > 0) {
            if (m_z.avail_in == 0 && !refill()) {
                if (m_inMember)
                    throw ImportError(ImportError::Kind::Truncated, m_path,
                        "the gzip data ends early (the file is truncated: an interrupted copy or download?)",
                        m_produced + (wanted - m_z.avail_out), true);
                m_end = true;
                return;
            }
            m_inMember = true;
            const int rc = inflate(&m_z, Z_NO_FLUSH);
            if (rc == Z_STREAM_END) {
                m_inMember = false;
                // Another gzip member may follow (concatenated .gz files); anything else ends the data.
                if (m_z.avail_in == 0) refill();
                if (m_z.avail_in == 0 || m_z.next_in[0] != 0x1f) {
                    m_end = true;
                    return;
                }
                inflateReset(&m_z);
                continue;
            }
            if (rc == Z_OK || (rc == Z_BUF_ERROR && m_z.avail_in == 0))
                continue; // Z_BUF_ERROR: more input needed, fetched at the top of the loop
            throw ImportError(ImportError::Kind::Corrupt, m_path,
                std::string("the gzip data is damaged (") + (m_z.msg ? m_z.msg : "zlib error " + std::to_string(rc))
                    + ")",
                m_produced + (wanted - m_z.avail_out), true);
        }
    }

    std::unique_ptr<ByteSource> m_in;
    std::string m_path;
    std::unique_ptr<unsigned char[]> m_inBuffer;
    z_stream m_z;
    bool m_inEof = false;
    bool m_inMember = false;
    bool m_end = false;
    uint64_t m_produced = 0;
    std::exception_ptr m_pending;
};

} // namespace

std::unique_ptr<ByteSource> openFileSource(const std::string& path) {
    if (isReadOnce(path)) return openReadOnce(path);
    // O_NONBLOCK: opening a FIFO must not block until a writer comes (openReadOnce waits, and says so).
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0) {
        const int err = errno;
        if (err == ENOENT || err == ENOTDIR) throw ImportError(ImportError::Kind::NotFound, path, "no such file");
        throw ImportError(ImportError::Kind::Unreadable, path, std::string("cannot open: ") + std::strerror(err));
    }
    struct stat st { };
    if (::fstat(fd, &st) == 0 && S_ISDIR(st.st_mode)) {
        ::close(fd);
        throw ImportError(ImportError::Kind::Unreadable, path, "is a directory, not a trace file");
    }
    if (!S_ISREG(st.st_mode)) return openReadOnce(path, fd); // a pipe, a FIFO, a device: read once
    ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);
    return std::make_unique<FileSource>(fd, path);
}

std::unique_ptr<ByteSource> prefixedSource(std::string prefix, std::unique_ptr<ByteSource> rest) {
    return std::make_unique<PrefixedSource>(std::move(prefix), std::move(rest));
}

std::unique_ptr<ByteSource> memorySource(std::string_view bytes) {
    return std::make_unique<MemorySource>(bytes);
}

std::unique_ptr<ByteSource> streamingGzipSource(std::unique_ptr<ByteSource> compressed, std::string path) {
    return std::make_unique<GzipSource>(std::move(compressed), std::move(path));
}

std::unique_ptr<ByteSource> gzipSource(std::unique_ptr<ByteSource> compressed, std::string path) {
    if (haveIsal()) return isalGzipSource(std::move(compressed), std::move(path));
    return streamingGzipSource(std::move(compressed), std::move(path));
}

ChunkReader::ChunkReader(std::unique_ptr<ByteSource> source, bool background, size_t chunkBytes, int chunks)
    : m_source(std::move(source))
    , m_chunkBytes(chunkBytes)
    , m_background(background) {
    const size_t count = background ? static_cast<size_t>(std::max(chunks, 2)) : 1;
    m_memory = allocateLargeBuffer(count * chunkBytes); // uninitialised: read only where filled
    for (size_t i = 0; i < count; ++i)
        m_buffers.push_back({ m_memory.get() + i * chunkBytes, 0 });
    if (m_background) m_thread = std::thread([this] { produce(); });
}

ChunkReader::~ChunkReader() {
    if (m_thread.joinable()) {
        {
            std::lock_guard lock(m_mutex);
            m_stop = true;
        }
        m_changed.notify_all();
        m_thread.join();
    }
}

size_t ChunkReader::fill(Buffer& buffer) {
    size_t total = 0;
    try {
        while (total < m_chunkBytes) {
            const size_t n = m_source->read(buffer.data + total, m_chunkBytes - total);
            if (n == 0) break;
            total += n;
        }
    } catch (...) {
        std::lock_guard lock(m_mutex);
        m_error = std::current_exception();
    }
    return total;
}

void ChunkReader::produce() {
    const uint64_t n = m_buffers.size();
    for (;;) {
        {
            std::unique_lock lock(m_mutex);
            // Slot m_produced % n is free once the consumer has released it (m_consumed counts those).
            m_changed.wait(lock, [&] { return m_stop || m_produced - m_consumed < n; });
            if (m_stop) return;
        }
        Buffer& buffer = m_buffers[m_produced % n];
        buffer.size = fill(buffer);
        std::lock_guard lock(m_mutex);
        if (buffer.size > 0) ++m_produced;
        if (buffer.size < m_chunkBytes || m_error) m_done = true;
        m_changed.notify_all();
        if (m_done) return;
    }
}

std::string_view ChunkReader::next() {
    if (!m_background) {
        if (m_done) return {};
        Buffer& buffer = m_buffers[0];
        buffer.size = fill(buffer);
        if (buffer.size < m_chunkBytes || m_error) m_done = true;
        return std::string_view(buffer.data, buffer.size);
    }
    std::unique_lock lock(m_mutex);
    if (m_holding) {
        ++m_consumed; // release the chunk handed out last time
        m_holding = false;
        m_changed.notify_all();
    }
    m_changed.wait(lock, [&] { return m_produced > m_consumed || m_done; });
    if (m_produced == m_consumed) return {};
    m_holding = true;
    const Buffer& buffer = m_buffers[m_consumed % m_buffers.size()];
    return std::string_view(buffer.data, buffer.size);
}

std::exception_ptr ChunkReader::error() const {
    std::lock_guard lock(m_mutex);
    return m_error;
}

} // namespace tuneup::analysis
