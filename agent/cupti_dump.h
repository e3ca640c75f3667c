#pragma once
// TUNEUP_CUPTI_DUMP=DIR: each completed CUPTI activity buffer also written to DIR as a file
// (cupti_dump_format.h), to bring raw buffers recorded on a real GPU back as the decoder's test
// fixtures. The writer thread writes them just before it decodes them -- never CUPTI's thread or the
// application's -- up to TUNEUP_CUPTI_DUMP_MB in all; later buffers are decoded but not written.

#include "cupti_decode.h"

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace tuneup::agent {

class CuptiDumper {
public:
    // `kinds`: the activity kinds enabled; `cuptiVersion`: cuptiGetVersion.
    CuptiDumper(std::string dir, uint64_t maxBytes, uint32_t cuptiVersion, std::vector<int32_t> kinds);

    // Writes DIR/cupti.pid<pid>.<sequence>.bin, walking the buffer with the running CUPTI's `walker`.
    // False when it was not written (over the limit, or the write failed: said once).
    bool dump(const uint8_t* buffer, size_t validSize, const RecordWalker& walker, int64_t clockOffsetNs);

    // The file's bytes, without writing it (tests).
    std::vector<uint8_t> encode(const uint8_t* buffer, size_t validSize, const RecordWalker& walker,
        int64_t clockOffsetNs, uint32_t sequence) const;

    uint64_t filesWritten() const { return m_files; }
    uint64_t bytesWritten() const { return m_bytes; }
    uint64_t buffersNotWritten() const { return m_skipped; }

private:
    std::string m_dir;
    uint64_t m_maxBytes;
    uint32_t m_cuptiVersion;
    std::vector<int32_t> m_kinds;
    uint32_t m_sequence = 0;
    uint64_t m_files = 0, m_bytes = 0, m_skipped = 0;
    bool m_failed = false;
};

} // namespace tuneup::agent
