#pragma once
// A small lock-free cache from a descriptor's address to a few words of facts about it, for the
// interposers' hot paths: cublasLtMatmul finds its layouts' and descriptor's attributes here (a lookup
// instead of several GetAttribute calls), cudnnBackendExecute its plan's convolution.
//
// Writers (descriptor create, set-attribute, destroy: rare next to the calls that read) lock one slot
// through its sequence number; readers never wait and never write: a read that races a write, or a key
// that was evicted, is a miss, and the caller asks the library instead. Each key may live in one of two
// slots (two hashes), so live descriptors rarely evict each other. Values are atomic words, so a read
// racing a write is defined behaviour (a seqlock). Constant-initialised: usable before any constructor.

#include <array>
#include <atomic>
#include <bit>
#include <cstddef>
#include <cstdint>

namespace tuneup::agent {

template <size_t Words, size_t Slots> class PointerCache {
    static_assert(std::has_single_bit(Slots), "Slots must be a power of two");

public:
    using Value = std::array<uint64_t, Words>;

    constexpr PointerCache() = default;
    PointerCache(const PointerCache&) = delete;
    PointerCache& operator=(const PointerCache&) = delete;

    // Copies the key's value into `out`; false on a miss (never cached, evicted, or being written), when
    // `out` holds nothing meaningful.
    bool get(const void* key, Value& out) const {
        const uintptr_t k = reinterpret_cast<uintptr_t>(key);
        if (k == 0) return false;
        return read(m_slots[first(k)], k, out) || read(m_slots[second(k)], k, out);
    }

    // Stores the key's value, replacing an older one or evicting another key.
    void put(const void* key, const Value& value) {
        const uintptr_t k = reinterpret_cast<uintptr_t>(key);
        if (k == 0) return;
        Slot& a = m_slots[first(k)];
        Slot& b = m_slots[second(k)];
        const uintptr_t inA = a.key.load(std::memory_order_relaxed), inB = b.key.load(std::memory_order_relaxed);
        // Its own slot, else a free one, else evict the first.
        const bool useB = &a != &b && inA != k && (inB == k || (inA != 0 && inB == 0));
        Slot& target = useB ? b : a;
        if (&target == &b)
            clear(a, k); // a key lives in one slot only
        else if (&a != &b)
            clear(b, k);
        const uint32_t odd = lock(target);
        if (odd == 0) return; // the slot stayed locked (a writer died in fork): the key stays uncached
        target.key.store(k, std::memory_order_release);
        for (size_t i = 0; i < Words; ++i)
            target.words[i].store(value[i], std::memory_order_release);
        unlock(target, odd);
    }

    // Applies f(Value&) to the key's value if it is cached; returns whether it was.
    template <class F> bool update(const void* key, F&& f) {
        const uintptr_t k = reinterpret_cast<uintptr_t>(key);
        if (k == 0) return false;
        for (Slot* s : { &m_slots[first(k)], &m_slots[second(k)] }) {
            if (s->key.load(std::memory_order_relaxed) != k) continue;
            const uint32_t odd = lock(*s);
            if (odd == 0) return false;
            const bool here = s->key.load(std::memory_order_relaxed) == k;
            if (here) {
                Value v;
                for (size_t i = 0; i < Words; ++i)
                    v[i] = s->words[i].load(std::memory_order_relaxed);
                f(v);
                for (size_t i = 0; i < Words; ++i)
                    s->words[i].store(v[i], std::memory_order_release);
            }
            unlock(*s, odd);
            if (here) return true;
        }
        return false;
    }

    void erase(const void* key) {
        const uintptr_t k = reinterpret_cast<uintptr_t>(key);
        if (k == 0) return;
        clear(m_slots[first(k)], k);
        clear(m_slots[second(k)], k);
    }

private:
    // A slot that fits a cache line never straddles two: a lookup touches one line.
    static constexpr size_t kSlotBytes = 16 + 8 * Words;
    static constexpr size_t kSlotAlign = kSlotBytes <= 32 ? 32 : kSlotBytes <= 64 ? 64 : 8;
    struct alignas(kSlotAlign) Slot {
        std::atomic<uint32_t> seq { 0 }; // odd while a writer holds the slot
        std::atomic<uintptr_t> key { 0 };
        std::atomic<uint64_t> words[Words] {};
    };

    static constexpr unsigned kBits = unsigned(std::countr_zero(Slots));
    // Descriptors come from malloc: the low 4 bits carry nothing.
    static size_t first(uintptr_t k) { return kBits ? size_t(((k >> 4) * 0x9E3779B97F4A7C15ull) >> (64 - kBits)) : 0; }
    static size_t second(uintptr_t k) { return kBits ? size_t(((k >> 4) * 0xC2B2AE3D27D4EB4Full) >> (64 - kBits)) : 0; }

    // Reads straight into `out` (no copy through the stack: the hot path), which holds garbage on a miss.
    static bool read(const Slot& s, uintptr_t k, Value& out) {
        for (int attempt = 0; attempt < 4; ++attempt) {
            const uint32_t before = s.seq.load(std::memory_order_acquire);
            if (before & 1) continue;
            if (s.key.load(std::memory_order_relaxed) != k) return false;
            // Acquire loads keep the second sequence read after them (what a fence would do; TSan
            // does not model fences, and on x86 these are plain loads either way).
            for (size_t i = 0; i < Words; ++i)
                out[i] = s.words[i].load(std::memory_order_acquire);
            if (s.seq.load(std::memory_order_relaxed) == before) return true;
        }
        return false;
    }

    // Returns the odd sequence number now held, or 0 when the slot stays locked: a writer that lost
    // its thread to fork() never unlocks, and nothing here may wait forever.
    static uint32_t lock(Slot& s) {
        uint32_t seq = s.seq.load(std::memory_order_relaxed);
        for (int spin = 0; spin < 100000; ++spin) {
            if (!(seq & 1)
                && s.seq.compare_exchange_weak(seq, seq + 1, std::memory_order_acquire, std::memory_order_relaxed)) {
                // The writer's stores are release stores: none can be seen before this odd number.
                return seq + 1;
            }
            pause();
            seq = s.seq.load(std::memory_order_relaxed);
        }
        return 0;
    }

    static void pause() {
#if defined(__x86_64__) || defined(__i386__)
        __builtin_ia32_pause();
#elif defined(__aarch64__)
        asm volatile("yield");
#endif
    }

    static void unlock(Slot& s, uint32_t odd) {
        s.seq.store(odd + 1, std::memory_order_release);
    }

    static void clear(Slot& s, uintptr_t k) {
        if (s.key.load(std::memory_order_relaxed) != k) return;
        const uint32_t odd = lock(s);
        if (odd == 0) return;
        if (s.key.load(std::memory_order_relaxed) == k) s.key.store(0, std::memory_order_release);
        unlock(s, odd);
    }

    Slot m_slots[Slots];
};

} // namespace tuneup::agent
