#include "import/stream_input.h"

#include "import/import_error.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <exception>
#include <fcntl.h>
#include <map>
#include <mutex>
#include <poll.h>
#include <sys/stat.h>
#include <unistd.h>

namespace tuneup::analysis {

namespace {

// One read-once input: its descriptor, the head read from it, and whether a reader took the rest.
struct Stream {
    std::mutex opening; // held while the head is read: a second opening waits for it
    bool opened = false;
    std::exception_ptr failed; // why reading the head failed, for every opening
    std::string path;
    int fd = -1;
    std::string head;
    bool ended = false; // the input ended within the head
    bool restTaken = false;
    bool told = false; // the wait was announced
    uint64_t offset = 0; // bytes read from the descriptor
};

struct Registry {
    std::mutex mutex;
    std::map<std::string, std::shared_ptr<Stream>> streams; // by path: every opening of it shares one
    std::chrono::milliseconds noticeAfter { 2000 };
    std::function<void(const std::string&)> notice
        = [](const std::string& text) { fprintf(stderr, "tuneup: %s\n", text.c_str()); };
};

Registry& registry() {
    static Registry* instance = new Registry; // never destroyed: sources may outlive static destruction
    return *instance;
}

std::string describe(const std::string& path, int fd) {
    if (path == "-") return "standard input";
    struct stat st { };
    if (::fstat(fd, &st) == 0 && S_ISFIFO(st.st_mode)) {
        struct stat link { };
        // A named FIFO is itself a FIFO on disk; <(...) and /dev/stdin are links to an anonymous pipe.
        const bool named = ::lstat(path.c_str(), &link) == 0 && S_ISFIFO(link.st_mode);
        return (named ? "FIFO " : "pipe ") + path + (named ? ": is anything writing to it?" : "");
    }
    return path;
}

// Waits until the descriptor has data or its end (a blocking descriptor would not say why it waits),
// saying once what it waits for when the wait is long.
void waitForData(Stream& s) {
    auto& r = registry();
    std::chrono::milliseconds waited { 0 };
    for (;;) {
        pollfd p { s.fd, POLLIN, 0 };
        const int ready = ::poll(&p, 1, s.told ? -1 : 100);
        if (ready > 0) return;
        if (ready < 0 && errno != EINTR)
            throw ImportError(
                ImportError::Kind::Unreadable, s.path, std::string("cannot wait for data: ") + strerror(errno));
        if (ready == 0) waited += std::chrono::milliseconds(100);
        if (!s.told && waited >= r.noticeAfter) {
            s.told = true;
            std::function<void(const std::string&)> notice;
            {
                std::lock_guard lock(r.mutex);
                notice = r.notice;
            }
            if (notice) notice("waiting for data from " + describe(s.path, s.fd) + " (Ctrl-C to stop)");
        }
    }
}

// Reads what the descriptor has (a FIFO was opened O_NONBLOCK, so it may have nothing yet).
size_t readSome(Stream& s, char* dst, size_t capacity) {
    for (;;) {
        waitForData(s);
        const ssize_t n = ::read(s.fd, dst, capacity);
        if (n >= 0) {
            s.offset += uint64_t(n);
            return size_t(n);
        }
        if (errno != EINTR && errno != EAGAIN && errno != EWOULDBLOCK)
            throw ImportError(
                ImportError::Kind::Unreadable, s.path, std::string("read failed: ") + strerror(errno), s.offset);
    }
}

// The head, read as the input is first opened: format detection needs no more.
void readHead(Stream& s) {
    s.head.resize(kStreamHeadBytes);
    size_t got = 0;
    while (got < s.head.size()) {
        const size_t n = readSome(s, s.head.data() + got, s.head.size() - got);
        if (n == 0) {
            s.ended = true;
            break;
        }
        got += n;
    }
    s.head.resize(got);
}

class ReadOnceSource final : public ByteSource {
public:
    explicit ReadOnceSource(std::shared_ptr<Stream> stream)
        : m_stream(std::move(stream)) { }

    size_t read(char* dst, size_t capacity) override {
        if (m_pos < m_stream->head.size()) {
            const size_t n = std::min(capacity, m_stream->head.size() - m_pos);
            std::copy_n(m_stream->head.data() + m_pos, n, dst); // bytes, not a C string
            m_pos += n;
            return n;
        }
        if (m_stream->ended || capacity == 0) return 0;
        if (!m_ownsRest) {
            std::lock_guard lock(registry().mutex);
            if (m_stream->restTaken)
                throw ImportError(ImportError::Kind::Unreadable, m_stream->path,
                    "can be read only once (a pipe or standard input), and it was read already; save it to a file "
                    "to read it more than once",
                    m_stream->offset);
            m_stream->restTaken = m_ownsRest = true;
        }
        return readSome(*m_stream, dst, capacity);
    }

private:
    std::shared_ptr<Stream> m_stream;
    size_t m_pos = 0;
    bool m_ownsRest = false;
};

} // namespace

bool isReadOnce(const std::string& path) {
    return path == "-";
}

bool isReadOnceInput(const std::string& path) {
    if (isReadOnce(path)) return true;
    struct stat st { };
    return ::stat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode);
}

std::unique_ptr<ByteSource> openReadOnce(const std::string& path, int fd) {
    auto& r = registry();
    std::shared_ptr<Stream> stream;
    {
        std::lock_guard lock(r.mutex);
        std::shared_ptr<Stream>& slot = r.streams[path]; // every opening of a path shares one stream
        if (!slot) slot = std::make_shared<Stream>();
        stream = slot;
    }
    std::lock_guard lock(stream->opening);
    if (stream->opened) {
        if (fd >= 0) ::close(fd); // opened again: the first opening's descriptor is the one read
        if (stream->failed) std::rethrow_exception(stream->failed);
        return std::make_unique<ReadOnceSource>(stream);
    }
    stream->opened = true;
    stream->path = path;
    stream->fd = fd >= 0 ? fd : ::fcntl(STDIN_FILENO, F_DUPFD_CLOEXEC, 3);
    try {
        if (stream->fd < 0)
            throw ImportError(
                ImportError::Kind::Unreadable, path, std::string("cannot read standard input: ") + strerror(errno));
        readHead(*stream);
    } catch (...) {
        stream->failed = std::current_exception();
        throw;
    }
    return std::make_unique<ReadOnceSource>(stream);
}

void setStreamWaitNotice(std::chrono::milliseconds after, std::function<void(const std::string&)> notice) {
    auto& r = registry();
    std::lock_guard lock(r.mutex);
    r.noticeAfter = after;
    r.notice = std::move(notice);
}

} // namespace tuneup::analysis
