#!/usr/bin/env python3
"""Writes the fuzz targets' seed corpus (tests/fuzz/corpus/<target>/): tiny valid inputs of each format
tuneup reads, made for the purpose, and a few broken ones. The files are kept in the repository; run this
again only to change them (python3 tests/fuzz/make_seeds.py). Standard library only."""

import gzip
import json
import os
import re
import sqlite3
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
CORPUS = os.path.join(HERE, "corpus")


def out(target, name):
    folder = os.path.join(CORPUS, target)
    os.makedirs(folder, exist_ok=True)
    path = os.path.join(folder, name)
    for leftover in (path, path + "-journal"):
        if os.path.exists(leftover):
            os.remove(leftover)
    return path


def write(target, name, data):
    with open(out(target, name), "wb") as f:
        f.write(data)


def sqlite_file(target, name, sql, application_id=0, user_version=0):
    """An SQLite file with 512-byte pages (small files: mutations land on data more often)."""
    path = out(target, name)
    db = sqlite3.connect(path)
    db.execute("PRAGMA page_size=512")
    db.execute("PRAGMA application_id=%d" % application_id)
    db.execute("PRAGMA user_version=%d" % user_version)
    db.executescript(sql)
    db.commit()
    db.execute("VACUUM")
    db.close()
    with open(path, "rb") as f:
        return f.read()


# ---- Kineto JSON -------------------------------------------------------------------------------------

def kineto():
    pid, tid = 1234, 1234
    events = [
        {"ph": "M", "name": "process_name", "pid": pid, "tid": 0, "args": {"name": "python"}},
        {"ph": "M", "name": "thread_name", "pid": pid, "tid": tid, "args": {"name": "main"}},
        {"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#1", "pid": pid, "tid": tid,
         "ts": 1000.5, "dur": 900, "args": {"External id": 1}},
        {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": pid, "tid": tid, "ts": 1010, "dur": 50,
         "args": {"External id": 2, "Sequence number": 7, "Input Dims": [[125, 64], [64, 320]],
                  "Input type": ["float", "float"]}},
        {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": pid, "tid": tid, "ts": 1020,
         "dur": 5, "args": {"correlation": 42, "External id": 2, "cbid": 211}},
        {"ph": "X", "cat": "kernel", "name": "volta_sgemm_128x64_nn", "pid": 0, "tid": 7, "ts": 1030,
         "dur": 40, "args": {"correlation": 42, "External id": 2, "device": 0, "stream": 7,
                             "grid": [4, 2, 1], "block": [256, 1, 1], "registers per thread": 128,
                             "shared memory": 8192}},
        {"ph": "X", "cat": "gpu_memcpy", "name": "Memcpy HtoD (Pageable -> Device)", "pid": 0, "tid": 7,
         "ts": 1100, "dur": 10, "args": {"correlation": 43, "device": 0, "stream": 7, "bytes": 4096}},
        {"ph": "X", "cat": "gpu_memset", "name": "Memset (Device)", "pid": 0, "tid": 7, "ts": 1120,
         "dur": 2, "args": {"correlation": 44, "device": 0, "stream": 7, "bytes": 64}},
        {"ph": "X", "cat": "cuda_runtime", "name": "cudaStreamSynchronize", "pid": pid, "tid": tid,
         "ts": 1130, "dur": 30, "args": {"correlation": 45}},
        {"ph": "X", "cat": "cuda_sync", "name": "Stream Sync", "pid": 0, "tid": 7, "ts": 1131, "dur": 28,
         "args": {"correlation": 45, "device": 0, "stream": 7}},
        {"ph": "X", "cat": "gpu_user_annotation", "name": "ProfilerStep#1", "pid": 0, "tid": 7,
         "ts": 1030, "dur": 100, "args": {"External id": 1}},
        {"ph": "X", "cat": "python_function", "name": "train.py(12): step", "pid": pid, "tid": tid,
         "ts": 1001, "dur": 800},
        {"ph": "s", "cat": "ac2g", "id": 42, "pid": pid, "tid": tid, "ts": 1020, "name": "ac2g"},
        {"ph": "f", "cat": "ac2g", "id": 42, "pid": 0, "tid": 7, "ts": 1030, "bp": "e", "name": "ac2g"},
        {"ph": "X", "cat": "cpu_op", "name": "record_param_comms", "pid": pid, "tid": tid, "ts": 1500,
         "dur": 20, "args": {"Collective name": "allreduce", "In msg nelems": 1024, "Out msg nelems": 1024,
                             "Group size": 2, "dtype": "Float"}},
        {"ph": "i", "cat": "cpu_instant_event", "name": "[memory]", "pid": pid, "tid": tid, "ts": 1600,
         "s": "t", "args": {"Bytes": 512}},
        {"ph": "i", "cat": "cpu_instant_event", "name": "[memory]", "pid": pid, "tid": tid, "ts": 1610,
         "s": "t", "args": {"Total Reserved": 2097152, "Total Allocated": 1049088, "Bytes": 1048576,
                            "Addr": 139637976727552, "Device Id": 0, "Device Type": 1}},
        {"ph": "i", "cat": "cpu_instant_event", "name": "[memory]", "pid": pid, "tid": tid, "ts": 1620,
         "s": "t", "args": {"Bytes": -64, "Device Id": -1, "Device Type": 0}},
    ]
    trace = {"schemaVersion": 1, "deviceProperties": [{"id": 0, "name": "Tesla V100-SXM2-32GB",
             "computeMajor": 7, "computeMinor": 0, "totalGlobalMem": 34089730048, "numSms": 80}],
             "distributedInfo": {"backend": "nccl", "rank": 0, "world_size": 2},
             "displayTimeUnit": "ms", "baseTimeNanoseconds": 1700000000000000000, "traceEvents": events}
    text = json.dumps(trace, separators=(",", ":")).encode()
    write("fuzz_kineto_json", "object.json", text)
    write("fuzz_kineto_json", "object.json.gz", gzip.compress(text, mtime=0))
    # December 2020: a bare array, capitalised categories, GPU rows on "stream N".
    legacy = [
        {"ph": "X", "cat": "Operator", "name": "aten::conv2d", "pid": 5, "tid": 5, "ts": 10, "dur": 30,
         "args": {"external id": 3, "Input dims": [[8, 3, 224, 224], [64, 3, 7, 7]]}},
        {"ph": "X", "cat": "Runtime", "name": "cudaLaunchKernel", "pid": 5, "tid": 5, "ts": 12, "dur": 3,
         "args": {"correlation": 9, "external id": 3}},
        {"ph": "X", "cat": "Kernel", "name": "implicit_convolve_sgemm", "pid": 0, "tid": "stream 7",
         "ts": 20, "dur": 15, "args": {"correlation": 9, "device": 0, "stream": 7}},
        {"ph": "X", "cat": "Memcpy", "name": "Memcpy HtoD (Pinned -> Device)", "pid": 0,
         "tid": "stream 7", "ts": 40, "dur": 5, "args": {"correlation": 10, "bytes": 1024}},
        {"ph": "s", "cat": "async", "id": 9, "pid": 5, "tid": 5, "ts": 12, "name": "launch"},
    ]
    write("fuzz_kineto_json", "array_2020.json", json.dumps(legacy, separators=(",", ":")).encode())
    # Broken: cut short, odd numbers and ids, deep nesting, not a trace.
    write("fuzz_kineto_json", "truncated.json", text[: len(text) // 2])
    odd = {"traceEvents": [{"ph": "X", "cat": "kernel", "name": "k", "pid": -1, "tid": 18446744073709551615,
           "ts": 1e300, "dur": -5, "args": {"correlation": 9223372036854775807, "grid": [0, -1]}},
           {"ph": "X", "cat": "cpu_op", "name": "\u00e9\ud83d\ude00", "pid": 1, "tid": 1, "ts": "12",
            "dur": 0.000001, "args": {"Input Dims": "[[1,2]"}}]}
    write("fuzz_kineto_json", "odd_values.json", json.dumps(odd).encode())
    write("fuzz_kineto_json", "nested.json", b'{"traceEvents":[{"args":' + b"[" * 64 + b"]" * 64 + b"}]}")
    write("fuzz_kineto_json", "not_a_trace.json", b'{"name": "config", "values": [1, 2, 3]}')
    # Issue 18: times that are no times (NaN, inf, beyond int64, near its ends with a base time added),
    # negative durations, names that are not UTF-8, an "Input Dims" string that would end the JSON
    # around it if exported raw, steps at the ends of time.
    extreme = ('{"baseTimeNanoseconds": 9223372036854775000, "traceEvents": ['
               '{"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#1", "pid": 1, "tid": 1,'
               ' "ts": -9223372036854775, "dur": 18446744073709551}, '
               '{"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#2", "pid": 1, "tid": 1,'
               ' "ts": 9223372036854775, "dur": 1}, '
               '{"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": NaN, "dur": 1}, '
               '{"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": Infinity, "dur": -Infinity}, '
               '{"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 1e400, "dur": 1e-400}, '
               '{"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 5, "dur": -3, '
               '"args": {"device": 0, "stream": 7}}]}')
    write("fuzz_kineto_json", "extreme_times.json", extreme.encode())
    odd_text = (b'{"traceEvents": [{"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1, "tid": 1, "ts": 5,'
                b' "dur": 50, "args": {"Input Dims": "x\\"]}], \\"injected\\": [{\\"ph\\": \\"X\\"}",'
                b' "Input type": "fl\\"oat,\xff"}}, {"ph": "X", "cat": "kernel", "name": "caf\xe9 \x80 \xed\xa0\x80'
                b' \\udc80", "pid": 0, "tid": 7, "ts": 10, "dur": 50, "args": {"device": 0, "stream": 7}}]}')
    write("fuzz_kineto_json", "invalid_utf8.json", odd_text)


# ---- Nsight Systems SQLite ---------------------------------------------------------------------------

def gid(pid, tid):
    return (1 << 48) | (pid << 24) | tid


NSYS_TABLES = """
CREATE TABLE StringIds (id INTEGER NOT NULL PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE TARGET_INFO_GPU (vmId INTEGER, id INTEGER, name TEXT, totalMemory INTEGER, smCount INTEGER,
  threadsPerWarp INTEGER, computeMajor INTEGER, computeMinor INTEGER);
CREATE TABLE ThreadNames (nameId INTEGER, priority INTEGER, globalTid INTEGER);
CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME (start INTEGER, end INTEGER, eventClass INTEGER, globalTid INTEGER,
  correlationId INTEGER, nameId INTEGER, returnValue INTEGER);
CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER, end INTEGER, deviceId INTEGER, streamId INTEGER,
  correlationId INTEGER, globalPid INTEGER, demangledName INTEGER, shortName INTEGER, registersPerThread INTEGER,
  gridX INTEGER, gridY INTEGER, gridZ INTEGER, blockX INTEGER, blockY INTEGER, blockZ INTEGER,
  staticSharedMemory INTEGER, dynamicSharedMemory INTEGER);
CREATE TABLE CUPTI_ACTIVITY_KIND_MEMCPY (start INTEGER, end INTEGER, deviceId INTEGER, streamId INTEGER,
  correlationId INTEGER, globalPid INTEGER, bytes INTEGER, copyKind INTEGER, srcKind INTEGER, dstKind INTEGER);
CREATE TABLE NVTX_EVENTS (start INTEGER, end INTEGER, eventType INTEGER, text TEXT, globalTid INTEGER,
  textId INTEGER, domainId INTEGER, int64Value INTEGER);
"""


def nsys():
    p, t = 77, 78
    g, gp = gid(p, t), gid(p, 0)
    rows = f"""
INSERT INTO StringIds VALUES (1, 'cudaLaunchKernel_v7000'), (2, 'void at::native::FillFunctor<float>(int)'),
  (3, 'FillFunctor'), (4, 'python3'), (5, 'cuMemcpyHtoD_v2'), (6, 'cudaStreamSynchronize_v3020'),
  (7, 'ProfilerStep#1');
INSERT INTO TARGET_INFO_GPU VALUES (1, 0, 'NVIDIA H100 80GB HBM3', 84942979072, 132, 32, 9, 0);
INSERT INTO ThreadNames VALUES (4, 10, {g});
INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (1000, 1500, 0, {g}, 11, 1, 0), (1600, 1700, 1, {g}, 12, 5, 0),
  (1800, 2600, 0, {g}, 13, 6, 0);
INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (2000, 2500, 0, 7, 11, {gp}, 2, 3, 16, 64, 1, 1, 256, 1, 1, 0, 0);
INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY VALUES (1650, 1750, 0, 7, 12, {gp}, 4096, 1, 0, 2);
INSERT INTO NVTX_EVENTS VALUES (900, 3000, 59, NULL, {g}, 7, 0, NULL), (950, NULL, 60, 'open range', {g}, NULL, 0, NULL),
  (10, NULL, 75, 'tuneup', {g}, NULL, 3, NULL), (20, NULL, 34, 'tuneup.zero_grad.set_to_none', {g}, NULL, 3, 1),
  (30, NULL, 39, 'trainer', {g}, NULL, 0, NULL);
"""
    # nsys 3.x: metadata table, ENUM tables, syncs and memsets.
    v3 = NSYS_TABLES + rows + f"""
CREATE TABLE META_DATA_EXPORT (name TEXT, value TEXT);
INSERT INTO META_DATA_EXPORT VALUES ('EXPORT_SCHEMA_VERSION', '3.17.1'), ('EXPORT_PRODUCT_VERSION', '2025.1.1');
CREATE TABLE META_DATA_CAPTURE (name TEXT, value TEXT);
INSERT INTO META_DATA_CAPTURE VALUES ('PROCESS_0:COMMAND', 'python'), ('PROCESS_0:ARGUMENT_0', 'train.py'),
  ('PROCESS_0:ENVIRONMENT_VARIABLE', 'RANK="1"');
CREATE TABLE TARGET_INFO_CUDA_DEVICE (gpuId INTEGER, cudaId INTEGER, pid INTEGER);
INSERT INTO TARGET_INFO_CUDA_DEVICE VALUES (0, 0, {p});
CREATE TABLE PROCESSES (globalPid INTEGER, pid INTEGER, name TEXT);
INSERT INTO PROCESSES VALUES ({gp}, {p}, 'python3');
CREATE TABLE ENUM_CUDA_MEM_KIND (id INTEGER PRIMARY KEY, name TEXT, label TEXT);
INSERT INTO ENUM_CUDA_MEM_KIND VALUES (0, 'CUDA_MEMOPR_MEMORY_KIND_PAGEABLE', 'Pageable'),
  (2, 'CUDA_MEMOPR_MEMORY_KIND_DEVICE', 'Device');
CREATE TABLE CUPTI_ACTIVITY_KIND_SYNCHRONIZATION (start INTEGER, end INTEGER, deviceId INTEGER, streamId INTEGER,
  correlationId INTEGER, globalPid INTEGER, syncType INTEGER, eventId INTEGER);
INSERT INTO CUPTI_ACTIVITY_KIND_SYNCHRONIZATION VALUES (1810, 2590, 0, 7, 13, {gp}, 2, 4294967295);
CREATE TABLE CUPTI_ACTIVITY_KIND_MEMSET (start INTEGER, end INTEGER, deviceId INTEGER, streamId INTEGER,
  correlationId INTEGER, globalPid INTEGER, bytes INTEGER, memKind INTEGER);
INSERT INTO CUPTI_ACTIVITY_KIND_MEMSET VALUES (2700, 2710, 0, 7, 14, {gp}, 64, 2);
CREATE TABLE ENUM_CUDA_DEV_MEM_EVENT_OPER (id INTEGER PRIMARY KEY, name TEXT, label TEXT);
INSERT INTO ENUM_CUDA_DEV_MEM_EVENT_OPER VALUES (0, 'CUDA_DEV_MEM_EVENT_OPR_ALLOCATION', 'Allocation'),
  (1, 'CUDA_DEV_MEM_EVENT_OPR_DEALLOCATION', 'Deallocation');
CREATE TABLE CUDA_GPU_MEMORY_USAGE_EVENTS (start INTEGER, globalPid INTEGER, deviceId INTEGER, contextId INTEGER,
  address INTEGER, pc INTEGER, bytes INTEGER, memKind INTEGER, memoryOperationType INTEGER, name TEXT,
  correlationId INTEGER);
INSERT INTO CUDA_GPU_MEMORY_USAGE_EVENTS VALUES (1900, {gp}, 0, 1, 139637976727552, 0, 2097152, 2, 0, NULL, 15),
  (2900, {gp}, 0, 1, 139637976727552, 0, 2097152, 2, 1, NULL, 16);
"""
    data = sqlite_file("fuzz_nsys_sqlite", "export_3x.sqlite", v3)
    write("fuzz_nsys_sqlite", "truncated.sqlite", data[: len(data) * 2 // 3])
    # nsys 2.x: EXPORT_META_DATA, no ENUM tables.
    sqlite_file("fuzz_nsys_sqlite", "export_2x.sqlite", NSYS_TABLES + rows + """
CREATE TABLE EXPORT_META_DATA (name TEXT, value TEXT);
INSERT INTO EXPORT_META_DATA VALUES ('EXPORT_SCHEMA_VERSION', '2.9.1');
""")
    # Issue 18: NULL and text times (not kernels at t = 0), ends before starts, times at the ends of int64,
    # names that are not UTF-8, RANK=abc in the environment, and a recursive view in place of a table.
    # Without INTEGER affinity on the times, as a damaged or altered export may be; the copies a view.
    tables = NSYS_TABLES.replace("start INTEGER, end INTEGER", "start, end")
    tables = tables.replace("CREATE TABLE CUPTI_ACTIVITY_KIND_MEMCPY", "CREATE TABLE unused_memcpy")
    odd = tables + f"""
INSERT INTO StringIds VALUES (1, 'cudaLaunchKernel_v7000'), (2, CAST(X'6361666520FF80' AS TEXT)), (3, 'k');
INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (1000, 1500, 0, {g}, 11, 1, 0), (NULL, 1700, 1, {g}, 12, 1, 0),
  ('abc', 'def', 0, {g}, 13, 1, 0);
INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (2000, 2500, 0, 7, 11, {gp}, 2, 3, 16, 64, 1, 1, 256, 1, 1, 0, 0),
  (NULL, 2500, 0, 7, 11, {gp}, 2, 3, 16, 64, 1, 1, 256, 1, 1, 0, 0),
  ('2600', 2500, 0, 7, 11, {gp}, 2, 3, 16, 64, 1, 1, 256, 1, 1, 0, 0),
  (-9223372036854775808, 9223372036854775807, 0, 7, 12, {gp}, 2, 3, 16, 64, 1, 1, 256, 1, 1, 0, 0),
  (3000, 2900, 0, 7, 13, {gp}, 2, 3, 16, 64, 1, 1, 256, 1, 1, 0, 0);
INSERT INTO NVTX_EVENTS VALUES (900, 3000, 59, NULL, {g}, 7, 0, NULL), ('x', NULL, 60, 'open', {g}, NULL, 0, NULL),
  (950, 'y', 59, 'step', {g}, NULL, 0, NULL);
CREATE TABLE META_DATA_CAPTURE (name TEXT, value TEXT);
INSERT INTO META_DATA_CAPTURE VALUES ('PROCESS_0:ENVIRONMENT_VARIABLE', 'RANK=abc'),
  ('PROCESS_0:ENVIRONMENT_VARIABLE', 'WORLD_SIZE=99999999999999999999');
CREATE VIEW CUPTI_ACTIVITY_KIND_MEMCPY AS WITH RECURSIVE r(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM r)
  SELECT i AS start, i AS end FROM r;
"""
    sqlite_file("fuzz_nsys_sqlite", "odd_values.sqlite", odd)
    # A capture without CUDA activity (the importer's clear error).
    sqlite_file("fuzz_nsys_sqlite", "no_cuda.sqlite", """
CREATE TABLE StringIds (id INTEGER NOT NULL PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE TARGET_INFO_GPU (vmId INTEGER, id INTEGER, name TEXT);
CREATE TABLE ThreadNames (nameId INTEGER, priority INTEGER, globalTid INTEGER);
INSERT INTO StringIds VALUES (1, 'python3');
INSERT INTO TARGET_INFO_GPU VALUES (1, 0, 'NVIDIA RTX A2000 12GB');
INSERT INTO ThreadNames VALUES (1, 10, 281479271677952);
""")


# ---- tuneup files ------------------------------------------------------------------------------------

def tuneup():
    # Named .tuneup, not .db: the repository ignores *.db (recordings), and tuneup reads by content.
    schema_sql = open(os.path.join(ROOT, "common", "schema", "schema.sql")).read()
    schema_sql = re.sub(r"--[^\n]*", "", schema_sql)  # comments would be kept in sqlite_master: smaller files
    header = open(os.path.join(ROOT, "common", "schema", "trace_schema.h")).read()
    app_id = int(re.search(r"kApplicationId\s*=\s*(0x[0-9A-Fa-f]+|\d+)", header).group(1), 0)
    version = int(re.search(r"kSchemaVersion\s*=\s*(\d+)", header).group(1))
    rows = f"""
INSERT INTO meta VALUES ('format', 'tuneup-trace'), ('schema_version', '{version}'), ('pid', '4242'),
  ('start_ns', '1000'), ('end_ns', '90000'), ('rank', '0'), ('world_size', '1'), ('capture.cuda', 'on');
INSERT INTO strings VALUES (1, 'volta_sgemm_128x64_nn'), (2, 'cudaLaunchKernel'), (3, 'step'), (4, 'tuneup'),
  (5, 'tuneup.dataloader.num_workers'), (6, 'cudnn.benchmark'), (7, 'main'), (8, 'cublasSgemm_v2');
INSERT INTO devices (id, name, compute_major, compute_minor, sm_count, global_memory_bytes)
  VALUES (0, 'NVIDIA H100 80GB HBM3', 9, 0, 132, 85000000000);
INSERT INTO stats VALUES ('events.dropped', 'data_loss', 3, 'ring full');
INSERT INTO threads VALUES (4242, 4242, 7);
INSERT INTO kernels (start_ns, end_ns, device_id, stream_id, correlation_id, name_id, grid_x, block_x)
  VALUES (2000, 2500, 0, 7, 11, 1, 4, 256), (3000, 3400, 0, 7, 12, 1, 4, 256);
INSERT INTO api_calls (start_ns, end_ns, tid, api, cbid, name_id, correlation_id)
  VALUES (1900, 1950, 4242, 1, 211, 2, 11), (2900, 2950, 4242, 1, 211, 2, 12);
INSERT INTO memcpys (start_ns, end_ns, device_id, copy_kind, src_kind, dst_kind, bytes)
  VALUES (5000, 6000, 0, 1, 1, 3, 4096);
INSERT INTO memsets (start_ns, end_ns, device_id, bytes) VALUES (7000, 7100, 0, 64);
INSERT INTO syncs (start_ns, end_ns, sync_type) VALUES (8000, 8100, 3);
INSERT INTO nvtx_domains VALUES (0, NULL), (1, 4);
INSERT INTO nvtx_ranges (start_ns, end_ns, tid, domain_id, name_id, kind) VALUES (1500, 4000, 4242, 0, 3, 1),
  (4500, NULL, 4242, 0, 3, 1);
INSERT INTO nvtx_marks (ts_ns, tid, domain_id, name_id, payload) VALUES (1200, 4242, 1, 5, 4);
INSERT INTO framework_flags (ts_ns, tid, name_id, value) VALUES (1100, 4242, 6, 0);
"""
    if version >= 3:
        rows += """
INSERT INTO gemm_calls (start_ns, end_ns, tid, api, name_id, transa, transb, m, n, k, batch, a_type, b_type,
  c_type, compute_type, lda, ldb, ldc, external_id, status)
  VALUES (1890, 1960, 4242, 1, 8, 0, 0, 125, 64, 320, 1, 0, 0, 0, 68, 125, 320, 125, 1, 0);
INSERT INTO external_correlations (correlation_id, kind, external_id) VALUES (11, 5, 1);
"""
    if version >= 5:
        # The bootstrap's calls and samples, with the holes a damaged file may have (no file, no line).
        rows += """
INSERT INTO strings VALUES (9, '/home/me/train.py'), (10, 'Tensor.item');
INSERT INTO python_calls (start_ns, end_ns, tid, call_id, file_id, line, function_id)
  VALUES (1850, 2600, 4242, 10, 9, 57, 7), (2850, 2800, 4242, 10, NULL, 58, 7), (2860, 2870, 4242, 99, 9, NULL, 7);
INSERT INTO python_samples (ts_ns, tid, file_id, line, function_id) VALUES (2000, 4242, 9, 25, 7), (2100, 4242, 9, 25, 99);
"""
    if version >= 6:
        # GPU memory: CUPTI's cudaMalloc and its cudaFree without a size, pinned host memory, the bootstrap's
        # reading of the caching allocator and its peaks after an optimizer step.
        rows += """
INSERT INTO memory_events (ts_ns, device_id, source, delta_bytes, delta_of, allocated_bytes, reserved_bytes,
  memory_kind, address, tid, correlation_id, stream_id) VALUES
  (1700, 0, 1, 2097152, 2, NULL, NULL, 3, 140000000000, NULL, 10, NULL),
  (8500, 0, 1, 0, 2, NULL, NULL, 3, 140000000000, NULL, 13, NULL),
  (1800, 0, 1, 4096, 2, NULL, NULL, 2, 150000000000, NULL, 9, NULL),
  (4100, 0, 2, 0, 1, 1048576, 2097152, 3, NULL, 4242, NULL, NULL);
INSERT INTO memory_peaks (start_ns, end_ns, device_id, tid, allocated_bytes, reserved_bytes)
  VALUES (1000, 4100, 0, 4242, 1572864, 2097152), (4102, 8800, 0, 4242, 1048576, NULL);
"""
    data = sqlite_file("fuzz_tuneup_file", "small.tuneup", schema_sql + rows, app_id, version)
    write("fuzz_tuneup_file", "truncated.tuneup", data[: len(data) // 2])
    # Issue 18, items 7-9: tables that run code (a recursive view, a view of huge blobs, generated columns,
    # a virtual table), meta numbers that are not (WORLD_SIZE=abc at record time, a pid beyond int64, a
    # schema version that is 3 in 32 bits), times that are not times, sums that overflow, text that is
    # not UTF-8.
    hostile = {
        "view_kernels.tuneup": "DROP TABLE kernels; CREATE VIEW kernels AS WITH RECURSIVE r(i) AS (SELECT 1 "
                               "UNION ALL SELECT i + 1 FROM r) SELECT i AS id, i AS start_ns, i AS end_ns, 0 AS "
                               "device_id, 0 AS stream_id, 0 AS correlation_id, 1 AS name_id, 1 AS grid_x, 1 AS "
                               "grid_y, 1 AS grid_z, 1 AS block_x, 1 AS block_y, 1 AS block_z, 0 AS "
                               "registers_per_thread, 0 AS static_shared_bytes, 0 AS dynamic_shared_bytes FROM r;",
        "view_meta_blobs.tuneup": "DROP TABLE meta; CREATE VIEW meta AS WITH RECURSIVE r(i) AS (SELECT 1 UNION "
                                  "ALL SELECT i + 1 FROM r WHERE i < 3) SELECT 'key' || i AS key, "
                                  "zeroblob(900000000) AS value FROM r;",
        "generated_column.tuneup": "DROP TABLE strings; CREATE TABLE strings (id INTEGER PRIMARY KEY, seed TEXT, "
                                   "value TEXT AS (printf('%.*c', 900000000, 'x')));",
        "meta_numbers.tuneup": "UPDATE meta SET value = 'abc' WHERE key = 'world_size'; UPDATE meta SET value = "
                               "'99999999999999999999' WHERE key = 'pid'; UPDATE meta SET value = '-1' WHERE key = "
                               "'rank'; INSERT INTO meta VALUES ('clock.realtime_ns', '9223372036854775807'), "
                               "('clock.monotonic_ns', '-9223372036854775808');",
        "meta_pid_text.tuneup": "UPDATE meta SET value = 'abc' WHERE key = 'pid';",
        "schema_version_wraps.tuneup": "UPDATE meta SET value = '4294967299' WHERE key = 'schema_version';",
        "odd_times.tuneup": "ALTER TABLE kernels RENAME TO k0; CREATE TABLE kernels AS SELECT * FROM k0; DROP TABLE k0; "
                            "INSERT INTO kernels (start_ns, end_ns, device_id, name_id) VALUES (NULL, 5, 0, 1), "
                            "('abc', 5, 0, 1), (-9223372036854775808, 9223372036854775807, 0, 1), "
                            "(9223372036854775800, -9223372036854775800, 0, 1), (4000, 3000, 0, 1); "
                            "INSERT INTO nvtx_ranges (start_ns, end_ns, tid, domain_id, name_id, kind) VALUES "
                            "(-9223372036854775808, 9223372036854775807, 4242, 0, 3, 1), "
                            "(9223372036854775806, NULL, 4242, 0, 3, 1);",
        "overflowing_counts.tuneup": "INSERT OR REPLACE INTO stats VALUES ('events.dropped', 'data_loss', "
                                     "9223372036854775807, 'ring full'), ('more.dropped', 'data_loss', "
                                     "9223372036854775807, 'x'); INSERT INTO event_counts VALUES "
                                     "('nvtx', 1, 9223372036854775807, 9223372036854775807), "
                                     "('nvtx', 1, 9223372036854775807, 9223372036854775807);",
        "odd_memory.tuneup": "INSERT INTO memory_events (ts_ns, device_id, source, delta_bytes, delta_of, "
                             "allocated_bytes, reserved_bytes, memory_kind, address, tid) VALUES "
                             "('abc', 0, 1, 5, 2, NULL, NULL, 3, 1, NULL), "
                             "(3000, 0, 1, 9223372036854775807, 2, NULL, NULL, 3, -1, NULL), "
                             "(3001, 0, 1, -9223372036854775808, 2, NULL, NULL, 3, -1, NULL), "
                             "(3002, 1099511627776, 2, 0, 7, -5, 9223372036854775807, 99, NULL, -1), "
                             "(3003, -7, 9, 0, 1, 1, 1, NULL, NULL, 9223372036854775807); "
                             "INSERT INTO memory_peaks (start_ns, end_ns, device_id, tid, allocated_bytes, "
                             "reserved_bytes) VALUES (5000, 4000, 0, 4242, 7, 7), ('x', 4000, 0, NULL, 1, 1), "
                             "(-9223372036854775808, 9223372036854775807, 0, NULL, -9223372036854775808, "
                             "9223372036854775807), (2000, 2100, 4294967297, NULL, 1, 1);",
        "view_memory_peaks.tuneup": "DROP TABLE memory_peaks; CREATE VIEW memory_peaks AS WITH RECURSIVE r(i) AS "
                                    "(SELECT 1 UNION ALL SELECT i + 1 FROM r) SELECT i AS id, i AS start_ns, i AS "
                                    "end_ns, 0 AS device_id, NULL AS tid, i AS allocated_bytes, i AS reserved_bytes "
                                    "FROM r;",
        "invalid_utf8.tuneup": "UPDATE strings SET value = CAST(X'6361666520FF80EDA080' AS TEXT) WHERE id = 1; "
                               "INSERT INTO meta VALUES ('command_line', CAST(X'707974686F6EFF' AS TEXT));",
    }
    for name, sql in hostile.items():
        sqlite_file("fuzz_tuneup_file", name, schema_sql + rows + sql, app_id, version)
    # Schema 1 (no framework flags) without an application id: recognised by its meta table.
    sqlite_file("fuzz_tuneup_file", "schema1.tuneup", schema_sql + rows.replace(f"'schema_version', '{version}'",
                "'schema_version', '1'").split("INSERT INTO framework_flags")[0]
                + "DROP TABLE framework_flags;", 0, 1)


# ---- job summaries (tuneup advise --summary-out) --------------------------------------------------------

def job_summary():
    breakdown = [900, 600, 100, 50, 10, 140, 40, 30, 70]
    rank = {"path": "run.rank0.db", "format": 1, "rank": 0, "event_count": 12, "span": [1000, 90000],
            "device_name": "NVIDIA H100 80GB HBM3", "step_source": 1, "step_detail": "ranges named step",
            "device": 0, "steps": [[1, 1000, 1900, 3], [2, 1900, 2800, 4]], "per_step": [breakdown, breakdown],
            "median": breakdown,
            "communication": {"kernels": 1, "median_comm_ns": 100, "median_exposed_ns": 50,
                              "kind_ns": [100, 0, 0, 0, 0, 0], "events": [[0, 1]]},
            "collectives": 1, "inputs": 5, "settings": [["cudnn.benchmark", "off"]], "kernel_count": 2,
            "kernel_ns": 900, "top_kernels": [["volta_sgemm_128x64_nn", 2, 900]],
            "losses": [["recording.events.dropped", 1, 3, "ring full"]],
            "outcomes": [{"rule": "gpu-idle", "status": 1, "reason": "", "findings": [
                {"rule": "gpu-idle", "severity": "warning", "title": "the GPU idles", "detail": "d", "rank": 0,
                 "facts": [["idle", "14%"]], "events": [[0, 0]], "spans": [[1000, 1900]], "events_total": 1,
                 "gain": {"per_step_ns": 100, "step_share": 0.1, "model": "m", "confidence": "low"},
                 "fix_python": "x", "fix_cpp": "y", "doc_path": ""}]}]}
    head = {"format": "tuneup-job-summary", "schema_version": 1, "tool_version": "0.1.0"}
    # The kind_ns list has as many entries as the reader's communication kinds; the reader says so when not.
    write("fuzz_job_summary", "two_ranks.json",
          json.dumps(dict(head, ranks=[rank, dict(rank, rank=1, path="run.rank1.db")])).encode())
    write("fuzz_job_summary", "two_ranks.json.gz",
          gzip.compress(json.dumps(dict(head, ranks=[rank])).encode(), mtime=0))
    negative = dict(rank, median=[100, -1, 0, 0, 0, 0, 0, 0, 0], span=[9223372036854775807, -9223372036854775808])
    write("fuzz_job_summary", "negative_times.json", json.dumps(dict(head, ranks=[negative])).encode())
    deep = json.dumps(head)[:-1] + ', "ranks": ' + "[" * 100000 + "]" * 100000 + "}"
    write("fuzz_job_summary", "deep.json", deep.encode())
    utf8 = json.dumps(dict(head, ranks=[rank])).encode().replace(b"volta_sgemm", b"volta\xff\xe9gemm")
    write("fuzz_job_summary", "invalid_utf8.json", utf8)


def main():
    kineto()
    nsys()
    tuneup()
    job_summary()
    for target in sorted(os.listdir(CORPUS)):
        for name in sorted(os.listdir(os.path.join(CORPUS, target))):
            print("%-18s %-22s %6d bytes" % (target, name, os.path.getsize(os.path.join(CORPUS, target, name))))


if __name__ == "__main__":
    sys.exit(main())
