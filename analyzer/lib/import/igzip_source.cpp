#include "import/igzip_source.h"

#ifdef TUNEUP_HAVE_ISAL

#include "import/import_error.h"

#include <algorithm>
#include <exception>
#include <isa-l/igzip_lib.h>
#include <utility>
#include <vector>

namespace tuneup::analysis {

// Weak: tuneup-static links without libisal (Debian ships no libisal.a), and there these are null and zlib
// inflates; every other program gets them from libisal.so.
#pragma weak isal_inflate_init
#pragma weak isal_inflate

bool haveIsal() {
    return &isal_inflate_init != nullptr && &isal_inflate != nullptr;
}

namespace {

std::string isalError(int rc) {
    switch (rc) {
    case ISAL_INVALID_BLOCK:
        return "invalid block";
    case ISAL_INVALID_SYMBOL:
        return "invalid code";
    case ISAL_INVALID_LOOKBACK:
        return "invalid distance too far back";
    case ISAL_INVALID_WRAPPER:
        return "not gzip data: bad header";
    case ISAL_UNSUPPORTED_METHOD:
        return "unknown compression method";
    case ISAL_INCORRECT_CHECKSUM:
        return "incorrect data check or length";
    default:
        return "igzip error " + std::to_string(rc);
    }
}

class IsalGzipSource final : public ByteSource {
public:
    IsalGzipSource(std::unique_ptr<ByteSource> in, std::string path)
        : m_in(std::move(in))
        , m_path(std::move(path))
        , m_inBuffer(std::make_unique_for_overwrite<unsigned char[]>(kInBytes)) {
        startMember();
    }

    size_t read(char* dst, size_t capacity) override {
        if (m_pending) std::rethrow_exception(std::exchange(m_pending, nullptr));
        if (m_end) return 0;
        m_s.next_out = reinterpret_cast<uint8_t*>(dst);
        m_s.avail_out = static_cast<uint32_t>(std::min<size_t>(capacity, 1u << 30));
        const uint32_t wanted = m_s.avail_out;
        try {
            inflateInto();
        } catch (...) {
            // Hand out what was inflated before the problem; report the problem on the next call.
            const size_t produced = wanted - m_s.avail_out;
            m_produced += produced;
            if (produced == 0) throw;
            m_pending = std::current_exception();
            return produced;
        }
        const size_t produced = wanted - m_s.avail_out;
        m_produced += produced;
        return produced;
    }

private:
    static constexpr size_t kInBytes = 256 * 1024;

    void startMember() {
        // isal_inflate_init clears the whole state, the input and output pointers included: keep them.
        uint8_t* const nextIn = m_s.next_in;
        uint8_t* const nextOut = m_s.next_out;
        const uint32_t availIn = m_s.avail_in, availOut = m_s.avail_out;
        isal_inflate_init(&m_s);
        m_s.crc_flag = ISAL_GZIP; // gzip framing: the header parsed, the CRC and length trailer checked
        m_s.next_in = nextIn;
        m_s.avail_in = availIn;
        m_s.next_out = nextOut;
        m_s.avail_out = availOut;
    }

    // igzip reads ahead up to 8 bytes into its bit buffer: at the end of a member those belong to what
    // follows (the next member), so they go back in front of the input not read yet.
    void giveBackReadAhead() {
        const uint32_t bytes = m_s.read_in_length / 8;
        if (bytes == 0) return;
        std::vector<uint8_t> input;
        input.reserve(bytes + m_s.avail_in);
        for (uint32_t i = 0; i < bytes; ++i)
            input.push_back(uint8_t(m_s.read_in >> (8 * i)));
        input.insert(input.end(), m_s.next_in, m_s.next_in + m_s.avail_in);
        m_carry = std::move(input);
        m_s.read_in = 0;
        m_s.read_in_length = 0;
        m_s.next_in = m_carry.data();
        m_s.avail_in = uint32_t(m_carry.size());
    }

    bool refill() {
        if (m_inEof) return false;
        const size_t n = m_in->read(reinterpret_cast<char*>(m_inBuffer.get()), kInBytes);
        if (n == 0) {
            m_inEof = true;
            return false;
        }
        m_s.next_in = m_inBuffer.get();
        m_s.avail_in = static_cast<uint32_t>(n);
        return true;
    }

    void inflateInto() {
        const uint32_t wanted = m_s.avail_out;
        while (m_s.avail_out > 0) {
            if (m_s.block_state == ISAL_BLOCK_FINISH) {
                m_inMember = false;
                giveBackReadAhead();
                // Another gzip member may follow (concatenated .gz files); anything else ends the data.
                if (m_s.avail_in == 0) refill();
                if (m_s.avail_in == 0 || m_s.next_in[0] != 0x1f) {
                    m_end = true;
                    return;
                }
                startMember();
                continue;
            }
            if (m_s.avail_in == 0 && !refill()) {
                if (m_inMember)
                    throw ImportError(ImportError::Kind::Truncated, m_path,
                        "the gzip data ends early (the file is truncated: an interrupted copy or download?)",
                        m_produced + (wanted - m_s.avail_out), true);
                m_end = true;
                return;
            }
            m_inMember = true;
            const int rc = isal_inflate(&m_s);
            if (rc < 0)
                throw ImportError(ImportError::Kind::Corrupt, m_path,
                    "the gzip data is damaged (" + isalError(rc) + ")", m_produced + (wanted - m_s.avail_out), true);
        }
    }

    std::unique_ptr<ByteSource> m_in;
    std::string m_path;
    std::unique_ptr<unsigned char[]> m_inBuffer;
    std::vector<uint8_t> m_carry; // input given back after a member, before m_inBuffer's next fill
    inflate_state m_s {};
    bool m_inEof = false;
    bool m_inMember = false;
    bool m_end = false;
    uint64_t m_produced = 0;
    std::exception_ptr m_pending;
};

} // namespace

std::unique_ptr<ByteSource> isalGzipSource(std::unique_ptr<ByteSource> compressed, std::string path) {
    return std::make_unique<IsalGzipSource>(std::move(compressed), std::move(path));
}

} // namespace tuneup::analysis

#else

namespace tuneup::analysis {

bool haveIsal() {
    return false;
}

std::unique_ptr<ByteSource> isalGzipSource(std::unique_ptr<ByteSource>, std::string) {
    return nullptr;
}

} // namespace tuneup::analysis

#endif
