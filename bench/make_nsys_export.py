#!/usr/bin/env python3
"""Writes a synthetic Nsight Systems SQLite export (schema 3.x tables and columns) of a training loop, to
time the nsys importer at scale: STEPS steps of KERNELS kernels, each launched by a cudaLaunchKernel, one
pageable copy and one cudaStreamSynchronize per step, and NVTX ranges (ProfilerStep#N and one per kernel).

    python3 bench/make_nsys_export.py --steps 2000 --kernels 250 -o /tmp/big.sqlite   # 1.5 M events
"""

import argparse
import os
import sqlite3

SCHEMA = """
CREATE TABLE StringIds (id INTEGER NOT NULL PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE META_DATA_EXPORT (name TEXT NOT NULL, value TEXT);
CREATE TABLE TARGET_INFO_GPU (vmId INTEGER NOT NULL, id INTEGER NOT NULL, name TEXT, totalMemory INTEGER,
  smCount INTEGER, threadsPerWarp INTEGER, computeMajor INTEGER, computeMinor INTEGER);
CREATE TABLE ThreadNames (nameId INTEGER NOT NULL, priority INTEGER, globalTid INTEGER);
CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME (start INTEGER NOT NULL, end INTEGER NOT NULL, eventClass INTEGER NOT NULL,
  globalTid INTEGER, correlationId INTEGER, nameId INTEGER NOT NULL, returnValue INTEGER NOT NULL, callchainId INTEGER);
CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER NOT NULL, end INTEGER NOT NULL, deviceId INTEGER NOT NULL,
  contextId INTEGER NOT NULL, streamId INTEGER NOT NULL, correlationId INTEGER, globalPid INTEGER,
  demangledName INTEGER NOT NULL, shortName INTEGER NOT NULL, mangledName INTEGER, registersPerThread INTEGER NOT NULL,
  gridX INTEGER NOT NULL, gridY INTEGER NOT NULL, gridZ INTEGER NOT NULL, blockX INTEGER NOT NULL,
  blockY INTEGER NOT NULL, blockZ INTEGER NOT NULL, staticSharedMemory INTEGER NOT NULL,
  dynamicSharedMemory INTEGER NOT NULL);
CREATE TABLE CUPTI_ACTIVITY_KIND_MEMCPY (start INTEGER NOT NULL, end INTEGER NOT NULL, deviceId INTEGER NOT NULL,
  contextId INTEGER NOT NULL, streamId INTEGER NOT NULL, correlationId INTEGER, globalPid INTEGER,
  bytes INTEGER NOT NULL, copyKind INTEGER NOT NULL, srcKind INTEGER, dstKind INTEGER);
CREATE TABLE CUPTI_ACTIVITY_KIND_SYNCHRONIZATION (start INTEGER NOT NULL, end INTEGER NOT NULL,
  deviceId INTEGER NOT NULL, contextId INTEGER NOT NULL, streamId INTEGER NOT NULL, correlationId INTEGER,
  globalPid INTEGER, syncType INTEGER NOT NULL, eventId INTEGER NOT NULL);
CREATE TABLE NVTX_EVENTS (start INTEGER NOT NULL, end INTEGER, eventType INTEGER NOT NULL, text TEXT,
  globalTid INTEGER, textId INTEGER, domainId INTEGER);
"""

KERNEL_NAMES = ["void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float> >(int)",
                "ampere_sgemm_128x64_nn", "void cudnn::winograd_nonfused::winogradForwardData4x4<float, float>()",
                "void at::native::reduce_kernel<512, 1>(at::native::ReduceOp<float>)"]


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--steps", type=int, default=2000)
    parser.add_argument("--kernels", type=int, default=250, help="kernels per step")
    parser.add_argument("-o", "--output", required=True)
    args = parser.parse_args()
    if os.path.exists(args.output):
        os.remove(args.output)
    db = sqlite3.connect(args.output)
    db.executescript("PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF;" + SCHEMA)
    pid = tid = 4242
    g, gp = (1 << 48) | (pid << 24) | tid, (1 << 48) | (pid << 24)
    names = ["cudaLaunchKernel_v7000", "cudaMemcpyAsync_v3020", "cudaStreamSynchronize_v3020", "python3"]
    db.executemany("INSERT INTO StringIds VALUES (?, ?)", enumerate(names + KERNEL_NAMES))
    db.execute("INSERT INTO META_DATA_EXPORT VALUES ('EXPORT_SCHEMA_VERSION', '3.17.1')")
    db.execute("INSERT INTO TARGET_INFO_GPU VALUES (1, 0, 'NVIDIA H100 80GB HBM3', 84942979072, 132, 32, 9, 0)")
    db.execute("INSERT INTO ThreadNames VALUES (3, 10, ?)", (g,))
    runtime, kernels, copies, syncs, nvtx = [], [], [], [], []
    t, corr = 1_000_000, 0
    for step in range(args.steps):
        step_start = t
        corr += 1
        runtime.append((t, t + 3000, 0, g, corr, 1, 0, None))
        copies.append((t + 1000, t + 40000, 0, 1, 7, corr, gp, 1 << 20, 1, 0, 2))
        t += 5000
        for k in range(args.kernels):
            corr += 1
            runtime.append((t, t + 2500, 0, g, corr, 0, 0, None))
            kernels.append((t + 20000, t + 26000, 0, 1, 7, corr, gp, 4 + k % 4, 4 + k % 4, None, 32,
                            128, 1, 1, 256, 1, 1, 0, 0))
            nvtx.append((t - 100, t + 2600, 59, "aten::op%d" % (k % 16), g, None, 0))
            t += 4000
        corr += 1
        runtime.append((t, t + 30000, 0, g, corr, 2, 0, None))
        syncs.append((t + 100, t + 29900, 0, 1, 7, corr, gp, 2, 4294967295))
        t += 40000
        nvtx.append((step_start, t - 100, 59, "ProfilerStep#%d" % step, g, None, 0))
    db.executemany("INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (?, ?, ?, ?, ?, ?, ?, ?)", runtime)
    db.executemany("INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (" + ", ".join("?" * 19) + ")", kernels)
    db.executemany("INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY VALUES (" + ", ".join("?" * 11) + ")", copies)
    db.executemany("INSERT INTO CUPTI_ACTIVITY_KIND_SYNCHRONIZATION VALUES (" + ", ".join("?" * 9) + ")", syncs)
    db.executemany("INSERT INTO NVTX_EVENTS VALUES (?, ?, ?, ?, ?, ?, ?)", nvtx)
    db.commit()
    db.close()
    events = len(runtime) + len(kernels) + len(copies) + len(syncs) + len(nvtx)
    print("%s: %d events (%d kernels), %.1f MB" % (args.output, events, len(kernels),
                                                  os.path.getsize(args.output) / 1e6))


if __name__ == "__main__":
    main()
