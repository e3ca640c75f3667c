#include "model/trace_model.h"

#include "model/sort_runs.h"
#include "saturating.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <utility>

namespace tuneup::analysis {

std::string_view copyKindName(CopyKind k) {
    static constexpr std::array<std::string_view, 11> kNames
        = { "unknown", "HtoD", "DtoH", "HtoA", "AtoH", "AtoA", "AtoD", "DtoA", "DtoD", "HtoH", "PtoP" };
    const auto i = static_cast<size_t>(k);
    return i < kNames.size() ? kNames[i] : "unknown";
}

std::string_view memoryKindName(MemoryKind k) {
    static constexpr std::array<std::string_view, 8> kNames
        = { "unknown", "pageable", "pinned", "device", "array", "managed", "device_static", "managed_static" };
    const auto i = static_cast<size_t>(k);
    return i < kNames.size() ? kNames[i] : "unknown";
}

std::string_view syncTypeName(SyncType t) {
    static constexpr std::array<std::string_view, 5> kNames
        = { "unknown", "event_synchronize", "stream_wait_event", "stream_synchronize", "context_synchronize" };
    const auto i = static_cast<size_t>(t);
    return i < kNames.size() ? kNames[i] : "unknown";
}

std::string_view sourceFormatName(SourceFormat f) {
    switch (f) {
    case SourceFormat::KinetoJson:
        return "kineto-json";
    case SourceFormat::TuneupDb:
        return "tuneup";
    case SourceFormat::NsysSqlite:
        return "nsys-sqlite";
    case SourceFormat::Unknown:
        break;
    }
    return "unknown";
}

std::string_view gpuVendorName(GpuVendor v) {
    switch (v) {
    case GpuVendor::Nvidia:
        return "nvidia";
    case GpuVendor::Amd:
        return "amd";
    case GpuVendor::Unknown:
        break;
    }
    return "unknown";
}

std::string TraceInfo::metadataValue(std::string_view key) const {
    for (const auto& [k, v] : metadata)
        if (k == key) return v;
    return {};
}

void ImportStats::add(std::string_view name, StatSeverity severity, int64_t delta, std::string_view description) {
    for (auto& e : m_entries) {
        if (e.name == name) {
            e.value = saturatingAdd(e.value, delta); // a recording's own stats can hold anything
            return;
        }
    }
    m_entries.push_back({ std::string(name), severity, delta, std::string(description) });
}

int64_t ImportStats::value(std::string_view name) const {
    for (const auto& e : m_entries)
        if (e.name == name) return e.value;
    return 0;
}

const DeviceInfo* TraceModel::device(int32_t id) const {
    for (const auto& d : devices)
        if (d.id == id) return &d;
    return nullptr;
}

namespace {

// Sorts rows by their keys, stably (rows of one key keep their order), least significant digit first:
// a few passes over the rows whatever their order, where a comparison sort of rows whose keys are read
// through the key column spends most of its time missing the cache. Only the digits in which the keys
// differ are sorted on; keys are taken less the smallest, in 32 bits where they fit (ids mostly do).
template <class Key>
void radixSortByKey(std::vector<RowIndex>& rows, const std::vector<uint64_t>& keys, uint64_t lowest) {
    struct Entry {
        Key key;
        RowIndex row;
    };
    std::vector<Entry> entries(rows.size()), sorted(rows.size());
    Key range = 0;
    for (size_t i = 0; i < rows.size(); ++i) {
        entries[i] = { static_cast<Key>(keys[static_cast<size_t>(rows[i])] - lowest), rows[i] };
        range = std::max(range, entries[i].key);
    }
    constexpr int kDigitBits = 11; // 2048 counters: in the L1 cache; three passes for 33 bits of range
    constexpr size_t kDigits = size_t(1) << kDigitBits;
    std::vector<size_t> count(kDigits);
    for (int shift = 0; shift < int(sizeof(Key) * 8) && (range >> shift) != 0; shift += kDigitBits) {
        std::fill(count.begin(), count.end(), 0);
        for (const Entry& e : entries)
            ++count[(e.key >> shift) & (kDigits - 1)];
        size_t total = 0;
        for (size_t& c : count)
            total += std::exchange(c, total);
        for (const Entry& e : entries)
            sorted[count[(e.key >> shift) & (kDigits - 1)]++] = e;
        entries.swap(sorted);
    }
    for (size_t i = 0; i < rows.size(); ++i)
        rows[i] = entries[i].row;
}

void sortByKey(std::vector<RowIndex>& rows, const std::vector<uint64_t>& keys) {
    uint64_t lowest = UINT64_MAX, highest = 0;
    for (RowIndex row : rows) {
        lowest = std::min(lowest, keys[static_cast<size_t>(row)]);
        highest = std::max(highest, keys[static_cast<size_t>(row)]);
    }
    if (highest - lowest <= UINT32_MAX)
        radixSortByKey<uint32_t>(rows, keys, lowest);
    else
        radixSortByKey<uint64_t>(rows, keys, lowest);
}

} // namespace

TraceModel::KeyIndex TraceModel::buildKeyIndex(const std::vector<uint64_t>& keys) {
    KeyIndex index;
    size_t present = 0;
    bool sorted = true; // rows come in order, so (key, row) order is key order
    uint64_t last = 0;
    for (uint64_t key : keys)
        if (key != 0) {
            ++present;
            sorted = sorted && key >= last;
            last = key;
        }
    index.reserve(present);
    for (size_t i = 0; i < keys.size(); ++i)
        if (keys[i] != 0) index.push_back(static_cast<RowIndex>(i));
    // Correlation ids mostly grow with time, so the rows often come in key order already, or in a few runs
    // of it (a thread's or a stream's); ids in no order are sorted by radix.
    const auto byKey = [&keys](RowIndex a, RowIndex b) { return keys[size_t(a)] < keys[size_t(b)]; };
    if (!sorted && !mergeRuns(index, byKey, std::max<size_t>(index.size() / 16, 2))) sortByKey(index, keys);
    return index;
}

RowIndex TraceModel::findByKey(const KeyIndex& index, const std::vector<uint64_t>& keys, uint64_t key) {
    if (key == 0) return kNoRow;
    const auto it = std::lower_bound(index.begin(), index.end(), key,
        [&keys](RowIndex row, uint64_t k) { return keys[static_cast<size_t>(row)] < k; });
    return it != index.end() && keys[static_cast<size_t>(*it)] == key ? *it : kNoRow;
}

namespace {
std::optional<RowIndex> found(RowIndex row) {
    return row == kNoRow ? std::nullopt : std::optional<RowIndex>(row);
}
} // namespace

std::optional<RowIndex> TraceModel::kernelByCorrelation(uint64_t correlation) const {
    return found(findByKey(m_kernelByCorrelation, kernels.correlation, correlation));
}

std::optional<RowIndex> TraceModel::apiCallByCorrelation(uint64_t correlation) const {
    return found(findByKey(m_apiCallByCorrelation, apiCalls.correlation, correlation));
}

std::optional<RowIndex> TraceModel::cpuOpByExternalId(uint64_t externalId) const {
    return found(findByKey(m_cpuOpByExternalId, cpuOps.externalId, externalId));
}

bool TraceModel::hasGpuActivity() const {
    return !kernels.empty() || !memcpys.empty() || !memsets.empty() || !gpuAnnotations.empty();
}

size_t TraceModel::eventCount() const {
    return kernels.size() + memcpys.size() + memsets.size() + syncs.size() + apiCalls.size() + cpuOps.size()
        + annotations.size() + gpuAnnotations.size() + counterRanges.size() + gemmCalls.size() + convCalls.size();
}

std::optional<TimeSpan> TraceModel::span() const {
    std::optional<TimeSpan> result;
    auto take = [&result](const std::vector<int64_t>& starts, const std::vector<int64_t>& ends) {
        if (starts.empty()) return;
        // Tables are sorted by start; ends are not.
        const int64_t first = starts.front();
        const int64_t last = *std::max_element(ends.begin(), ends.end());
        if (!result) result = TimeSpan { first, last };
        result->startNs = std::min(result->startNs, first);
        result->endNs = std::max(result->endNs, last);
    };
    take(kernels.startNs, kernels.endNs);
    take(memcpys.startNs, memcpys.endNs);
    take(memsets.startNs, memsets.endNs);
    take(syncs.startNs, syncs.endNs);
    take(apiCalls.startNs, apiCalls.endNs);
    take(cpuOps.startNs, cpuOps.endNs);
    take(annotations.startNs, annotations.endNs);
    take(gpuAnnotations.startNs, gpuAnnotations.endNs);
    take(counterRanges.startNs, counterRanges.endNs);
    take(gemmCalls.startNs, gemmCalls.endNs);
    take(convCalls.startNs, convCalls.endNs);
    return result;
}

std::vector<std::vector<int64_t>> parseInputDims(std::string_view dims) {
    std::vector<std::vector<int64_t>> inputs;
    // Expect "[" input ("," input)* "]" where input is "[" ints "]" or anything nested.
    size_t i = 0;
    auto skipSpace = [&] {
        while (i < dims.size() && (dims[i] == ' ' || dims[i] == '\n' || dims[i] == '\t'))
            ++i;
    };
    skipSpace();
    if (i >= dims.size() || dims[i] != '[') return inputs;
    ++i;
    while (i < dims.size()) {
        skipSpace();
        if (i < dims.size() && dims[i] == ']') break;
        std::vector<int64_t>& sizes = inputs.emplace_back();
        if (i < dims.size() && dims[i] == '[') {
            ++i;
            bool flat = true;
            int depth = 1;
            while (i < dims.size() && depth > 0) {
                const char c = dims[i];
                if (c == '[') {
                    flat = false;
                    ++depth;
                    ++i;
                } else if (c == ']') {
                    --depth;
                    ++i;
                } else if (c == '-' || (c >= '0' && c <= '9')) {
                    int64_t v = 0;
                    auto [end, ec] = std::from_chars(dims.data() + i, dims.data() + dims.size(), v);
                    if (ec != std::errc())
                        flat = false;
                    else if (depth == 1)
                        sizes.push_back(v);
                    i = static_cast<size_t>(end - dims.data());
                    if (ec != std::errc()) ++i;
                } else {
                    if (c != ',' && c != ' ') flat = false;
                    ++i;
                }
            }
            if (!flat) sizes.clear();
        } else {
            // A scalar where a list was expected: skip to the next top-level comma.
            while (i < dims.size() && dims[i] != ',' && dims[i] != ']')
                ++i;
        }
        skipSpace();
        if (i < dims.size() && dims[i] == ',') ++i;
    }
    return inputs;
}

std::vector<std::string_view> splitInputTypes(std::string_view types) {
    std::vector<std::string_view> parts;
    if (types.empty()) return parts;
    size_t start = 0;
    for (;;) {
        const size_t comma = types.find(',', start);
        parts.push_back(types.substr(start, comma == std::string_view::npos ? std::string_view::npos : comma - start));
        if (comma == std::string_view::npos) break;
        start = comma + 1;
    }
    return parts;
}

int dtypeBytes(std::string_view dtype) {
    struct Entry {
        std::string_view name;
        int bytes;
    };
    static constexpr Entry kTable[] = { { "Float", 4 }, { "Half", 2 }, { "BFloat16", 2 }, { "Double", 8 }, { "Int", 4 },
        { "Long", 8 }, { "Short", 2 }, { "Char", 1 }, { "Byte", 1 }, { "Bool", 1 }, { "ComplexHalf", 4 },
        { "ComplexFloat", 8 }, { "ComplexDouble", 16 }, { "UInt16", 2 }, { "UInt32", 4 }, { "UInt64", 8 } };
    for (const auto& e : kTable)
        if (e.name == dtype) return e.bytes;
    if (dtype.substr(0, 6) == "Float8") return 1;
    return 0;
}

} // namespace tuneup::analysis
