#include "model/string_table.h"

#include <cstring>
#include <utility>

namespace tuneup::analysis {

namespace {
constexpr size_t kChunkBytes = 256 * 1024; // most names are short; big ones get a chunk of their own
constexpr size_t kInitialSlots = 1024; // power of two
} // namespace

StringTable::StringTable()
    : m_slots(kInitialSlots, 0) {
    m_views.push_back(std::string_view());
    m_hashes.push_back(static_cast<uint32_t>(hash({}) >> 32));
    m_slots[hash({}) & (m_slots.size() - 1)] = 1;
}

StringTable::StringTable(StringTable&& other) noexcept
    : StringTable() {
    swap(other);
}

StringTable& StringTable::operator=(StringTable&& other) noexcept {
    StringTable fresh;
    fresh.swap(other);
    swap(fresh);
    return *this;
}

void StringTable::swap(StringTable& other) noexcept {
    m_views.swap(other.m_views);
    m_chunks.swap(other.m_chunks);
    std::swap(m_chunk, other.m_chunk);
    std::swap(m_chunkUsed, other.m_chunkUsed);
    m_slots.swap(other.m_slots);
    m_hashes.swap(other.m_hashes);
}

uint64_t StringTable::hash(std::string_view s) {
    // FNV-1a over 8-byte words then a final mix: fast for the short-to-medium names traces hold.
    uint64_t h = 0xcbf29ce484222325ull ^ s.size();
    const char* p = s.data();
    size_t n = s.size();
    while (n >= 8) {
        uint64_t w;
        std::memcpy(&w, p, 8);
        h = (h ^ w) * 0x100000001b3ull;
        h ^= h >> 29;
        p += 8;
        n -= 8;
    }
    uint64_t tail = 0;
    if (n > 0) // an empty view may have a null data()
        std::memcpy(&tail, p, n);
    h = (h ^ tail) * 0x100000001b3ull;
    h ^= h >> 32;
    h *= 0xd6e8feb86659fd93ull;
    h ^= h >> 32;
    return h;
}

std::string_view StringTable::store(std::string_view s) {
    if (s.empty()) return {};
    if (s.size() > kChunkBytes / 4) {
        auto big = std::make_unique_for_overwrite<char[]>(s.size());
        std::memcpy(big.get(), s.data(), s.size());
        std::string_view view(big.get(), s.size());
        m_chunks.push_back(std::move(big));
        return view;
    }
    if (m_chunk == nullptr || m_chunkUsed + s.size() > kChunkBytes) {
        m_chunks.push_back(std::make_unique_for_overwrite<char[]>(kChunkBytes)); // touched as filled
        m_chunk = m_chunks.back().get();
        m_chunkUsed = 0;
    }
    char* dst = m_chunk + m_chunkUsed;
    std::memcpy(dst, s.data(), s.size());
    m_chunkUsed += s.size();
    return std::string_view(dst, s.size());
}

void StringTable::grow() {
    std::vector<uint32_t> slots(m_slots.size() * 2, 0);
    const size_t mask = slots.size() - 1;
    for (uint32_t id = 0; id < m_views.size(); ++id) {
        size_t i = hash(m_views[id]) & mask;
        while (slots[i] != 0)
            i = (i + 1) & mask;
        slots[i] = id + 1;
    }
    m_slots.swap(slots);
}

std::optional<StringId> StringTable::find(std::string_view s) const {
    const uint64_t h = hash(s);
    const uint32_t tag = static_cast<uint32_t>(h >> 32);
    const size_t mask = m_slots.size() - 1;
    for (size_t i = h & mask;; i = (i + 1) & mask) {
        const uint32_t slot = m_slots[i];
        if (slot == 0) return std::nullopt;
        const uint32_t id = slot - 1;
        if (m_hashes[id] == tag && m_views[id] == s) return id;
    }
}

StringId StringTable::intern(std::string_view s) {
    const uint64_t h = hash(s);
    const uint32_t tag = static_cast<uint32_t>(h >> 32);
    size_t mask = m_slots.size() - 1;
    size_t i = h & mask;
    for (;; i = (i + 1) & mask) {
        const uint32_t slot = m_slots[i];
        if (slot == 0) break;
        const uint32_t id = slot - 1;
        if (m_hashes[id] == tag && m_views[id] == s) return id;
    }
    const auto id = static_cast<StringId>(m_views.size());
    m_views.push_back(store(s));
    m_hashes.push_back(tag);
    m_slots[i] = id + 1;
    if (m_views.size() * 2 > m_slots.size()) // keep the load factor under 1/2
        grow();
    return id;
}

size_t StringTable::memoryBytes() const {
    size_t bytes = m_views.capacity() * sizeof(std::string_view) + m_slots.capacity() * sizeof(uint32_t)
        + m_hashes.capacity() * sizeof(uint32_t);
    for (const auto& v : m_views)
        bytes += v.size();
    return bytes;
}

} // namespace tuneup::analysis
