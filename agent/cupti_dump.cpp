#include "cupti_dump.h"

#include "cupti_dump_format.h"
#include "log.h"
#include "owned_fd.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <unordered_map>

namespace tuneup::agent {

namespace {

void append(std::vector<uint8_t>& out, const void* data, size_t bytes) {
    const auto* p = static_cast<const uint8_t*>(data);
    out.insert(out.end(), p, p + bytes);
    out.resize(cuptiDumpPadded(out.size()));
}

bool writeAll(const std::string& path, const std::vector<uint8_t>& bytes, std::string& error) {
    OwnedFd fd(::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644));
    size_t done = 0;
    while (fd.get() >= 0 && done < bytes.size()) {
        const ssize_t n = ::write(fd.get(), bytes.data() + done, bytes.size() - done);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        done += size_t(n);
    }
    if (done == bytes.size()) return true;
    error = strerror(errno);
    ::unlink(path.c_str());
    return false;
}

} // namespace

CuptiDumper::CuptiDumper(std::string dir, uint64_t maxBytes, uint32_t cuptiVersion, std::vector<int32_t> kinds)
    : m_dir(std::move(dir))
    , m_maxBytes(maxBytes)
    , m_cuptiVersion(cuptiVersion)
    , m_kinds(std::move(kinds)) {
}

std::vector<uint8_t> CuptiDumper::encode(const uint8_t* buffer, size_t validSize, const RecordWalker& walker,
    int64_t clockOffsetNs, uint32_t sequence) const {
    // Walked on a copy, whose string pointers are then zeroed: the file holds no addresses.
    std::vector<uint64_t> words(cuptiDumpPadded(validSize) / 8);
    auto* copy = reinterpret_cast<uint8_t*>(words.data());
    std::memcpy(copy, buffer, validSize);
    std::vector<uint32_t> offsets;
    std::vector<CuptiDumpString> strings;
    std::string text;
    std::unordered_map<std::string, uint64_t> textAt;
    uint32_t flags = 0;
    CUpti_Activity* record = nullptr;
    for (RecordWalker::Step step; (step = walker.next(copy, validSize, record)) != RecordWalker::Step::End;) {
        if (step == RecordWalker::Step::Invalid) {
            flags |= kCuptiDumpWalkInvalid;
            break;
        }
        const size_t at = size_t(reinterpret_cast<uint8_t*>(record) - copy);
        offsets.push_back(uint32_t(at));
        const size_t field = stringFieldOffset(record->kind);
        if (!field || at + field + sizeof(char*) > validSize) continue;
        const char* string = nullptr;
        std::memcpy(&string, copy + at + field, sizeof string);
        std::memset(copy + at + field, 0, sizeof string);
        if (!string) continue;
        // Kernel names repeat: each is kept once.
        auto [it, added] = textAt.try_emplace(string, text.size());
        if (added) text.append(string).push_back('\0');
        strings.push_back({ at + field, it->second });
    }
    CuptiDumpHeader header {};
    std::memcpy(header.magic, kCuptiDumpMagic, sizeof header.magic);
    header.version = kCuptiDumpVersion;
    header.cuptiVersion = m_cuptiVersion;
    header.pid = uint32_t(getpid());
    header.sequence = sequence;
    header.clockOffsetNs = clockOffsetNs;
    header.kindCount = uint32_t(m_kinds.size());
    header.recordCount = uint32_t(offsets.size());
    header.stringCount = uint32_t(strings.size());
    header.flags = flags;
    header.textBytes = text.size();
    header.validBytes = validSize;
    std::vector<uint8_t> out;
    out.reserve(
        sizeof header + offsets.size() * 4 + strings.size() * sizeof(CuptiDumpString) + text.size() + validSize + 64);
    append(out, &header, sizeof header);
    append(out, m_kinds.data(), m_kinds.size() * sizeof(int32_t));
    append(out, offsets.data(), offsets.size() * sizeof(uint32_t));
    append(out, strings.data(), strings.size() * sizeof(CuptiDumpString));
    append(out, text.data(), text.size());
    append(out, copy, validSize);
    return out;
}

bool CuptiDumper::dump(const uint8_t* buffer, size_t validSize, const RecordWalker& walker, int64_t clockOffsetNs) {
    if (m_failed || m_bytes + validSize > m_maxBytes) {
        ++m_skipped;
        return false;
    }
    const std::vector<uint8_t> bytes = encode(buffer, validSize, walker, clockOffsetNs, m_sequence);
    char name[64];
    snprintf(name, sizeof name, "/cupti.pid%d.%05u.bin", int(getpid()), m_sequence++);
    const std::string path = m_dir + name;
    std::string error;
    if (m_files == 0) ::mkdir(m_dir.c_str(), 0755); // exists already, or the write below says why not
    if (m_bytes + bytes.size() > m_maxBytes || !writeAll(path, bytes, error)) {
        if (!error.empty()) {
            TUNEUP_LOG(Warn, "TUNEUP_CUPTI_DUMP: cannot write %s (%s); no more CUPTI buffers are written", path.c_str(),
                error.c_str());
            m_failed = true;
        }
        ++m_skipped;
        return false;
    }
    ++m_files;
    m_bytes += bytes.size();
    return true;
}

} // namespace tuneup::agent
