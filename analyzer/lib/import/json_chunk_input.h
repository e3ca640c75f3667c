#pragma once
// The chunks of a ChunkReader as one RapidJSON input stream, which is also the cursor the window
// reader takes the bodies of event arrays from (json_windows.h): the document parser reads what is
// around them, byte by byte, and skips what the windows took.

#include "import/chunk_reader.h"
#include "import/json_windows.h"

#include <algorithm>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

namespace tuneup::analysis {

class JsonChunkInput final : public JsonCursor {
public:
    using Ch = char;
    JsonChunkInput(ChunkReader& reader, const std::function<void(uint64_t)>& progress)
        : m_reader(reader)
        , m_progress(progress) {
        advance();
    }
    JsonChunkInput(const JsonChunkInput&) = delete;
    JsonChunkInput& operator=(const JsonChunkInput&) = delete;

    // RapidJSON's stream concept (reading only).
    Ch Peek() const { return m_heldAt < m_held.size() ? m_held[m_heldAt] : *m_cur; }
    Ch Take() {
        if (m_heldAt < m_held.size()) return m_held[m_heldAt++];
        const Ch c = *m_cur;
        if (m_cur != m_end && ++m_cur == m_end) advance();
        return c;
    }
    size_t Tell() const { return static_cast<size_t>(m_before + static_cast<uint64_t>(m_cur - m_begin)); }
    Ch* PutBegin() { return nullptr; }
    void Put(Ch) { }
    void Flush() { }
    size_t PutEnd(Ch*) { return 0; }

    // JsonCursor
    std::string_view available() override {
        return { m_cur, static_cast<size_t>(m_end - m_cur) }; // empty at the end (m_cur == m_end)
    }
    void consume(size_t bytes) override {
        m_cur += bytes;
        if (m_cur == m_end && m_cur != &m_sentinel) advance();
    }
    uint64_t offset() const override { return Tell(); }
    std::string recent(size_t n) const override {
        const size_t inChunk = std::min(n, static_cast<size_t>(m_cur - m_begin));
        std::string text = m_tail.substr(m_tail.size() - std::min(n - inChunk, m_tail.size()));
        return text.append(m_cur - inChunk, inChunk);
    }
    // Serves `text` before the bytes at the cursor. RapidJSON's iterative parser calls StartArray
    // before it takes the '[': a reader that took the array's body in StartArray holds the '[' back
    // for it (and what leaves the parser as it would be at the closing bracket).
    void hold(std::string_view text) {
        m_held.assign(text);
        m_heldAt = 0;
    }

    uint64_t bytesRead() const { return m_before + static_cast<uint64_t>(m_end - m_begin); }
    bool atEnd() const { return m_cur == &m_sentinel; }

    // Up to `radius` bytes either side of offset, when they are still in memory ("" otherwise).
    std::string context(uint64_t offset, size_t radius = 32) const {
        std::string window = m_tail;
        const uint64_t windowStart = m_before - m_tail.size();
        if (m_cur != &m_sentinel) window.append(m_begin, static_cast<size_t>(m_end - m_begin));
        if (offset < windowStart || offset > windowStart + window.size()) return {};
        const size_t at = static_cast<size_t>(offset - windowStart);
        const size_t from = at > radius ? at - radius : 0;
        std::string text;
        for (size_t i = from; i < std::min(window.size(), at + radius); ++i) {
            const unsigned char c = static_cast<unsigned char>(window[i]);
            if (i == at) text += "<HERE>"; // ASCII, so that any log or terminal shows it
            text += c < 0x20 ? ' ' : static_cast<char>(c);
        }
        if (at >= window.size()) text += "<HERE><end of data>";
        return text;
    }

private:
    void advance() {
        if (m_cur != &m_sentinel && m_end > m_begin) {
            // Keep the end of the chunk for error messages about its last bytes.
            const size_t keep = std::min<size_t>(64, static_cast<size_t>(m_end - m_begin));
            m_tail.assign(m_end - keep, keep);
        }
        m_before += static_cast<uint64_t>(m_end - m_begin);
        if (m_progress) m_progress(m_before);
        const std::string_view chunk = m_reader.next();
        if (chunk.empty()) {
            m_begin = m_end = m_cur = &m_sentinel;
            return;
        }
        m_begin = m_cur = chunk.data();
        m_end = chunk.data() + chunk.size();
    }

    ChunkReader& m_reader;
    const std::function<void(uint64_t)>& m_progress;
    char m_sentinel = '\0'; // Peek() at the end reads this, which RapidJSON takes as end of input
    std::string m_held; // served before the cursor's bytes (hold())
    size_t m_heldAt = 0;
    const char* m_begin = &m_sentinel;
    const char* m_end = &m_sentinel;
    const char* m_cur = &m_sentinel;
    uint64_t m_before = 0; // bytes in the chunks before the current one
    std::string m_tail;
};

} // namespace tuneup::analysis
