-- tuneup trace schema (version: kSchemaVersion in trace_schema.h): the contract between the agent (writer), the analyzer and the GUI.
-- One file holds one process. Times are integer nanoseconds on the recording host's CLOCK_MONOTONIC;
-- meta rows clock.realtime_ns and clock.monotonic_ns are one pair read together, to convert to wall time.
-- Ids (kernels.id, nvtx_ranges.id, ...) are stable within a file: reports and the GUI refer to events by (table, id).
-- Documented for users in docs/schema.md. Bump kSchemaVersion in trace_schema.h on any change.

-- Key/value facts about the recording: format, schema_version, command line, pid, host, rank, world size,
-- what was captured and why anything was not (capture.* keys), versions (cupti.version, cuda.driver_version).
CREATE TABLE meta (
  key   TEXT PRIMARY KEY,
  value TEXT NOT NULL
) WITHOUT ROWID;

-- Interned strings: kernel names, NVTX messages, API names, thread names.
CREATE TABLE strings (
  id    INTEGER PRIMARY KEY,
  value TEXT NOT NULL
);

-- GPUs seen by CUPTI (CUPTI_ACTIVITY_KIND_DEVICE records).
CREATE TABLE devices (
  id                   INTEGER PRIMARY KEY, -- CUDA device ordinal
  name                 TEXT,
  compute_major        INTEGER,
  compute_minor        INTEGER,
  sm_count             INTEGER,
  global_memory_bytes  INTEGER,
  memory_bandwidth_gbs REAL,    -- derived from memory clock and bus width
  core_clock_khz       INTEGER,
  uuid                 TEXT
);

-- Processes (one per file today; the table allows merged files later).
CREATE TABLE processes (
  pid          INTEGER PRIMARY KEY,
  parent_pid   INTEGER,
  role         TEXT,    -- main, rank, forked-child, dataloader-worker, launcher, other
  command_line TEXT,
  start_ns     INTEGER,
  end_ns       INTEGER  -- NULL when the process did not end cleanly (SIGKILL)
);

-- Threads that produced events (tid is the kernel thread id).
CREATE TABLE threads (
  tid     INTEGER PRIMARY KEY,
  pid     INTEGER NOT NULL,
  name_id INTEGER REFERENCES strings(id) -- NULL when unnamed
);

-- GPU kernels (CUPTI CONCURRENT_KERNEL records).
CREATE TABLE kernels (
  id                   INTEGER PRIMARY KEY,
  start_ns             INTEGER NOT NULL,
  end_ns               INTEGER NOT NULL,
  device_id            INTEGER NOT NULL,
  context_id           INTEGER,
  stream_id            INTEGER,
  correlation_id       INTEGER, -- joins api_calls.correlation_id
  name_id              INTEGER NOT NULL REFERENCES strings(id), -- mangled name as CUPTI gives it
  grid_x INTEGER, grid_y INTEGER, grid_z INTEGER,
  block_x INTEGER, block_y INTEGER, block_z INTEGER,
  registers_per_thread INTEGER,
  static_shared_bytes  INTEGER,
  dynamic_shared_bytes INTEGER,
  graph_id             INTEGER  -- CUDA graph id, 0 when not launched from a graph
);

-- Memory copies (CUPTI MEMCPY and MEMCPY2 records). Kinds: see copy_kinds and memory_kinds.
CREATE TABLE memcpys (
  id             INTEGER PRIMARY KEY,
  start_ns       INTEGER NOT NULL,
  end_ns         INTEGER NOT NULL,
  device_id      INTEGER NOT NULL,
  context_id     INTEGER,
  stream_id      INTEGER,
  correlation_id INTEGER,
  copy_kind      INTEGER NOT NULL REFERENCES copy_kinds(code),
  src_kind       INTEGER NOT NULL REFERENCES memory_kinds(code), -- 1 = pageable host memory
  dst_kind       INTEGER NOT NULL REFERENCES memory_kinds(code),
  bytes          INTEGER NOT NULL,
  src_device_id  INTEGER, -- peer copies only
  dst_device_id  INTEGER
);

-- Memory sets (CUPTI MEMSET records).
CREATE TABLE memsets (
  id             INTEGER PRIMARY KEY,
  start_ns       INTEGER NOT NULL,
  end_ns         INTEGER NOT NULL,
  device_id      INTEGER NOT NULL,
  context_id     INTEGER,
  stream_id      INTEGER,
  correlation_id INTEGER,
  bytes          INTEGER NOT NULL,
  value          INTEGER,
  memory_kind    INTEGER REFERENCES memory_kinds(code)
);

-- Synchronisation (CUPTI SYNCHRONIZATION records): host waits on an event, a stream, a context.
CREATE TABLE syncs (
  id             INTEGER PRIMARY KEY,
  start_ns       INTEGER NOT NULL,
  end_ns         INTEGER NOT NULL,
  sync_type      INTEGER NOT NULL REFERENCES sync_types(code),
  context_id     INTEGER,
  stream_id      INTEGER, -- NULL when not a stream wait
  event_id       INTEGER, -- CUDA event id, NULL when not an event wait
  correlation_id INTEGER
);

-- CUDA runtime and driver API calls (CUPTI RUNTIME and DRIVER records).
CREATE TABLE api_calls (
  id             INTEGER PRIMARY KEY,
  start_ns       INTEGER NOT NULL,
  end_ns         INTEGER NOT NULL,
  tid            INTEGER NOT NULL,
  api            INTEGER NOT NULL REFERENCES api_kinds(code), -- 1 runtime, 2 driver
  cbid           INTEGER NOT NULL, -- CUPTI callback id within the api
  name_id        INTEGER NOT NULL REFERENCES strings(id), -- e.g. cudaLaunchKernel
  correlation_id INTEGER,
  return_value   INTEGER
);

-- NVTX domains; id 0 is the default (unnamed) domain.
CREATE TABLE nvtx_domains (
  id      INTEGER PRIMARY KEY,
  name_id INTEGER REFERENCES strings(id) -- NULL for the default domain
);

-- NVTX category names (nvtxNameCategory / nvtxDomainNameCategory).
CREATE TABLE nvtx_categories (
  domain_id INTEGER NOT NULL,
  category  INTEGER NOT NULL,
  name_id   INTEGER NOT NULL REFERENCES strings(id),
  PRIMARY KEY (domain_id, category)
) WITHOUT ROWID;

-- NVTX ranges: push/pop (kind 1, nested per thread, depth 0 = outermost) and start/end (kind 2, may cross threads).
CREATE TABLE nvtx_ranges (
  id           INTEGER PRIMARY KEY,
  start_ns     INTEGER NOT NULL,
  end_ns       INTEGER,          -- NULL when the range was never closed
  tid          INTEGER NOT NULL, -- thread that opened the range
  end_tid      INTEGER,          -- thread that closed it (start/end ranges)
  domain_id    INTEGER NOT NULL REFERENCES nvtx_domains(id),
  name_id      INTEGER REFERENCES strings(id),
  kind         INTEGER NOT NULL, -- 1 push/pop, 2 start/end
  depth        INTEGER,          -- push/pop nesting depth on its thread and domain
  parent_id    INTEGER,          -- enclosing push/pop range on the same thread and domain
  category     INTEGER,
  color        INTEGER,          -- ARGB, NULL when not given
  payload_type INTEGER,          -- nvtxPayloadType_t, NULL when no payload
  payload      NUMERIC
);

-- NVTX marks (instant events).
CREATE TABLE nvtx_marks (
  id           INTEGER PRIMARY KEY,
  ts_ns        INTEGER NOT NULL,
  tid          INTEGER NOT NULL,
  domain_id    INTEGER NOT NULL REFERENCES nvtx_domains(id),
  name_id      INTEGER REFERENCES strings(id),
  category     INTEGER,
  color        INTEGER,
  payload_type INTEGER,
  payload      NUMERIC
);

-- PyTorch settings read from the process by the torch probes (schema 2): one row when a thread first
-- reads them and one per change. value 1 on, 0 off, NULL unknown (this torch lacks the accessor).
-- Names: cudnn.benchmark, cudnn.deterministic, tf32.cublas, tf32.cudnn, autograd.anomaly,
-- autocast.enabled and profiler.enabled (the last two are per thread).
CREATE TABLE framework_flags (
  id      INTEGER PRIMARY KEY,
  ts_ns   INTEGER NOT NULL,
  tid     INTEGER NOT NULL,
  name_id INTEGER NOT NULL REFERENCES strings(id),
  value   INTEGER
);

-- The main thread's scheduler state and system call, sampled by the writer every TUNEUP_SAMPLE_MS
-- (schema 2); one row per change. state: R running, S sleeping, D uninterruptible wait, ...;
-- syscall: the Linux x86-64 system call number it is blocked in, -1 running in user space, NULL unknown.
CREATE TABLE thread_states (
  id      INTEGER PRIMARY KEY,
  ts_ns   INTEGER NOT NULL,
  tid     INTEGER NOT NULL,
  state   TEXT NOT NULL,
  syscall INTEGER
);

-- Calls the Python bootstrap watches (schema 5): DataLoader iteration and construction, zero_grad, the optimizer's
-- step, backward, the calls that typically wait for the GPU or copy (Tensor.item, .cpu, .tolist, .numpy, .to,
-- .cuda, torch.cuda.synchronize) and the debug and profiling APIs (detect_anomaly, set_detect_anomaly, gradcheck,
-- torch.autograd.profiler.*, torch.profiler.profile). Each row is one call with the innermost frame of the user's
-- code it came from (not PyTorch's, the standard library's or an installed package's): file (as Python names it,
-- made absolute), line, function (qualified name on Python 3.11+). call_id names the watched call.
CREATE TABLE python_calls (
  id          INTEGER PRIMARY KEY,
  start_ns    INTEGER NOT NULL,
  end_ns      INTEGER NOT NULL,
  tid         INTEGER NOT NULL,
  call_id     INTEGER REFERENCES strings(id),
  file_id     INTEGER REFERENCES strings(id),
  line        INTEGER,
  function_id INTEGER REFERENCES strings(id)
);

-- The main thread's Python stack, sampled by the bootstrap every TUNEUP_SAMPLE_MS (schema 5): the innermost frame
-- of the user's code at that moment (as python_calls). A sample with no user frame (the interpreter idle, in
-- PyTorch's code only) has no row.
CREATE TABLE python_samples (
  id          INTEGER PRIMARY KEY,
  ts_ns       INTEGER NOT NULL,
  tid         INTEGER NOT NULL,
  file_id     INTEGER REFERENCES strings(id),
  line        INTEGER,
  function_id INTEGER REFERENCES strings(id)
);

-- The main thread's native stack, where the program is not Python (schema 7): sampled by the agent every
-- TUNEUP_SAMPLE_MS of the thread's CPU time (perf_event_open, user space), unwound on the agent's own thread; the
-- innermost frame of the user's code (not the system's, PyTorch's, CUDA's or an installed package's libraries):
-- its module (the binary's path) and address (the ELF virtual address of the instruction, a call's own for a
-- caller), and callers: the addresses of the next frames out in the same module, innermost first ("0x4011a0
-- 0x401234"; NULL: none). file, line and function are filled by `tuneup record` from the binary's debug
-- information after the program ends: the innermost of these frames in the user's sources (a LibTorch header's
-- template compiled into the program is named where the user called it); function alone (from the exported
-- symbols) or none where there is no debug information. A sample with no user frame has no row.
CREATE TABLE native_samples (
  id          INTEGER PRIMARY KEY,
  ts_ns       INTEGER NOT NULL,
  tid         INTEGER NOT NULL,
  module_id   INTEGER NOT NULL REFERENCES strings(id),
  address     INTEGER NOT NULL,
  callers     TEXT,
  file_id     INTEGER REFERENCES strings(id),
  line        INTEGER,
  function_id INTEGER REFERENCES strings(id)
);

-- GPU memory (schema 6): one row per allocation or release CUPTI reported (MEMORY2 records: cudaMalloc, cudaFree,
-- cudaMallocAsync, cudaHostAlloc, ...; under PyTorch's caching allocator, the memory it takes from the driver or
-- gives back), and one per reading of the caching allocator's totals by the Python bootstrap, after each
-- Optimizer.step (torch.cuda.memory_allocated / memory_reserved at that moment: delta_bytes 0). A file made by
-- `tuneup import` also holds another trace's memory events here (Kineto's "[memory]" events: source 3).
CREATE TABLE memory_events (
  id              INTEGER PRIMARY KEY,
  ts_ns           INTEGER NOT NULL,
  device_id       INTEGER NOT NULL, -- CUDA device ordinal; -1 host memory (a pinned host allocation: memory_kind 2)
  source          INTEGER NOT NULL REFERENCES memory_sources(code), -- 1 CUPTI, 2 the caching allocator, 3 imported
  delta_bytes     INTEGER NOT NULL, -- the size allocated, negative for a release; 0 for a reading of the totals
  delta_of        INTEGER NOT NULL REFERENCES memory_totals(code), -- the total it changes: 1 allocated, 2 reserved
  allocated_bytes INTEGER, -- the caching allocator's totals after the event (memory in tensors, memory held from the
  reserved_bytes  INTEGER, -- driver); NULL when not known (CUPTI knows no allocator)
  memory_kind     INTEGER REFERENCES memory_kinds(code), -- CUPTI: 3 device, 2 pinned host, 5 managed, ...
  address         INTEGER, -- NULL when not known
  tid             INTEGER, -- NULL when not known (CUPTI's records name no thread: see correlation_id)
  correlation_id  INTEGER, -- CUPTI: api_calls.correlation_id of the call that allocated or released
  stream_id       INTEGER  -- CUPTI: the stream of a stream-ordered allocation (cudaMallocAsync), else NULL
);

-- The caching allocator's peaks (schema 6), read by the Python bootstrap after each Optimizer.step
-- (torch.cuda.max_memory_allocated / max_memory_reserved, then torch.cuda.reset_peak_memory_stats): the highest
-- level each total reached between start_ns (the previous reset: the bootstrap's, the program's own, or the
-- bootstrap's start) and end_ns. A peak is no level at one instant: it holds somewhere in its window.
CREATE TABLE memory_peaks (
  id              INTEGER PRIMARY KEY,
  start_ns        INTEGER NOT NULL,
  end_ns          INTEGER NOT NULL,
  device_id       INTEGER NOT NULL, -- CUDA device ordinal
  tid             INTEGER,          -- the thread that read it
  allocated_bytes INTEGER,          -- the peak of memory allocated to tensors; NULL when not read
  reserved_bytes  INTEGER           -- the peak of memory the allocator held from the driver; NULL when not read
);

-- GEMM calls seen by the agent's cuBLAS and cuBLASLt interposers (schema 3): the outermost call on its thread
-- only (cuBLAS runs cuBLASLt inside). Dimensions as the library sees them, column-major: op(A) is m x k, op(B)
-- k x n, C m x n (cuBLASLt: m = rows(D), n = cols(D), k from A and transa; C columns describe D).
-- Types are cudaDataType codes (data_types), compute_type cublasComputeType_t (compute_types); NULL when the
-- agent could not tell. status is the cublasStatus_t the call returned (0 = success: failed calls launch nothing).
CREATE TABLE gemm_calls (
  id           INTEGER PRIMARY KEY,
  start_ns     INTEGER NOT NULL,
  end_ns       INTEGER NOT NULL,
  tid          INTEGER NOT NULL,
  api          INTEGER NOT NULL REFERENCES gemm_apis(code), -- 1 cuBLAS, 2 cuBLASLt
  name_id      INTEGER NOT NULL REFERENCES strings(id),     -- the function: cublasGemmEx, cublasLtMatmul, ...
  transa       INTEGER REFERENCES blas_operations(code),    -- 0 N, 1 T, 2 C
  transb       INTEGER REFERENCES blas_operations(code),
  m            INTEGER,
  n            INTEGER,
  k            INTEGER,
  batch        INTEGER NOT NULL, -- 1 when not batched
  a_type       INTEGER REFERENCES data_types(code),
  b_type       INTEGER REFERENCES data_types(code),
  c_type       INTEGER REFERENCES data_types(code),
  compute_type INTEGER REFERENCES compute_types(code),
  lda          INTEGER,
  ldb          INTEGER,
  ldc          INTEGER,
  stride_a     INTEGER, -- elements between the batch's matrices (strided batched calls), else NULL
  stride_b     INTEGER,
  stride_c     INTEGER,
  epilogue     INTEGER REFERENCES epilogues(code), -- cuBLASLt only (cublasLtEpilogue_t)
  external_id  INTEGER, -- pushed to CUPTI around the call (external_correlations); NULL when GPU capture was off
  status       INTEGER NOT NULL
);

-- Convolution calls seen by the agent's cuDNN interposers (schema 3), outermost on their thread. call_kind says
-- what the call did: 1 run (a convolution executed: cudnnConvolution*, cudnnBackendExecute), 2 find (cuDNN timed
-- the algorithms: cudnnFind*), 3 heuristic (cuDNN's heuristics were asked: cudnnGet*_v7, an engine-heuristics
-- descriptor finalized). algo_source: how the run's algorithm was chosen as far as this call tells (runs of the
-- legacy API pass theirs: 3 given; backend plans built from heuristics results: 2 heuristic); find and heuristic
-- rows carry their own kind and their best algorithm. Shapes: input x (dx for backward data), filter
-- (k = output channels, c = input channels per group); d, t and the _d columns are NULL for 2-D convolutions.
CREATE TABLE conv_calls (
  id           INTEGER PRIMARY KEY,
  start_ns     INTEGER NOT NULL,
  end_ns       INTEGER NOT NULL,
  tid          INTEGER NOT NULL,
  api          INTEGER NOT NULL REFERENCES conv_apis(code),      -- 1 legacy, 2 backend (graph) API
  name_id      INTEGER NOT NULL REFERENCES strings(id),
  call_kind    INTEGER NOT NULL REFERENCES conv_call_kinds(code), -- 1 run, 2 find, 3 heuristic
  direction    INTEGER REFERENCES conv_directions(code),          -- 1 forward, 2 backward data, 3 backward filter
  n INTEGER, c INTEGER, d INTEGER, h INTEGER, w INTEGER,            -- input
  k INTEGER, t INTEGER, r INTEGER, s INTEGER,                       -- filter (c per group is filter_c)
  filter_c     INTEGER,
  pad_d INTEGER, pad_h INTEGER, pad_w INTEGER,
  stride_d INTEGER, stride_h INTEGER, stride_w INTEGER,
  dilation_d INTEGER, dilation_h INTEGER, dilation_w INTEGER,
  groups       INTEGER,
  data_type    INTEGER REFERENCES cudnn_data_types(code), -- the input's
  compute_type INTEGER REFERENCES cudnn_data_types(code), -- the convolution's accumulation
  math_type    INTEGER, -- legacy cudnnMathType_t: 0 default, 1 tensor op, 2 tensor op allowing conversion, 3 FMA
  layout       INTEGER REFERENCES tensor_layouts(code),   -- 1 NCHW, 2 NHWC (channels last), 0 other
  algo         INTEGER, -- legacy: cudnnConvolution*Algo_t; backend: the engine's global index; NULL unknown
  algo_source  INTEGER NOT NULL REFERENCES algo_sources(code), -- 0 unknown, 1 find, 2 heuristic, 3 given
  plan_id      INTEGER, -- backend: the execution plan (numbered per file), NULL for the legacy API
  external_id  INTEGER,
  status       INTEGER NOT NULL -- cudnnStatus_t, 0 = success
);

-- CUPTI's external correlation records (schema 3): the id the agent pushed around a library call
-- (gemm_calls.external_id, conv_calls.external_id; kind 5 = CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM2) and the
-- CUDA API call made inside it (correlation_id = api_calls.correlation_id = kernels.correlation_id).
CREATE TABLE external_correlations (
  correlation_id INTEGER NOT NULL,
  kind           INTEGER NOT NULL,
  external_id    INTEGER NOT NULL
);

-- Counters of what was produced, written, dropped or could not be decoded; severity info, data_loss or error.
CREATE TABLE stats (
  name        TEXT PRIMARY KEY,
  severity    TEXT NOT NULL,
  value       INTEGER NOT NULL,
  description TEXT NOT NULL
) WITHOUT ROWID;

-- What each source of events wrote to this file and dropped, per thread (schema 4). source: nvtx, python (the
-- Python bootstrap's ranges, marks, watched calls and stack samples), torch (setting changes), gemm, conv (library calls), cupti (GPU
-- records), host_sampler (thread_states). tid NULL: not tied to one thread. A thread that wrote nothing and
-- dropped nothing has no row. A process that exec()s adds its rows again: sum rows of one (source, tid).
CREATE TABLE event_counts (
  source  TEXT NOT NULL,
  tid     INTEGER,
  written INTEGER NOT NULL,
  dropped INTEGER NOT NULL
);

-- Lookup tables for the codes above (CUPTI's values), so SQL can read names.
CREATE TABLE copy_kinds (code INTEGER PRIMARY KEY, name TEXT NOT NULL);
INSERT INTO copy_kinds VALUES (0,'unknown'),(1,'HtoD'),(2,'DtoH'),(3,'HtoA'),(4,'AtoH'),(5,'AtoA'),(6,'AtoD'),
  (7,'DtoA'),(8,'DtoD'),(9,'HtoH'),(10,'PtoP');
CREATE TABLE memory_kinds (code INTEGER PRIMARY KEY, name TEXT NOT NULL);
INSERT INTO memory_kinds VALUES (0,'unknown'),(1,'pageable'),(2,'pinned'),(3,'device'),(4,'array'),(5,'managed'),
  (6,'device_static'),(7,'managed_static');
CREATE TABLE memory_sources (code INTEGER PRIMARY KEY, name TEXT NOT NULL);
INSERT INTO memory_sources VALUES (1,'cupti'),(2,'caching_allocator'),(3,'imported');
CREATE TABLE memory_totals (code INTEGER PRIMARY KEY, name TEXT NOT NULL);
INSERT INTO memory_totals VALUES (1,'allocated'),(2,'reserved');
CREATE TABLE sync_types (code INTEGER PRIMARY KEY, name TEXT NOT NULL);
INSERT INTO sync_types VALUES (0,'unknown'),(1,'event_synchronize'),(2,'stream_wait_event'),(3,'stream_synchronize'),
  (4,'context_synchronize');
CREATE TABLE api_kinds (code INTEGER PRIMARY KEY, name TEXT NOT NULL);
INSERT INTO api_kinds VALUES (1,'runtime'),(2,'driver');
CREATE TABLE gemm_apis (code INTEGER PRIMARY KEY, name TEXT NOT NULL);
INSERT INTO gemm_apis VALUES (1,'cublas'),(2,'cublaslt');
CREATE TABLE blas_operations (code INTEGER PRIMARY KEY, name TEXT NOT NULL);
INSERT INTO blas_operations VALUES (0,'N'),(1,'T'),(2,'C');
-- cudaDataType (library_types.h)
CREATE TABLE data_types (code INTEGER PRIMARY KEY, name TEXT NOT NULL, bits INTEGER NOT NULL);
INSERT INTO data_types VALUES (0,'fp32',32),(1,'fp64',64),(2,'fp16',16),(3,'int8',8),(4,'complex fp32',64),
  (5,'complex fp64',128),(6,'complex fp16',32),(7,'complex int8',16),(8,'uint8',8),(10,'int32',32),(14,'bf16',16),
  (15,'complex bf16',32),(20,'int16',16),(24,'int64',64),(28,'fp8 e4m3',8),(29,'fp8 e5m2',8),(30,'fp8 ue8m0',8),
  (31,'fp6 e2m3',6),(32,'fp6 e3m2',6),(33,'fp4 e2m1',4);
-- cublasComputeType_t (cublas_api.h)
CREATE TABLE compute_types (code INTEGER PRIMARY KEY, name TEXT NOT NULL);
INSERT INTO compute_types VALUES (64,'16F'),(65,'16F_PEDANTIC'),(68,'32F'),(69,'32F_PEDANTIC'),(74,'32F_FAST_16F'),
  (75,'32F_FAST_16BF'),(77,'32F_FAST_TF32'),(78,'32F_EMULATED_16BFX9'),(70,'64F'),(71,'64F_PEDANTIC'),(72,'32I'),
  (73,'32I_PEDANTIC'),(79,'64F_EMULATED_FIXEDPOINT');
-- cublasLtEpilogue_t (cublasLt.h), the common ones
CREATE TABLE epilogues (code INTEGER PRIMARY KEY, name TEXT NOT NULL);
INSERT INTO epilogues VALUES (1,'default'),(2,'relu'),(4,'bias'),(6,'relu_bias'),(32,'gelu'),(36,'gelu_bias'),
  (130,'relu_aux'),(134,'relu_aux_bias'),(160,'gelu_aux'),(164,'gelu_aux_bias'),(136,'drelu'),(152,'drelu_bgrad'),
  (192,'dgelu'),(208,'dgelu_bgrad'),(256,'bgrada'),(512,'bgradb');
CREATE TABLE conv_apis (code INTEGER PRIMARY KEY, name TEXT NOT NULL);
INSERT INTO conv_apis VALUES (1,'legacy'),(2,'backend');
CREATE TABLE conv_call_kinds (code INTEGER PRIMARY KEY, name TEXT NOT NULL);
INSERT INTO conv_call_kinds VALUES (1,'run'),(2,'find'),(3,'heuristic');
CREATE TABLE conv_directions (code INTEGER PRIMARY KEY, name TEXT NOT NULL);
INSERT INTO conv_directions VALUES (1,'forward'),(2,'backward_data'),(3,'backward_filter');
CREATE TABLE algo_sources (code INTEGER PRIMARY KEY, name TEXT NOT NULL);
INSERT INTO algo_sources VALUES (0,'unknown'),(1,'find'),(2,'heuristic'),(3,'given');
CREATE TABLE tensor_layouts (code INTEGER PRIMARY KEY, name TEXT NOT NULL);
INSERT INTO tensor_layouts VALUES (0,'other'),(1,'NCHW'),(2,'NHWC');
-- cudnnDataType_t (cudnn_graph.h)
CREATE TABLE cudnn_data_types (code INTEGER PRIMARY KEY, name TEXT NOT NULL, bits INTEGER NOT NULL);
INSERT INTO cudnn_data_types VALUES (0,'fp32',32),(1,'fp64',64),(2,'fp16',16),(3,'int8',8),(4,'int32',32),
  (5,'int8x4',8),(6,'uint8',8),(7,'uint8x4',8),(8,'int8x32',8),(9,'bf16',16),(10,'int64',64),(11,'bool',1),
  (12,'fp8 e4m3',8),(13,'fp8 e5m2',8),(14,'fast float for fp8',32),(15,'fp8 e8m0',8),(16,'fp4 e2m1',4),(17,'int4',4),
  (18,'uint4',4),(19,'uint32',32),(20,'complex fp32',64),(21,'complex fp64',128);
