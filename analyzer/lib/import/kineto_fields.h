#pragma once
// What the Kineto handler keeps of an event: its keys (Field) and the categories it knows, each found
// in a table indexed at compile time (keys and categories are looked up several times per event).
// Internal to the Kineto importer (kineto_*.cpp).

#include <array>
#include <cstddef>
#include <cstdint>
#include <string_view>

namespace tuneup::analysis::kineto {

enum class Field : uint8_t {
    // event level
    Ph,
    Cat,
    Name,
    Pid,
    Tid,
    Ts,
    Dur,
    Id,
    // args
    Device,
    Stream,
    Correlation,
    ExternalId,
    Registers,
    SharedMemory,
    Bytes,
    Cbid,
    InputDims,
    InputTypes,
    SequenceNumber,
    CollectiveName,
    InMsgNelems,
    OutMsgNelems,
    GroupSize,
    Dtype,
    PgName,
    PgRanks,
    CommsId,
    SyncKind,
    WaitOnStream,
    WaitOnEvent,
    ArgName,
    ArgLabels,
    ArgKind,
    Grid,
    Block,
    GraphId,
    // memory events ("[memory]", profile_memory=True)
    TotalAllocated,
    TotalReserved,
    MemoryBytes,
    DeviceId,
    DeviceType,
    Addr,
    Count,
    // not stored
    Args,
    None
};
inline constexpr size_t kFieldCount = static_cast<size_t>(Field::Count);
static_assert(kFieldCount <= 64, "present bits are a uint64_t");

// A key's length and first and last bytes: one integer compare rejects almost every other key.
constexpr uint32_t signature(std::string_view k) {
    return k.empty()
        ? 0
        : (static_cast<uint32_t>(k.size()) << 16) | (static_cast<uint32_t>(static_cast<unsigned char>(k.front())) << 8)
            | static_cast<unsigned char>(k.back());
}

struct KeyEntry {
    std::string_view name;
    Field field;
    uint32_t sig = signature(name);
};

inline constexpr KeyEntry kEventKeys[] = { { "ph", Field::Ph }, { "cat", Field::Cat }, { "name", Field::Name },
    { "pid", Field::Pid }, { "tid", Field::Tid }, { "ts", Field::Ts }, { "dur", Field::Dur }, { "args", Field::Args },
    { "id", Field::Id } };

inline constexpr KeyEntry kArgKeys[] = { { "External id", Field::ExternalId }, { "correlation", Field::Correlation },
    { "device", Field::Device }, { "stream", Field::Stream }, { "Input Dims", Field::InputDims },
    { "Input type", Field::InputTypes }, { "cbid", Field::Cbid }, { "grid", Field::Grid }, { "block", Field::Block },
    { "registers per thread", Field::Registers }, { "shared memory", Field::SharedMemory }, { "bytes", Field::Bytes },
    { "Sequence number", Field::SequenceNumber }, { "external id", Field::ExternalId },
    { "Input dims", Field::InputDims }, { "Collective name", Field::CollectiveName },
    { "In msg nelems", Field::InMsgNelems }, { "Out msg nelems", Field::OutMsgNelems },
    { "Group size", Field::GroupSize }, { "dtype", Field::Dtype }, { "Process Group Name", Field::PgName },
    { "Process Group Ranks", Field::PgRanks }, { "Comms Id", Field::CommsId }, { "cuda_sync_kind", Field::SyncKind },
    { "wait_on_stream", Field::WaitOnStream }, { "wait_on_cuda_event_id", Field::WaitOnEvent },
    { "name", Field::ArgName }, { "labels", Field::ArgLabels }, { "kind", Field::ArgKind }, { "cid", Field::Cbid },
    { "graph id", Field::GraphId }, { "Total Allocated", Field::TotalAllocated },
    { "Total Reserved", Field::TotalReserved }, { "Bytes", Field::MemoryBytes }, { "Device Id", Field::DeviceId },
    { "Device Type", Field::DeviceType }, { "Addr", Field::Addr } };

// With equal signatures, whether the bytes between the first and the last agree too. A loop rather
// than memcmp: keys are short, and a call per key showed in profiles.
constexpr bool sameMiddle(std::string_view a, std::string_view b) {
    for (size_t i = 1; i + 1 < a.size(); ++i)
        if (a[i] != b[i]) return false;
    return true;
}

// A table of names (entries with .name and .sig) indexed by signature: one slot per signature, found
// with one multiply, where a scan would compare with every entry. Keys and categories are looked up
// several times per event. The multiplier is searched at compile time so that no two signatures
// share a slot; names with one signature ("Input Dims", "Input dims") are chained.
template <class Entry, size_t N> class NameIndex {
public:
    constexpr explicit NameIndex(const Entry (&entries)[N])
        : m_entries(entries) {
        for (m_multiplier = 2654435761u;; m_multiplier += 2 * 40503u) {
            m_slots.fill(-1);
            m_next.fill(-1);
            bool clash = false;
            for (size_t i = 0; i < N && !clash; ++i) {
                int8_t* slot = &m_slots[slotOf(entries[i].sig)];
                while (*slot >= 0 && entries[static_cast<uint8_t>(*slot)].sig == entries[i].sig)
                    slot = &m_next[static_cast<uint8_t>(*slot)]; // the same signature: chained
                clash = *slot >= 0;
                *slot = static_cast<int8_t>(i);
            }
            if (!clash) return;
        }
    }
    const Entry* find(std::string_view name) const {
        const uint32_t sig = signature(name);
        for (int8_t i = m_slots[slotOf(sig)]; i >= 0; i = m_next[static_cast<uint8_t>(i)]) {
            const Entry& e = m_entries[static_cast<uint8_t>(i)];
            if (e.sig != sig) return nullptr;
            if (sameMiddle(e.name, name)) return &e;
        }
        return nullptr;
    }

private:
    static_assert(N < 64, "a sparse index");
    constexpr size_t slotOf(uint32_t sig) const { return (sig * m_multiplier) >> 24; } // the top 8 bits
    const Entry* m_entries;
    uint32_t m_multiplier = 0;
    std::array<int8_t, 256> m_slots {};
    std::array<int8_t, N> m_next {}; // the next entry with the same signature
};

inline constexpr NameIndex kEventKeyIndex(kEventKeys);
inline constexpr NameIndex kArgKeyIndex(kArgKeys);

inline Field eventKey(std::string_view key) {
    const KeyEntry* e = kEventKeyIndex.find(key);
    return e ? e->field : Field::None;
}

inline Field argKey(std::string_view key) {
    const KeyEntry* e = kArgKeyIndex.find(key);
    return e ? e->field : Field::None;
}

enum class Category : uint8_t {
    None,
    Kernel,
    Memcpy,
    Memset,
    Runtime,
    Driver,
    CpuOp,
    LegacyOperator,
    UserAnnotation,
    GpuUserAnnotation,
    CudaSync,
    PythonFunction,
    ProfilerRange,
    Trace,
    Overhead,
    CpuInstant,
    Other
};

struct CategoryEntry {
    std::string_view name;
    Category category;
    uint32_t sig = signature(name);
};
inline constexpr CategoryEntry kCategories[] = { { "cpu_op", Category::CpuOp }, { "cuda_runtime", Category::Runtime },
    { "kernel", Category::Kernel }, { "python_function", Category::PythonFunction }, { "gpu_memcpy", Category::Memcpy },
    { "gpu_memset", Category::Memset }, { "user_annotation", Category::UserAnnotation },
    { "gpu_user_annotation", Category::GpuUserAnnotation }, { "cuda_driver", Category::Driver },
    { "cuda_sync", Category::CudaSync }, { "cpu_instant_event", Category::CpuInstant },
    { "cuda_profiler_range", Category::ProfilerRange }, { "Trace", Category::Trace },
    { "overhead", Category::Overhead },
    // Kineto's first format (PyTorch 1.8 development, 2020)
    { "Operator", Category::LegacyOperator }, { "Runtime", Category::Runtime }, { "Kernel", Category::Kernel },
    { "Memcpy", Category::Memcpy }, { "Memset", Category::Memset } };
inline constexpr NameIndex kCategoryIndex(kCategories);

inline Category classifyCategory(std::string_view cat) {
    const CategoryEntry* e = kCategoryIndex.find(cat);
    return e ? e->category : Category::Other;
}

} // namespace tuneup::analysis::kineto
