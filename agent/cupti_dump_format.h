#pragma once
// A CUPTI activity buffer written to a file (TUNEUP_CUPTI_DUMP, cupti_dump.h): test fixtures for the
// decoder, recorded on a real GPU and decoded anywhere. Besides the buffer's bytes it keeps what the
// recording process knew and a reader elsewhere cannot: where each record starts (the record sizes of
// that CUPTI), the strings the records point to (kernel and device names, gone with the process) and
// the clock the timestamps are on. Little-endian; each part starts 8-byte aligned:
//   CuptiDumpHeader
//   int32_t  kinds[kindCount]              the activity kinds the agent had enabled (CUpti_ActivityKind)
//   uint32_t recordOffsets[recordCount]    where each record starts, as the recording CUPTI walked them
//   CuptiDumpString strings[stringCount]   the string pointers in the records
//   char     text[textBytes]               their strings, each NUL-terminated
//   uint8_t  buffer[validBytes]            the buffer's valid bytes, its string pointers zeroed

#include <cstdint>

namespace tuneup::agent {

inline constexpr char kCuptiDumpMagic[8] = { 'T', 'U', 'C', 'U', 'P', 'T', 'I', 'B' };
inline constexpr uint32_t kCuptiDumpVersion = 1;

struct CuptiDumpHeader {
    char magic[8];
    uint32_t version; // kCuptiDumpVersion
    uint32_t cuptiVersion; // cuptiGetVersion of the CUPTI that filled the buffer
    uint32_t pid;
    uint32_t sequence; // the process's buffers in the order the writer took them
    int64_t clockOffsetNs; // the records' clock minus CLOCK_MONOTONIC; 0 when CUPTI used the agent's clock
    uint32_t kindCount, recordCount, stringCount;
    uint32_t flags; // kCuptiDumpWalkInvalid
    uint64_t textBytes, validBytes;
};
static_assert(sizeof(CuptiDumpHeader) == 64);

// The recording CUPTI stopped at a record it could not read: the bytes after the last record are that.
inline constexpr uint32_t kCuptiDumpWalkInvalid = 1;

struct CuptiDumpString {
    uint64_t pointerOffset; // where the pointer lies, from the buffer's start
    uint64_t textOffset; // where its string starts in text
};

inline constexpr uint64_t cuptiDumpPadded(uint64_t bytes) {
    return (bytes + 7) & ~uint64_t(7);
}

} // namespace tuneup::agent
