#pragma once
// Interned strings: every name in a TraceModel (kernels, ops, API calls, threads) is stored once and
// referred to by a 32-bit id, so columns stay small and names compare by id.

#include <cstdint>
#include <memory>
#include <optional>
#include <string_view>
#include <vector>

namespace tuneup::analysis {

/** Id of an interned string. 0 is always the empty string, so a zero-initialised column reads as "no name". */
using StringId = uint32_t;
inline constexpr StringId kEmptyString = 0;

class StringTable {
public:
    StringTable();
    // A moved-from table is empty and usable again.
    StringTable(StringTable&& other) noexcept;
    StringTable& operator=(StringTable&& other) noexcept;
    // Views point into the arena, so a copy would dangle: the table is move-only.
    StringTable(const StringTable&) = delete;
    StringTable& operator=(const StringTable&) = delete;

    // Returns the id of s, adding it when new. Views already handed out stay valid.
    StringId intern(std::string_view s);
    // The id of s when it was interned, without adding it.
    std::optional<StringId> find(std::string_view s) const;
    // The string of an id; ids out of range read as "" rather than crash.
    std::string_view get(StringId id) const { return id < m_views.size() ? m_views[id] : std::string_view(); }
    std::string_view operator[](StringId id) const { return get(id); }
    size_t size() const { return m_views.size(); }
    // Bytes held by the text arena and the index, for memory reports.
    size_t memoryBytes() const;

private:
    void swap(StringTable& other) noexcept;
    std::string_view store(std::string_view s);
    void grow();
    static uint64_t hash(std::string_view s);

    std::vector<std::string_view> m_views; // id -> text in the arena
    std::vector<std::unique_ptr<char[]>> m_chunks; // arena: text is never moved once written
    char* m_chunk = nullptr; // the chunk small strings are appended to
    size_t m_chunkUsed = 0;
    // Open addressing: slot -> id + 1 (0 = empty); the low hash bits pick the slot.
    std::vector<uint32_t> m_slots;
    std::vector<uint32_t> m_hashes; // id -> upper hash bits, to skip most compares
};

} // namespace tuneup::analysis
