#include "cupti_buffer_pool.h"

#include "buffer_budget.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>

namespace tuneup::agent {

CuptiBufferPool::~CuptiBufferPool() {
    for (uint8_t* buffer : m_ours) {
        free(buffer);
        BufferBudget::release(kBufferBytes);
    }
}

void CuptiBufferPool::setMaxBuffers(size_t maxBuffers) {
    std::lock_guard lock(m_mutex);
    m_maxBuffers = maxBuffers;
}

uint8_t* CuptiBufferPool::request() {
    {
        std::lock_guard lock(m_mutex);
        if (!m_spare.empty()) {
            uint8_t* buffer = m_spare.back();
            m_spare.pop_back();
            return buffer;
        }
        if (m_ours.size() + m_allocating >= m_maxBuffers) {
            ++m_stats.refused;
            return nullptr;
        }
        if (!BufferBudget::tryReserve(kBufferBytes)) {
            ++m_stats.refused;
            ++m_stats.refusedOverBudget;
            return nullptr;
        }
        ++m_allocating;
    }
    // calloc: zeroed (CUPTI is told so) and 16-byte aligned (CUPTI needs 8). Outside the lock: the
    // writer recycling buffers never waits for the allocator.
    auto* fresh = static_cast<uint8_t*>(calloc(1, kBufferBytes));
    std::lock_guard lock(m_mutex);
    --m_allocating;
    if (!fresh) {
        BufferBudget::release(kBufferBytes);
        ++m_stats.refused;
        return nullptr;
    }
    m_ours.push_back(fresh);
    m_stats.heldBytes += kBufferBytes;
    m_stats.peakBytes = std::max(m_stats.peakBytes, m_stats.heldBytes);
    return fresh;
}

void CuptiBufferPool::complete(uint8_t* buffer, size_t validSize) {
    std::lock_guard lock(m_mutex);
    m_completed.emplace_back(buffer, validSize);
}

CuptiBufferPool::Completed CuptiBufferPool::takeCompleted() {
    Completed completed;
    std::lock_guard lock(m_mutex);
    completed.swap(m_completed);
    return completed;
}

bool CuptiBufferPool::ours(const uint8_t* buffer) const {
    return std::find(m_ours.begin(), m_ours.end(), buffer) != m_ours.end();
}

void CuptiBufferPool::recycle(const Completed& done) {
    std::vector<uint8_t*> recycled;
    {
        std::lock_guard lock(m_mutex);
        for (const auto& [buffer, validSize] : done)
            if (ours(buffer)) recycled.push_back(buffer);
    }
    for (uint8_t* buffer : recycled)
        std::memset(buffer, 0, kBufferBytes); // here, not on the application's thread
    std::vector<uint8_t*> surplus;
    {
        std::lock_guard lock(m_mutex);
        m_spare.insert(m_spare.end(), recycled.begin(), recycled.end());
        while (m_spare.size() > kSpareBuffers) {
            uint8_t* buffer = m_spare.back();
            m_spare.pop_back();
            m_ours.erase(std::find(m_ours.begin(), m_ours.end(), buffer));
            m_stats.heldBytes -= kBufferBytes;
            surplus.push_back(buffer);
        }
    }
    for (uint8_t* buffer : surplus) {
        free(buffer);
        BufferBudget::release(kBufferBytes);
    }
}

CuptiBufferPool::Stats CuptiBufferPool::stats() const {
    std::lock_guard lock(m_mutex);
    return m_stats;
}

} // namespace tuneup::agent
