#pragma once
// CUPTI's activity buffers. CUPTI asks for one whenever it needs room (on its own thread or the
// application's) and hands it back full; the writer thread decodes it and recycles it. Every buffer
// the pool holds -- lent to CUPTI, waiting to be decoded, or spare -- is reserved from the agent's
// buffer budget (buffer_budget.h, TUNEUP_MAX_BUFFER_MB), which the threads' event rings share, and
// CUPTI may hold at most its share of it. A request the budget cannot meet is refused: CUPTI then
// drops those records and counts them (cuptiActivityGetNumDroppedRecords), and the file counts them
// as CUPTI's in event_counts.

#include <cstddef>
#include <cstdint>
#include <mutex>
#include <utility>
#include <vector>

namespace tuneup::agent {

class CuptiBufferPool {
public:
    // CUPTI recommends 1-10 MB buffers; 1 MiB holds ~4800 kernel records.
    static constexpr size_t kBufferBytes = size_t(1) << 20;
    // Emptied buffers kept for reuse; the rest go back to the budget.
    static constexpr size_t kSpareBuffers = 4;

    using Completed = std::vector<std::pair<uint8_t*, size_t>>; // buffer, valid bytes

    CuptiBufferPool() = default;
    // Frees every buffer and gives the budget back. The agent's pool is never destroyed (CUPTI may call
    // back while the process exits); tests' pools are.
    ~CuptiBufferPool();
    CuptiBufferPool(const CuptiBufferPool&) = delete;
    CuptiBufferPool& operator=(const CuptiBufferPool&) = delete;

    // At most `maxBuffers` at once (CUPTI's share of the budget), and only while the budget has room.
    void setMaxBuffers(size_t maxBuffers);

    // CUPTI's request: a zeroed, 8-byte aligned buffer of kBufferBytes, or null when refused.
    uint8_t* request();
    // CUPTI's completed buffer, queued for the writer.
    void complete(uint8_t* buffer, size_t validSize);
    // The writer thread: the completed buffers so far.
    Completed takeCompleted();
    // The writer thread, after decoding them: ours are zeroed and kept as spares or freed back to the
    // budget; others (another CUPTI client's, when callbacks got mixed) are left alone.
    void recycle(const Completed& done);

    struct Stats {
        uint64_t refused = 0; // requests refused: CUPTI dropped their records
        uint64_t refusedOverBudget = 0; // of those, refused because the shared budget was spent
        size_t heldBytes = 0, peakBytes = 0; // reserved from the budget now, and at most
    };
    Stats stats() const;

private:
    bool ours(const uint8_t* buffer) const; // under m_mutex

    mutable std::mutex m_mutex; // held for list operations only, never across allocation or zeroing
    std::vector<uint8_t*> m_ours; // every buffer we allocated and still hold
    std::vector<uint8_t*> m_spare; // zeroed, ready for CUPTI
    Completed m_completed;
    size_t m_allocating = 0; // reserved, being allocated outside the lock
    size_t m_maxBuffers = 2;
    Stats m_stats;
};

} // namespace tuneup::agent
