#pragma once
// TraceModel: one trace file in memory, as columns (one std::vector per field) per event kind.
// Every importer fills it through TraceBuilder, so a rule reads the same tables whatever the source
// format. Times are int64 nanoseconds on the recording's clock; tables are sorted by start time.
//
// Columns are public vectors: `model.kernels.startNs[i]`, `model.str(model.kernels.name[i])`.
// `model.kernels.row(i)` gathers one row into a struct when that reads better.

#include "model/string_table.h"

#include <atomic>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

namespace tuneup::analysis {

using ThreadIndex = uint32_t; // row in TraceModel::threads
using RowIndex = int32_t; // row in another table, kNoRow when there is none
inline constexpr RowIndex kNoRow = -1;

// Memory kinds and copy kinds use CUPTI's numbering, as the tuneup schema does (schema.sql).
enum class CopyKind : uint8_t {
    Unknown = 0,
    HtoD = 1,
    DtoH = 2,
    HtoA = 3,
    AtoH = 4,
    AtoA = 5,
    AtoD = 6,
    DtoA = 7,
    DtoD = 8,
    HtoH = 9,
    PtoP = 10
};
enum class MemoryKind : uint8_t {
    Unknown = 0,
    Pageable = 1,
    Pinned = 2,
    Device = 3,
    Array = 4,
    Managed = 5,
    DeviceStatic = 6,
    ManagedStatic = 7
};
enum class SyncType : uint8_t {
    Unknown = 0,
    EventSynchronize = 1,
    StreamWaitEvent = 2,
    StreamSynchronize = 3,
    ContextSynchronize = 4
};
enum class ApiKind : uint8_t { Runtime = 1, Driver = 2 };
enum class CollectiveOrigin : uint8_t { CpuOp = 1, Kernel = 2 }; // which table CollectiveTable::row points into

std::string_view copyKindName(CopyKind k); // "HtoD"
std::string_view memoryKindName(MemoryKind k); // "pageable"
std::string_view syncTypeName(SyncType t); // "stream_synchronize"

// ---- tables -------------------------------------------------------------------------------------
// TUNEUP_TABLE(Table, Row, COLUMNS) declares `struct Row` (one field per column, with its default)
// and `struct Table` (one vector per column, plus size(), append(Row), row(i) and forEachColumn(f)).
// The macro's own names end in `_`, so columns may be called n, r, c, i...
#define TUNEUP_ROW_FIELD(type, name, init) type name = init;
#define TUNEUP_COLUMN(type, name, init) std::vector<type> name;
#define TUNEUP_APPEND(type, name, init) name.push_back(row_.name);
#define TUNEUP_GET(type, name, init) row_.name = name[index_];
#define TUNEUP_VISIT(type, name, init) visit_(name);
#define TUNEUP_TABLE(Table, Row, COLUMNS)                                                                              \
    struct Row {                                                                                                       \
        COLUMNS(TUNEUP_ROW_FIELD)                                                                                      \
    };                                                                                                                 \
    struct Table {                                                                                                     \
        using RowType = Row;                                                                                           \
        COLUMNS(TUNEUP_COLUMN)                                                                                         \
        size_t size() const { return m_rows; }                                                                         \
        bool empty() const { return m_rows == 0; }                                                                     \
        void append(const Row& row_) {                                                                                 \
            COLUMNS(TUNEUP_APPEND)                                                                                     \
            ++m_rows;                                                                                                  \
        }                                                                                                              \
        Row row(size_t index_) const {                                                                                 \
            Row row_;                                                                                                  \
            COLUMNS(TUNEUP_GET)                                                                                        \
            return row_;                                                                                               \
        }                                                                                                              \
        template <class F> void forEachColumn(F&& visit_) { COLUMNS(TUNEUP_VISIT) }                                    \
        template <class F> void forEachColumn(F&& visit_) const { COLUMNS(TUNEUP_VISIT) }                              \
        void reserve(size_t rows_) {                                                                                   \
            forEachColumn([rows_](auto& c_) { c_.reserve(rows_); });                                                   \
        }                                                                                                              \
        /* Keeps the rows that `rows_` names, in its order: a sort, or rows left out. */                               \
        template <class Index> void select(const std::vector<Index>& rows_) {                                          \
            forEachColumn([&rows_](auto& c_) {                                                                         \
                std::remove_reference_t<decltype(c_)> kept_;                                                           \
                kept_.reserve(rows_.size());                                                                           \
                for (Index i_ : rows_)                                                                                 \
                    kept_.push_back(c_[i_]);                                                                           \
                c_.swap(kept_);                                                                                        \
            });                                                                                                        \
            m_rows = rows_.size();                                                                                     \
        }                                                                                                              \
                                                                                                                       \
    private:                                                                                                           \
        size_t m_rows = 0;                                                                                             \
    };

// GPU kernels.
#define TUNEUP_KERNEL_COLUMNS(X)                                                                                       \
    X(int64_t, startNs, 0)                                                                                             \
    X(int64_t, endNs, 0)                                                                                               \
    X(int32_t, device, -1)                                                                                             \
    X(int32_t, stream, -1)                                                                                             \
    X(uint64_t, correlation, 0) /* joins ApiCallTable::correlation; 0 = unknown */                                     \
    X(uint64_t, externalId, 0) /* Kineto "External id": the CPU op that launched it; 0 = unknown */                    \
    X(StringId, name, 0) /* as recorded (demangled by Kineto) */                                                       \
    X(int32_t, gridX, 0)                                                                                               \
    X(int32_t, gridY, 0)                                                                                               \
    X(int32_t, gridZ, 0)                                                                                               \
    X(int32_t, blockX, 0)                                                                                              \
    X(int32_t, blockY, 0)                                                                                              \
    X(int32_t, blockZ, 0)                                                                                              \
    X(int32_t, registersPerThread, 0)                                                                                  \
    X(int32_t, sharedMemoryBytes, 0) /* static + dynamic, per block */                                                 \
    X(uint32_t, graphId, 0) /* the CUDA graph that replayed it (CUPTI graphId, Kineto "graph id"); 0 = none/unknown */ \
    X(RowIndex, apiCall, kNoRow) /* finish(): the launching runtime/driver call (by correlation) */                    \
    X(RowIndex, cpuOp, kNoRow) /* finish(): the CPU op (by externalId, else via apiCall) */
TUNEUP_TABLE(KernelTable, Kernel, TUNEUP_KERNEL_COLUMNS)

// Memory copies.
#define TUNEUP_MEMCPY_COLUMNS(X)                                                                                       \
    X(int64_t, startNs, 0)                                                                                             \
    X(int64_t, endNs, 0)                                                                                               \
    X(int32_t, device, -1)                                                                                             \
    X(int32_t, stream, -1)                                                                                             \
    X(uint64_t, correlation, 0)                                                                                        \
    X(uint64_t, externalId, 0)                                                                                         \
    X(int64_t, bytes, -1) /* -1 when the trace does not say (AMD) */                                                   \
    X(CopyKind, copyKind, CopyKind::Unknown)                                                                           \
    X(MemoryKind, srcKind, MemoryKind::Unknown) /* Pageable = host memory that is not pinned */                        \
    X(MemoryKind, dstKind, MemoryKind::Unknown)                                                                        \
    X(RowIndex, apiCall, kNoRow)                                                                                       \
    X(RowIndex, cpuOp, kNoRow)
TUNEUP_TABLE(MemcpyTable, Memcpy, TUNEUP_MEMCPY_COLUMNS)

// Memory sets.
#define TUNEUP_MEMSET_COLUMNS(X)                                                                                       \
    X(int64_t, startNs, 0)                                                                                             \
    X(int64_t, endNs, 0)                                                                                               \
    X(int32_t, device, -1)                                                                                             \
    X(int32_t, stream, -1)                                                                                             \
    X(uint64_t, correlation, 0)                                                                                        \
    X(uint64_t, externalId, 0)                                                                                         \
    X(int64_t, bytes, -1)                                                                                              \
    X(MemoryKind, memoryKind, MemoryKind::Unknown)                                                                     \
    X(RowIndex, apiCall, kNoRow)                                                                                       \
    X(RowIndex, cpuOp, kNoRow)
TUNEUP_TABLE(MemsetTable, Memset, TUNEUP_MEMSET_COLUMNS)

// Synchronisation: the host waiting for an event, a stream or the device (CUPTI SYNCHRONIZATION).
#define TUNEUP_SYNC_COLUMNS(X)                                                                                         \
    X(int64_t, startNs, 0)                                                                                             \
    X(int64_t, endNs, 0)                                                                                               \
    X(int32_t, device, -1)                                                                                             \
    X(int32_t, stream, -1)                                                                                             \
    X(SyncType, type, SyncType::Unknown)                                                                               \
    X(uint64_t, correlation, 0) /* the API call that waited (cudaStreamSynchronize...) */                              \
    X(uint64_t, externalId, 0)                                                                                         \
    X(int64_t, eventId, -1) /* CUDA event waited on, -1 when none */                                                   \
    X(int32_t, waitStream, -1) /* stream the event was recorded on, -1 when none */                                    \
    X(RowIndex, apiCall, kNoRow)                                                                                       \
    X(RowIndex, cpuOp, kNoRow)
TUNEUP_TABLE(SyncTable, Sync, TUNEUP_SYNC_COLUMNS)

// CUDA (or HIP) runtime and driver API calls on CPU threads.
#define TUNEUP_API_CALL_COLUMNS(X)                                                                                     \
    X(int64_t, startNs, 0)                                                                                             \
    X(int64_t, endNs, 0)                                                                                               \
    X(ThreadIndex, thread, 0)                                                                                          \
    X(ApiKind, api, ApiKind::Runtime)                                                                                  \
    X(int32_t, cbid, -1) /* CUPTI callback id, -1 when unknown */                                                      \
    X(StringId, name, 0) /* cudaLaunchKernel, cuLaunchKernel, ... */                                                   \
    X(uint64_t, correlation, 0)                                                                                        \
    X(uint64_t, externalId, 0)                                                                                         \
    X(RowIndex, cpuOp, kNoRow) /* finish(): the op with this externalId, else the innermost op enclosing the call */
TUNEUP_TABLE(ApiCallTable, ApiCall, TUNEUP_API_CALL_COLUMNS)

// Framework operators on CPU threads (aten::mm, autograd nodes, ...).
#define TUNEUP_CPU_OP_COLUMNS(X)                                                                                       \
    X(int64_t, startNs, 0)                                                                                             \
    X(int64_t, endNs, 0)                                                                                               \
    X(ThreadIndex, thread, 0)                                                                                          \
    X(StringId, name, 0)                                                                                               \
    X(uint64_t, externalId, 0)                                                                                         \
    X(int64_t, sequenceNumber, -1) /* autograd sequence number, links forward and backward ops */                      \
    X(StringId, inputDims, 0) /* compact JSON, e.g. "[[2048,125],[125,320]]"; see parseInputDims */                    \
    X(StringId, inputTypes, 0) /* comma-separated, e.g. "float,float,Scalar" */                                        \
    X(int32_t, depth, 0) /* finish(): nesting depth among CPU ops of its thread */                                     \
    X(RowIndex, parent, kNoRow) /* finish(): the enclosing CPU op on the same thread */
TUNEUP_TABLE(CpuOpTable, CpuOp, TUNEUP_CPU_OP_COLUMNS)

// User ranges on CPU threads: torch.profiler.record_function (ProfilerStep#N, Optimizer.step#...,
// enumerate(DataLoader)#...__next__), NVTX push/pop ranges.
#define TUNEUP_ANNOTATION_COLUMNS(X)                                                                                   \
    X(int64_t, startNs, 0)                                                                                             \
    X(int64_t, endNs, 0)                                                                                               \
    X(ThreadIndex, thread, 0)                                                                                          \
    X(StringId, name, 0)                                                                                               \
    X(uint64_t, externalId, 0)                                                                                         \
    X(int32_t, depth, 0) /* finish(): nesting depth among the annotations of its thread */                             \
    X(RowIndex, parent, kNoRow) /* finish(): the enclosing annotation */
TUNEUP_TABLE(AnnotationTable, Annotation, TUNEUP_ANNOTATION_COLUMNS)

// User ranges projected onto a GPU stream (Kineto gpu_user_annotation): the GPU time of a range.
#define TUNEUP_GPU_ANNOTATION_COLUMNS(X)                                                                               \
    X(int64_t, startNs, 0)                                                                                             \
    X(int64_t, endNs, 0)                                                                                               \
    X(int32_t, device, -1)                                                                                             \
    X(int32_t, stream, -1)                                                                                             \
    X(StringId, name, 0)                                                                                               \
    X(uint64_t, externalId, 0)
TUNEUP_TABLE(GpuAnnotationTable, GpuAnnotation, TUNEUP_GPU_ANNOTATION_COLUMNS)

// Collective communication: one row per record_param_comms op (origin CpuOp) and one per NCCL/RCCL
// kernel (origin Kernel). Sizes are -1 when the trace does not give them.
#define TUNEUP_COLLECTIVE_COLUMNS(X)                                                                                   \
    X(int64_t, startNs, 0)                                                                                             \
    X(int64_t, endNs, 0)                                                                                               \
    X(CollectiveOrigin, origin, CollectiveOrigin::CpuOp)                                                               \
    X(RowIndex, eventRow, kNoRow) /* row in cpuOps or kernels, per origin */                                           \
    X(StringId, name, 0) /* "allreduce", "_allgather_base"...; from the kernel name when no args */                    \
    X(int64_t, inNelems, -1)                                                                                           \
    X(int64_t, outNelems, -1)                                                                                          \
    X(int32_t, elementBytes, 0) /* from dtype, 0 when unknown */                                                       \
    X(int32_t, groupSize, -1)                                                                                          \
    X(StringId, dtype, 0) /* "Float", "BFloat16", ... */                                                               \
    X(StringId, processGroup, 0) /* process group name */                                                              \
    X(StringId, groupRanks, 0) /* e.g. "[0, 1]" */                                                                     \
    X(uint64_t, commsId, 0) /* "Comms Id" when present (64-bit) */
TUNEUP_TABLE(CollectiveTable, Collective, TUNEUP_COLLECTIVE_COLUMNS)

// Flow arrows between two events (Kineto ac2g: CPU launch -> GPU work; fwdbwd: forward -> backward op).
// Endpoints are the trace's raw (pid, tid): a CPU thread, or (device, stream) for GPU rows.
#define TUNEUP_FLOW_COLUMNS(X)                                                                                         \
    X(int64_t, startNs, 0)                                                                                             \
    X(int64_t, endNs, 0)                                                                                               \
    X(uint64_t, id, 0)                                                                                                 \
    X(StringId, category, 0) /* "ac2g", "fwdbwd", "async" (2020 traces) */                                             \
    X(int64_t, startPid, 0)                                                                                            \
    X(int64_t, startTid, 0)                                                                                            \
    X(int64_t, endPid, 0)                                                                                              \
    X(int64_t, endTid, 0)
TUNEUP_TABLE(FlowTable, Flow, TUNEUP_FLOW_COLUMNS)

// CUPTI range-profiler results (Kineto cuda_profiler_range): one range per profiled kernel, its
// counter values in CounterValueTable.
#define TUNEUP_COUNTER_RANGE_COLUMNS(X)                                                                                \
    X(int64_t, startNs, 0)                                                                                             \
    X(int64_t, endNs, 0)                                                                                               \
    X(int32_t, device, -1)                                                                                             \
    X(StringId, name, 0) /* the kernel's name */
TUNEUP_TABLE(CounterRangeTable, CounterRange, TUNEUP_COUNTER_RANGE_COLUMNS)

#define TUNEUP_COUNTER_VALUE_COLUMNS(X)                                                                                \
    X(RowIndex, range, kNoRow) /* row in counterRanges */                                                              \
    X(StringId, metric, 0) /* e.g. "smsp__sass_thread_inst_executed_op_ffma_pred_on.sum" */                            \
    X(double, value, 0.0)
TUNEUP_TABLE(CounterValueTable, CounterValue, TUNEUP_COUNTER_VALUE_COLUMNS)

// Python call frames, named like "torch/autograd/anomaly_mode.py(89): __init__": Kineto's python_function
// events (recorded with with_stack=True), every frame; or, in tuneup recordings (python_calls), the frame of the
// user's code each call the bootstrap watches came from, `call` naming the call ("Tensor.item",
// "torch.autograd.set_detect_anomaly"; 0 in Kineto's). Empty when the trace has neither.
#define TUNEUP_PYTHON_FUNCTION_COLUMNS(X)                                                                              \
    X(int64_t, startNs, 0)                                                                                             \
    X(int64_t, endNs, 0)                                                                                               \
    X(ThreadIndex, thread, 0)                                                                                          \
    X(StringId, name, 0)                                                                                               \
    X(StringId, call, 0)
TUNEUP_TABLE(PythonFunctionTable, PythonFunction, TUNEUP_PYTHON_FUNCTION_COLUMNS)

// The main thread's stack, sampled (tuneup recordings): its Python stack by the bootstrap (python_samples), or,
// for a native program, its native stack by the agent (native_samples, "train.cpp(57): train_step(Net&)"). The
// innermost frame of the user's code at each sample, named as PythonFunction names frames. Samples without a
// user frame have no row. Empty for Kineto and nsys traces.
#define TUNEUP_PYTHON_SAMPLE_COLUMNS(X)                                                                                \
    X(int64_t, timeNs, 0)                                                                                              \
    X(ThreadIndex, thread, 0)                                                                                          \
    X(StringId, frame, 0)
TUNEUP_TABLE(PythonSampleTable, PythonSample, TUNEUP_PYTHON_SAMPLE_COLUMNS)

// Framework settings over time, read from the process by the agent's torch probes: one row per
// observation, in time order. Names: "cudnn.benchmark", "cudnn.deterministic", "tf32.cublas",
// "tf32.cudnn", "autograd.anomaly", "autocast.enabled", "profiler.enabled"; value 1 (on) or 0 (off)
// for booleans, -1 when the probe could not read it. Empty when the trace does not record them (Kineto
// and nsys traces never do): rules must then say "not evaluated", never assume a default.
#define TUNEUP_FRAMEWORK_FLAG_COLUMNS(X)                                                                               \
    X(int64_t, timeNs, 0)                                                                                              \
    X(StringId, name, 0)                                                                                               \
    X(int64_t, value, -1) /* -1 = unknown */
TUNEUP_TABLE(FrameworkFlagTable, FrameworkFlag, TUNEUP_FRAMEWORK_FLAG_COLUMNS)

// Facts about the program the agent's Python bootstrap recorded (marks with an integer payload in
// the NVTX domain "tuneup", docs/agent.md): "tuneup.dataloader.num_workers", "….pin_memory",
// "….persistent_workers", "tuneup.zero_grad.set_to_none", "tuneup.wrap.data_parallel", … One row per
// change, in time order. Empty for traces without the bootstrap.
#define TUNEUP_PROGRAM_FACT_COLUMNS(X)                                                                                 \
    X(int64_t, timeNs, 0)                                                                                              \
    X(StringId, name, 0)                                                                                               \
    X(int64_t, value, 0)
TUNEUP_TABLE(ProgramFactTable, ProgramFact, TUNEUP_PROGRAM_FACT_COLUMNS)

// The scheduler state of a thread over time, sampled by the agent (tuneup files, schema 2: the main
// thread, every 10 ms, one row per change): each row holds until the next one of its thread. state is
// /proc's letter ('R' running, 'S' sleeping, 'D' uninterruptible...); syscall the system call it was
// blocked in, numbered for the recording machine (TraceInfo::machine), -1 running in user space, -2
// unknown. Empty for Kineto and nsys traces. See steps/host_state.h.
#define TUNEUP_THREAD_STATE_COLUMNS(X)                                                                                 \
    X(int64_t, timeNs, 0)                                                                                              \
    X(ThreadIndex, thread, 0)                                                                                          \
    X(char, state, '?')                                                                                                \
    X(int32_t, syscall, -2)
TUNEUP_TABLE(ThreadStateTable, ThreadState, TUNEUP_THREAD_STATE_COLUMNS)

// GEMM calls the agent's cuBLAS / cuBLASLt interposers recorded (tuneup files, schema 3): the outermost
// call on its thread, its shape as the library sees it (column-major: op(A) is m x k, op(B) k x n, C m x n),
// cudaDataType codes for the types, a cublasComputeType_t for computeType; -1 when unknown. status 0 is
// success (a failed call launched nothing). The kernels a call launched: advise/library_kernels.h. Empty
// for traces recorded without the interposers (Kineto, nsys).
enum class GemmApi : uint8_t { Cublas = 1, CublasLt = 2 };
#define TUNEUP_GEMM_CALL_COLUMNS(X)                                                                                    \
    X(int64_t, startNs, 0)                                                                                             \
    X(int64_t, endNs, 0)                                                                                               \
    X(ThreadIndex, thread, 0)                                                                                          \
    X(GemmApi, api, GemmApi::Cublas)                                                                                   \
    X(StringId, name, 0) /* the function: cublasGemmEx, cublasLtMatmul, ... */                                         \
    X(int8_t, transa, -1) /* 0 N, 1 T, 2 C */                                                                          \
    X(int8_t, transb, -1)                                                                                              \
    X(int64_t, m, -1)                                                                                                  \
    X(int64_t, n, -1)                                                                                                  \
    X(int64_t, k, -1)                                                                                                  \
    X(int64_t, batch, 1)                                                                                               \
    X(int32_t, aType, -1)                                                                                              \
    X(int32_t, bType, -1)                                                                                              \
    X(int32_t, cType, -1)                                                                                              \
    X(int32_t, computeType, -1)                                                                                        \
    X(int64_t, lda, -1)                                                                                                \
    X(int64_t, ldb, -1)                                                                                                \
    X(int64_t, ldc, -1)                                                                                                \
    X(int64_t, strideA, -1) /* strided batched calls only */                                                           \
    X(int64_t, strideB, -1)                                                                                            \
    X(int64_t, strideC, -1)                                                                                            \
    X(int32_t, epilogue, -1) /* cuBLASLt only (cublasLtEpilogue_t) */                                                  \
    X(uint64_t, externalId, 0) /* pushed to CUPTI around the call; 0 none (ExternalCorrelationTable) */                \
    X(int32_t, status, 0)
TUNEUP_TABLE(GemmCallTable, GemmCall, TUNEUP_GEMM_CALL_COLUMNS)

// Convolution calls the agent's cuDNN interposers recorded (tuneup files, schema 3). kind: Run (a
// convolution ran: cudnnConvolution*, cudnnBackendExecute), Find (cuDNN timed the algorithms: the
// autotuner's search), Heuristic (cuDNN's heuristics were asked). algoSource: how a run's algorithm was
// chosen as far as that call tells (legacy runs pass theirs: Given; backend plans built from heuristics
// results: Heuristic). Shapes: input x (dx for backward data) n, c, [d,] h, w; filter k, filterC (per
// group), [t,] r, s; d, t and the D fields are -1 for 2-D convolutions, every field -1 when unknown.
enum class ConvApi : uint8_t { Legacy = 1, Backend = 2 };
enum class ConvCallKind : uint8_t { Run = 1, Find = 2, Heuristic = 3 };
enum class ConvDirection : uint8_t { Unknown = 0, Forward = 1, BackwardData = 2, BackwardFilter = 3 };
enum class AlgoSource : uint8_t { Unknown = 0, Find = 1, Heuristic = 2, Given = 3 };
enum class TensorLayout : int8_t { Unknown = -1, Other = 0, Nchw = 1, Nhwc = 2 };
#define TUNEUP_CONV_CALL_COLUMNS(X)                                                                                    \
    X(int64_t, startNs, 0)                                                                                             \
    X(int64_t, endNs, 0)                                                                                               \
    X(ThreadIndex, thread, 0)                                                                                          \
    X(ConvApi, api, ConvApi::Legacy)                                                                                   \
    X(StringId, name, 0)                                                                                               \
    X(ConvCallKind, kind, ConvCallKind::Run)                                                                           \
    X(ConvDirection, direction, ConvDirection::Unknown)                                                                \
    X(int32_t, n, -1)                                                                                                  \
    X(int32_t, c, -1)                                                                                                  \
    X(int32_t, d, -1)                                                                                                  \
    X(int32_t, h, -1)                                                                                                  \
    X(int32_t, w, -1)                                                                                                  \
    X(int32_t, k, -1)                                                                                                  \
    X(int32_t, filterC, -1)                                                                                            \
    X(int32_t, t, -1)                                                                                                  \
    X(int32_t, r, -1)                                                                                                  \
    X(int32_t, s, -1)                                                                                                  \
    X(int32_t, padD, -1)                                                                                               \
    X(int32_t, padH, -1)                                                                                               \
    X(int32_t, padW, -1)                                                                                               \
    X(int32_t, strideD, -1)                                                                                            \
    X(int32_t, strideH, -1)                                                                                            \
    X(int32_t, strideW, -1)                                                                                            \
    X(int32_t, dilationD, -1)                                                                                          \
    X(int32_t, dilationH, -1)                                                                                          \
    X(int32_t, dilationW, -1)                                                                                          \
    X(int32_t, groups, -1)                                                                                             \
    X(int32_t, dataType, -1) /* cudnnDataType_t of the input */                                                        \
    X(int32_t, computeType, -1)                                                                                        \
    X(int32_t, mathType, -1) /* legacy cudnnMathType_t */                                                              \
    X(TensorLayout, layout, TensorLayout::Unknown)                                                                     \
    X(int64_t, algo, -1) /* legacy algorithm, or the backend engine's global index; -1 unknown */                      \
    X(AlgoSource, algoSource, AlgoSource::Unknown)                                                                     \
    X(uint64_t, planId, 0) /* backend: the execution plan, numbered per file; 0 legacy */                              \
    X(uint64_t, externalId, 0)                                                                                         \
    X(int32_t, status, 0)
TUNEUP_TABLE(ConvCallTable, ConvCall, TUNEUP_CONV_CALL_COLUMNS)

// CUPTI's external correlations of the ids the agent pushed around its library calls: the CUDA call
// `correlation` (ApiCallTable::correlation, KernelTable::correlation) ran inside the GemmCall or ConvCall
// whose externalId is `externalId`. Empty without GPU capture.
#define TUNEUP_EXTERNAL_CORRELATION_COLUMNS(X)                                                                         \
    X(uint64_t, correlation, 0)                                                                                        \
    X(uint64_t, externalId, 0)
TUNEUP_TABLE(ExternalCorrelationTable, ExternalCorrelation, TUNEUP_EXTERNAL_CORRELATION_COLUMNS)

// Memory observations: one row per allocation or free the trace recorded, in time order (Kineto's
// "[memory]" instant events with profile_memory=True; nsys's CUDA_GPU_MEMORY_USAGE_EVENTS). device is
// the GPU, or kHostMemory for host memory. allocatedBytes and reservedBytes are the allocator's totals
// after the event (PyTorch's caching allocator: memory in tensors, and memory it holds from the driver),
// -1 when the trace does not give them; deltaBytes is the change itself (negative for a free) in the
// total deltaOf names. Older PyTorch traces and nsys give deltas only: what was allocated before the
// trace began is then unknown (steps/memory_peak.h). Empty when the trace records no memory events.
enum class MemoryTotal : uint8_t {
    Allocated = 1, // a tensor's memory from the caching allocator (Kineto "Bytes")
    Reserved = 2, // memory taken from or given back to the driver (cudaMalloc/cudaFree: nsys)
};
inline constexpr int32_t kHostMemory = -1;
inline constexpr ThreadIndex kNoThread = UINT32_MAX; // the trace names no thread (nsys: a process)
#define TUNEUP_MEMORY_EVENT_COLUMNS(X)                                                                                 \
    X(int64_t, timeNs, 0)                                                                                              \
    X(int32_t, device, kHostMemory)                                                                                    \
    X(int64_t, allocatedBytes, -1)                                                                                     \
    X(int64_t, reservedBytes, -1)                                                                                      \
    X(int64_t, deltaBytes, 0)                                                                                          \
    X(MemoryTotal, deltaOf, MemoryTotal::Allocated)                                                                    \
    X(uint64_t, address, 0) /* 0 = unknown */                                                                          \
    X(ThreadIndex, thread, kNoThread)
TUNEUP_TABLE(MemoryEventTable, MemoryEvent, TUNEUP_MEMORY_EVENT_COLUMNS)

// The caching allocator's peaks, each over a window of time (tuneup recordings: the Python bootstrap reads
// torch.cuda.max_memory_allocated/max_memory_reserved after each optimizer step, then resets them): the highest
// level each total reached somewhere in [startNs, endNs], not a level at one instant; -1 when not read.
#define TUNEUP_MEMORY_PEAK_COLUMNS(X)                                                                                  \
    X(int64_t, startNs, 0)                                                                                             \
    X(int64_t, endNs, 0) /* when it was read */                                                                        \
    X(int32_t, device, 0)                                                                                              \
    X(int64_t, allocatedBytes, -1)                                                                                     \
    X(int64_t, reservedBytes, -1)                                                                                      \
    X(ThreadIndex, thread, kNoThread)
TUNEUP_TABLE(MemoryPeakTable, MemoryPeak, TUNEUP_MEMORY_PEAK_COLUMNS)

// ---- facts about the recording -------------------------------------------------------------------

enum class SourceFormat : uint8_t { Unknown, KinetoJson, TuneupDb, NsysSqlite };
enum class GpuVendor : uint8_t { Unknown, Nvidia, Amd };
std::string_view sourceFormatName(SourceFormat f); // "kineto-json"
std::string_view gpuVendorName(GpuVendor v); // "nvidia"

struct DeviceInfo {
    int32_t id = 0;
    std::string name;
    int computeMajor = 0, computeMinor = 0; // 0 when unknown
    int smCount = 0;
    int64_t globalMemoryBytes = 0;
    int warpSize = 0;
    GpuVendor vendor = GpuVendor::Unknown;
};

struct ProcessInfo {
    int64_t pid = 0;
    std::string name; // "python3.10"
    std::string labels; // Kineto process_labels: "CPU", "GPU 0"
};

struct ThreadInfo {
    int64_t pid = 0;
    int64_t tid = 0;
    StringId name = 0;
};

// No event lies kMaxTimeNs (2^62 ns, 146 years) or more from its clock's origin: TraceBuilder::finish()
// drops rows with such a time and counts them, so that the difference of any two times fits in int64.
inline constexpr int64_t kMaxTimeNs = int64_t(1) << 62;
inline bool isPlausibleTime(int64_t ns) {
    return ns > -kMaxTimeNs && ns < kMaxTimeNs;
}

struct TimeSpan {
    int64_t startNs = 0;
    int64_t endNs = 0;
    int64_t durationNs() const { return endNs - startNs; }
};

struct TraceInfo {
    SourceFormat format = SourceFormat::Unknown;
    std::string path;
    GpuVendor vendor = GpuVendor::Unknown;
    // distributedInfo (Kineto) or RANK/WORLD_SIZE (tuneup); unset when the trace does not say.
    std::optional<int> rank, worldSize;
    std::string backend; // "nccl"
    std::optional<int> schemaVersion;
    std::optional<int64_t> baseTimeNs; // Kineto baseTimeNanoseconds, already added to every time
    std::string displayTimeUnit; // a display hint only: Kineto "ts" is always microseconds
    std::string traceName;
    std::string machine; // the recording machine's architecture (uname -m: "x86_64", "aarch64"); "" unknown
    bool legacyArrayForm = false; // the file was a bare JSON array of events (2020 Kineto)
    std::vector<TimeSpan> profilerWindows; // the profiler's own spans (Kineto "Trace" events)
    // Other top-level scalars ("cuda_runtime_version", "host_name", "distributedInfo.nccl_version"...).
    std::vector<std::pair<std::string, std::string>> metadata;
    std::string metadataValue(std::string_view key) const; // "" when absent
};

enum class StatSeverity : uint8_t { Info, DataLoss, Error };

/** A named counter about the import: what was read, skipped, or not understood, and why. */
struct ImportStat {
    std::string name;
    StatSeverity severity = StatSeverity::Info;
    int64_t value = 0;
    std::string description;
};

class ImportStats {
public:
    void add(std::string_view name, StatSeverity severity, int64_t delta, std::string_view description);
    int64_t value(std::string_view name) const; // 0 when absent
    const std::vector<ImportStat>& entries() const { return m_entries; }

    uint64_t bytesRead = 0; // of the uncompressed stream
    uint64_t eventsRead = 0; // every event object in the file, modelled or not
    double seconds = 0; // wall time of the import
    std::map<std::string, int64_t> unknownCategories; // category -> events, when not understood
    std::vector<std::string> notes; // facts a user should read ("no kernel activity, only counter ranges")

private:
    std::vector<ImportStat> m_entries;
};

// ---- the model --------------------------------------------------------------------------------------

class TraceModel {
public:
    TraceModel() = default;
    TraceModel(TraceModel&&) noexcept = default;
    TraceModel& operator=(TraceModel&&) noexcept = default;

    TraceInfo info;
    ImportStats stats;
    StringTable strings;
    std::vector<DeviceInfo> devices;
    std::vector<ProcessInfo> processes;
    std::vector<ThreadInfo> threads; // CPU threads, indexed by ThreadIndex

    KernelTable kernels;
    MemcpyTable memcpys;
    MemsetTable memsets;
    SyncTable syncs;
    ApiCallTable apiCalls;
    CpuOpTable cpuOps;
    AnnotationTable annotations;
    GpuAnnotationTable gpuAnnotations;
    CollectiveTable collectives;
    FlowTable flows;
    CounterRangeTable counterRanges;
    CounterValueTable counterValues;
    PythonFunctionTable pythonFunctions;
    PythonSampleTable pythonSamples;
    FrameworkFlagTable frameworkFlags;
    ProgramFactTable programFacts;
    ThreadStateTable threadStates;
    GemmCallTable gemmCalls;
    ConvCallTable convCalls;
    ExternalCorrelationTable externalCorrelations;
    MemoryEventTable memoryEvents;
    MemoryPeakTable memoryPeaks;

    std::string_view str(StringId id) const { return strings.get(id); }
    const DeviceInfo* device(int32_t id) const; // nullptr when the trace did not describe it

    // Lookups built by TraceBuilder::finish().
    std::optional<RowIndex> kernelByCorrelation(uint64_t correlation) const;
    std::optional<RowIndex> apiCallByCorrelation(uint64_t correlation) const;
    std::optional<RowIndex> cpuOpByExternalId(uint64_t externalId) const;

    bool hasGpuActivity() const; // kernels, copies, sets or GPU annotations
    size_t eventCount() const; // rows over all event tables
    std::optional<TimeSpan> span() const; // earliest start .. latest end over all event tables
    // Unique per model in this process, never reused (a moved-from model gets a new one): a cache key
    // that, unlike the model's address, cannot match a later model.
    uint64_t instanceId() const { return m_instance.id; }

private:
    friend class TraceBuilder;
    struct InstanceId {
        static uint64_t next() {
            static std::atomic<uint64_t> counter { 0 };
            return ++counter;
        }
        uint64_t id = next();
        InstanceId() = default;
        InstanceId(InstanceId&& o) noexcept
            : id(o.id) {
            o.id = next();
        }
        InstanceId& operator=(InstanceId&& o) noexcept {
            id = o.id;
            o.id = next();
            return *this;
        }
    };
    InstanceId m_instance;
    // Lookups by a key column: the rows whose key is not 0, ordered by (key, row). Rows only, 4 bytes
    // each, the key read from its column (a million kernels: 4 MB, not 16 MB of (key, row) pairs).
    using KeyIndex = std::vector<RowIndex>;
    static KeyIndex buildKeyIndex(const std::vector<uint64_t>& keys);
    static RowIndex findByKey(const KeyIndex& index, const std::vector<uint64_t>& keys, uint64_t key); // first row
    KeyIndex m_kernelByCorrelation, m_apiCallByCorrelation, m_cpuOpByExternalId;
};

// ---- helpers for reading columns -------------------------------------------------------------------

// Parses a CpuOp inputDims string: one entry per input, each the tensor's sizes; inputs that are not
// a flat list of integers (scalars, tensor lists) come back empty. "[[2,3],[],[3]]" -> {{2,3},{},{3}}.
std::vector<std::vector<int64_t>> parseInputDims(std::string_view dims);
// Splits a CpuOp inputTypes string at commas: "float,float,Scalar" -> {"float","float","Scalar"}.
std::vector<std::string_view> splitInputTypes(std::string_view types);
// Bytes per element of a torch dtype name as Kineto writes it ("Float" 4, "BFloat16" 2), 0 when unknown.
int dtypeBytes(std::string_view dtype);

} // namespace tuneup::analysis
