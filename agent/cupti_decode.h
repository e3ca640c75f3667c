#pragma once
// Decodes CUPTI activity buffers into the agent's GPU records. A pure function of the buffer: no
// CUPTI calls except through the RecordWalker, so tests decode buffers built from the real CUPTI
// record structs without a GPU.

#include "gpu_records.h"

#include <cstddef>
#include <cstdint>
#include <cupti_activity.h>
#include <functional>
#include <string_view>

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

// Name of a runtime or driver API call (schema::ApiKind, CUPTI callback id); empty when unknown.
// The view must stay valid while the decoder runs.
using ApiNameLookup = std::function<std::string_view(int api, uint32_t cbid)>;

struct DecodeOptions {
    ApiNameLookup apiName;
    // Subtracted from every timestamp: CUPTI's clock minus CLOCK_MONOTONIC, when CUPTI could not
    // be given our clock (0 when it was).
    int64_t clockOffsetNs = 0;
};

// What the decoder did, summed over buffers.
struct DecodeStats {
    uint64_t buffers = 0;
    // Records handed to the sink, by kind.
    uint64_t kernels = 0, memcpys = 0, memsets = 0, syncs = 0, runtimeApis = 0, driverApis = 0, devices = 0;
    uint64_t externalCorrelations = 0;
    uint64_t unknownKind = 0; // kinds the agent does not decode: skipped
    uint64_t noTimestamp = 0; // start == end == 0 (CUPTI had no timing): not written
    uint64_t endBeforeStart = 0; // written with end = start, so durations are never negative
    uint64_t invalidBuffers = 0; // walks stopped by a record CUPTI could not read: the rest is lost

    uint64_t records() const {
        return kernels + memcpys + memsets + syncs + runtimeApis + driverApis + devices + externalCorrelations;
    }
    DecodeStats& operator+=(const DecodeStats& other);
    bool operator==(const DecodeStats&) const = default;
};

// Decodes the records of one completed buffer into `sink` and adds what happened to `stats`.
void decodeActivityBuffer(uint8_t* buffer, size_t validSize, const RecordWalker& walker, const DecodeOptions& options,
    ActivitySink& sink, DecodeStats& stats);

// "cudaLaunchKernel_v7000" -> "cudaLaunchKernel": drops CUPTI's "_v<CUDA version>" tag (4+ digits),
// keeps real suffixes such as cuMemcpyHtoD_v2 or _ptsz.
std::string_view apiDisplayName(std::string_view cuptiName);

} // namespace tuneup::agent
