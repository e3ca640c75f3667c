-- tuneup trace schema, version 1: the contract between the agent (writer), the analyzer and the GUI.
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

-- Counters of what was produced, written, dropped or could not be decoded; severity info, data_loss or error.
CREATE TABLE stats (
  name        TEXT PRIMARY KEY,
  severity    TEXT NOT NULL,
  value       INTEGER NOT NULL,
  description TEXT NOT NULL
) WITHOUT ROWID;

-- Lookup tables for the codes above (CUPTI's values), so SQL can read names.
CREATE TABLE copy_kinds (code INTEGER PRIMARY KEY, name TEXT NOT NULL);
INSERT INTO copy_kinds VALUES (0,'unknown'),(1,'HtoD'),(2,'DtoH'),(3,'HtoA'),(4,'AtoH'),(5,'AtoA'),(6,'AtoD'),
  (7,'DtoA'),(8,'DtoD'),(9,'HtoH'),(10,'PtoP');
CREATE TABLE memory_kinds (code INTEGER PRIMARY KEY, name TEXT NOT NULL);
INSERT INTO memory_kinds VALUES (0,'unknown'),(1,'pageable'),(2,'pinned'),(3,'device'),(4,'array'),(5,'managed'),
  (6,'device_static'),(7,'managed_static');
CREATE TABLE sync_types (code INTEGER PRIMARY KEY, name TEXT NOT NULL);
INSERT INTO sync_types VALUES (0,'unknown'),(1,'event_synchronize'),(2,'stream_wait_event'),(3,'stream_synchronize'),
  (4,'context_synchronize');
CREATE TABLE api_kinds (code INTEGER PRIMARY KEY, name TEXT NOT NULL);
INSERT INTO api_kinds VALUES (1,'runtime'),(2,'driver');
