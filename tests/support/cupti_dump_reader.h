#pragma once
// Reads a CUPTI buffer file the agent wrote (TUNEUP_CUPTI_DUMP, agent/cupti_dump_format.h) back into a
// buffer the decoder takes: the records as the recording CUPTI laid them out, their string pointers set
// to the strings the file carries, and a walker that steps through them by the offsets the recording
// CUPTI gave -- so a buffer from any CUPTI version decodes here, with no GPU and no libcupti.

#include "cupti_decode.h"
#include "cupti_dump_format.h"

#include <algorithm>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

namespace tuneup::test {

struct CuptiDump {
    agent::CuptiDumpHeader header {};
    std::vector<int32_t> kinds;
    std::vector<uint32_t> recordOffsets;
    std::string text; // the strings the records point into
    std::vector<uint64_t> words; // the buffer, 8-byte aligned
    std::string error; // why the file could not be read; "" when it was

    uint8_t* buffer() { return reinterpret_cast<uint8_t*>(words.data()); }
    size_t validBytes() const { return size_t(header.validBytes); }
};

class CuptiDumpWalker final : public agent::RecordWalker {
public:
    explicit CuptiDumpWalker(const CuptiDump& dump)
        : m_dump(dump) { }
    Step next(uint8_t* buffer, size_t, CUpti_Activity*& record) const override {
        const std::vector<uint32_t>& offsets = m_dump.recordOffsets;
        size_t index = 0;
        if (record) {
            const auto at = uint32_t(reinterpret_cast<uint8_t*>(record) - buffer);
            index = size_t(std::upper_bound(offsets.begin(), offsets.end(), at) - offsets.begin());
        }
        if (index < offsets.size()) {
            record = reinterpret_cast<CUpti_Activity*>(buffer + offsets[index]);
            return Step::Record;
        }
        return (m_dump.header.flags & agent::kCuptiDumpWalkInvalid) ? Step::Invalid : Step::End;
    }

private:
    const CuptiDump& m_dump;
};

inline CuptiDump readCuptiDump(const std::string& path) {
    CuptiDump dump;
    std::ifstream in(path, std::ios::binary);
    const std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    size_t at = 0;
    const auto take = [&](void* out, uint64_t size) {
        if (at + size > bytes.size()) return false;
        std::memcpy(out, bytes.data() + at, size);
        at += agent::cuptiDumpPadded(size);
        return true;
    };
    agent::CuptiDumpHeader& h = dump.header;
    if (!take(&h, sizeof h) || std::memcmp(h.magic, agent::kCuptiDumpMagic, sizeof h.magic) != 0) {
        dump.error = path + " is not a CUPTI buffer file";
        return dump;
    }
    if (h.version != agent::kCuptiDumpVersion) {
        dump.error = path + ": format version " + std::to_string(h.version) + ", this reader knows "
            + std::to_string(agent::kCuptiDumpVersion);
        return dump;
    }
    dump.kinds.resize(h.kindCount);
    dump.recordOffsets.resize(h.recordCount);
    std::vector<agent::CuptiDumpString> strings(h.stringCount);
    dump.text.resize(h.textBytes);
    dump.words.resize(agent::cuptiDumpPadded(h.validBytes) / 8);
    if (bytes.size() > (size_t(1) << 30) || !take(dump.kinds.data(), h.kindCount * sizeof(int32_t))
        || !take(dump.recordOffsets.data(), h.recordCount * sizeof(uint32_t))
        || !take(strings.data(), h.stringCount * sizeof(agent::CuptiDumpString)) || !take(dump.text.data(), h.textBytes)
        || !take(dump.buffer(), h.validBytes)) {
        dump.error = path + " is cut short";
        return dump;
    }
    for (uint32_t offset : dump.recordOffsets)
        if (offset + sizeof(CUpti_Activity) > h.validBytes) dump.error = path + ": a record lies outside the buffer";
    for (const agent::CuptiDumpString& s : strings) {
        if (s.pointerOffset + sizeof(char*) > h.validBytes || s.textOffset >= h.textBytes) {
            dump.error = path + ": a string lies outside the file";
            break;
        }
        const char* text = dump.text.data() + s.textOffset;
        std::memcpy(dump.buffer() + s.pointerOffset, &text, sizeof text);
    }
    return dump;
}

} // namespace tuneup::test
