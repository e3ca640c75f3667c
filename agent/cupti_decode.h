#pragma once
// Decodes CUPTI activity buffers into the agent's GPU records. A pure function of the buffer: no
// CUPTI calls except through the RecordWalker, so tests decode buffers built from the real CUPTI
// record structs without a GPU.

#include "gpu_records.h"

#include <cstddef>
#include <cstdint>
#include <cupti_activity.h>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

namespace tuneup::agent {

// Steps through the records of a buffer. The real one is CUPTI's cuptiActivityGetNextRecord,
// which knows the record sizes of the CUPTI that is running.
class RecordWalker {
public:
    enum class Step { Record, End, Invalid };
    virtual ~RecordWalker() = default;
    // Moves `record` to the next record (the first when null) in `buffer[0, validSize)`.
    // Invalid: a record CUPTI does not know; the rest of the buffer cannot be read.
    virtual Step next(uint8_t* buffer, size_t validSize, CUpti_Activity*& record) const = 0;
};

class CuptiRecordWalker final : public RecordWalker {
public:
    explicit CuptiRecordWalker(decltype(&::cuptiActivityGetNextRecord) nextRecord)
        : m_nextRecord(nextRecord) { }
    Step next(uint8_t* buffer, size_t validSize, CUpti_Activity*& record) const override;

private:
    decltype(&::cuptiActivityGetNextRecord) m_nextRecord;
};

// What the decoder needs to know of a runtime or driver API function (common/cuda_api.h).
struct ApiNameInfo {
    std::string_view name; // empty when unknown; must stay valid while the decoder runs
    bool noisy = false; // counted per name instead of written as rows (unless DecodeOptions::noisyApiRows)
    bool query = false; // only asks whether work finished: its synchronisation records are not waits
};
// The function of a runtime or driver API call (schema::ApiKind, CUPTI callback id).
using ApiNameLookup = std::function<ApiNameInfo(int api, uint32_t cbid)>;

struct DecodeOptions {
    ApiNameLookup apiName;
    // Subtracted from every timestamp: CUPTI's clock minus CLOCK_MONOTONIC, when CUPTI could not
    // be given our clock (0 when it was).
    int64_t clockOffsetNs = 0;
    // Noisy API calls as rows too (TUNEUP_TRACE noisy-api); by default they are only counted.
    bool noisyApiRows = false;
};

// What the decoder did, summed over buffers.
struct DecodeStats {
    uint64_t buffers = 0;
    // Records handed to the sink, by kind.
    uint64_t kernels = 0, memcpys = 0, memsets = 0, syncs = 0, runtimeApis = 0, driverApis = 0, devices = 0;
    uint64_t externalCorrelations = 0;
    uint64_t memories = 0; // allocations and releases (MEMORY2)
    uint64_t memoryNotOperations = 0; // MEMORY2 records that are neither an allocation nor a release: skipped
    uint64_t unknownKind = 0; // kinds the agent does not decode: skipped
    uint64_t noTimestamp = 0; // start == end == 0 (CUPTI had no timing): not written
    uint64_t endBeforeStart = 0; // written with end = start, so durations are never negative
    uint64_t invalidBuffers = 0; // walks stopped by a record CUPTI could not read: the rest is lost
    // Synchronisation records that are not waits, not written: a query that found work still running
    // (return value not 0: CUDA_ERROR_NOT_READY) or any record of a query call (cudaStreamQuery, ...).
    uint64_t syncNotWaits = 0;
    // Noisy API calls counted instead of written, by function name (cudaGetDevice, ...).
    std::map<std::string, uint64_t, std::less<>> countedApis;

    uint64_t records() const {
        return kernels + memcpys + memsets + syncs + runtimeApis + driverApis + devices + externalCorrelations
            + memories;
    }
    DecodeStats& operator+=(const DecodeStats& other);
    bool operator==(const DecodeStats&) const = default;
};

// Decodes the completed buffers of one pass into `sink` and adds what happened to `stats`.
// Synchronisation records are held back to the end of the pass (finish), so that those of query calls,
// whose API records may come later in the pass, are recognised and left out.
class ActivityDecoder {
public:
    ActivityDecoder(const DecodeOptions& options, ActivitySink& sink, DecodeStats& stats)
        : m_options(options)
        , m_sink(sink)
        , m_stats(stats) { }
    ActivityDecoder(const ActivityDecoder&) = delete;
    ActivityDecoder& operator=(const ActivityDecoder&) = delete;

    void decode(uint8_t* buffer, size_t validSize, const RecordWalker& walker);
    // Writes the synchronisation records held back; call after the pass's last buffer.
    void finish();

    // One record of `size` bytes (the distance to the next record: what this CUPTI's record holds).
    void record(const CUpti_Activity* record, size_t size);

private:
    const DecodeOptions& m_options;
    ActivitySink& m_sink;
    DecodeStats& m_stats;
    std::vector<SyncRecord> m_syncs;
    std::unordered_set<uint32_t> m_queryCorrelations;
};

// One buffer, decoded and finished.
void decodeActivityBuffer(uint8_t* buffer, size_t validSize, const RecordWalker& walker, const DecodeOptions& options,
    ActivitySink& sink, DecodeStats& stats);

// Where a record of `kind` holds a pointer to a string the decoder reads (a kernel's or a device's name):
// its offset in the record; 0 when it holds none. A buffer written to a file carries the strings.
size_t stringFieldOffset(CUpti_ActivityKind kind);

// "cudaLaunchKernel_v7000" -> "cudaLaunchKernel": drops CUPTI's "_v<CUDA version>" tag (4+ digits),
// keeps real suffixes such as cuMemcpyHtoD_v2 or _ptsz.
std::string_view apiDisplayName(std::string_view cuptiName);

} // namespace tuneup::agent
