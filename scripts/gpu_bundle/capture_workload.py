"""The GPU bundle's capture workload: a small PyTorch training loop that does, a known number of times,
each kind of work the agent must capture, so that gpu-check can compare the recording with what was done.

    python3 capture_workload.py --report FILE [--steps N] [--profiler-at K --profiler-steps M]

Per step on a GPU: an NVTX range "step"; a host-to-device copy from pageable memory (even steps) or
pinned memory (odd steps); a small CNN's forward and backward (cuDNN convolutions, cuBLAS/cuBLASLt GEMMs
for its Linear layer); zero_grad(set_to_none=False) (fill kernels); three GEMMs of known shapes (fp32
72x200 @ 200x136, fp16 64x128 @ 128x256, a batch of 7 40x24 @ 24x56); a memset through the driver
(cuMemsetD8Async); an event synchronisation, a stream synchronisation and QUERIES event queries (which
are not waits and must not be recorded as syncs); and loss.item() (a device-to-host copy). At the end a
device synchronisation and an NVTX mark, and the caching allocator's totals and peaks as the program sees them
with the GPU's capacity. torch.backends.cudnn.benchmark is on; one step runs under autocast.

With --profiler-at K, torch.profiler (CUPTI's other client) runs from step K for --profiler-steps
steps, then the loop goes on without it (marks "capture.profiler_start" and "capture.profiler_stop").

Without a GPU the same model trains on the CPU (no copies, memsets, syncs or NVTX of its own: the
bootstrap's ranges and the torch settings are what can be checked). FILE gets, as JSON, what was done.
"""

import argparse
import ctypes
import json
import os
import sys
import time

import torch

GEMM_FP32 = (72, 200, 136)  # (rows of A, inner, columns of B)
GEMM_FP16 = (64, 128, 256)
GEMM_BATCHED = (7, 40, 24, 56)  # batch, rows, inner, columns
CONV_INPUT = (32, 3, 32, 32)  # n, c, h, w of the first convolution
CONV_FILTER = (16, 3, 3, 3)  # k, c, r, s


class Driver:
    """cuMemsetD8Async from the CUDA driver the process already uses."""

    def __init__(self):
        self.lib = ctypes.CDLL("libcuda.so.1")
        self.memset = self.lib.cuMemsetD8Async
        self.memset.argtypes = [ctypes.c_uint64, ctypes.c_ubyte, ctypes.c_size_t, ctypes.c_void_p]
        self.memset.restype = ctypes.c_int

    def zero(self, tensor, stream):
        rc = self.memset(tensor.data_ptr(), 0, tensor.numel() * tensor.element_size(), stream.cuda_stream)
        if rc != 0:
            raise RuntimeError("cuMemsetD8Async failed with CUDA error %d" % rc)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--report", required=True, help="where to write what was done (JSON)")
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--queries", type=int, default=50, help="event queries per step (default 50)")
    parser.add_argument("--profiler-at", type=int, default=-1, help="start torch.profiler at this step")
    parser.add_argument("--profiler-steps", type=int, default=5)
    args = parser.parse_args()
    if args.steps < 2:
        parser.error("--steps must be at least 2")

    cuda = torch.cuda.is_available()
    device = torch.device("cuda" if cuda else "cpu")
    torch.manual_seed(0)
    torch.backends.cudnn.benchmark = True
    nn = torch.nn
    n, c, h, w = CONV_INPUT
    k, _, r, s = CONV_FILTER
    model = nn.Sequential(nn.Conv2d(c, k, (r, s), padding=1), nn.BatchNorm2d(k), nn.ReLU(),
                          nn.Conv2d(k, 32, 3, padding=1), nn.BatchNorm2d(32), nn.ReLU(),
                          nn.AdaptiveAvgPool2d(4), nn.Flatten(), nn.Linear(32 * 16, 64), nn.ReLU(),
                          nn.Linear(64, 10)).to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    pageable = torch.randn(n, c, h, w)
    pinned = torch.randn(n, c, h, w).pin_memory() if cuda else pageable
    labels = torch.randint(0, 10, (n,))
    a32 = torch.randn(GEMM_FP32[0], GEMM_FP32[1], device=device)
    b32 = torch.randn(GEMM_FP32[1], GEMM_FP32[2], device=device)
    gemm16_type = torch.float16 if cuda else torch.float32
    a16 = torch.randn(GEMM_FP16[0], GEMM_FP16[1], device=device, dtype=gemm16_type)
    b16 = torch.randn(GEMM_FP16[1], GEMM_FP16[2], device=device, dtype=gemm16_type)
    batch, rows, inner, cols = GEMM_BATCHED
    ab = torch.randn(batch, rows, inner, device=device)
    bb = torch.randn(batch, inner, cols, device=device)
    scratch = torch.empty(1 << 20, dtype=torch.uint8, device=device)
    driver = Driver() if cuda else None
    nvtx = torch.cuda.nvtx if cuda else None
    done = dict(device=device.type, steps=0, pageable_copies=0, pinned_copies=0, dtoh_copies=0, memsets=0,
                event_syncs=0, stream_syncs=0, device_syncs=0, event_queries=0, gemm_fp32=0, gemm_fp16=0,
                gemm_batched=0, profiler_steps=0, torch=torch.__version__)
    profiler = None
    start = time.perf_counter()
    for step in range(args.steps):
        if step == args.profiler_at:
            profiler = torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU]
                                              + ([torch.profiler.ProfilerActivity.CUDA] if cuda else []))
            profiler.__enter__()
            if nvtx:
                nvtx.mark("capture.profiler_start")
        if nvtx:
            nvtx.range_push("step")
        if cuda and step % 2:
            x = pinned.to(device, non_blocking=True)
            done["pinned_copies"] += 1
        else:
            x = pageable.to(device)
            done["pageable_copies"] += cuda
        y = labels.to(device, non_blocking=cuda)
        optimizer.zero_grad(set_to_none=False)
        with torch.autocast(device.type, enabled=cuda and step == 1):
            loss = torch.nn.functional.cross_entropy(model(x), y)
        loss.backward()
        optimizer.step()
        torch.matmul(a32, b32)
        torch.matmul(a16, b16)
        torch.bmm(ab, bb)
        done["gemm_fp32"] += 1
        done["gemm_fp16"] += 1
        done["gemm_batched"] += 1
        if cuda:
            stream = torch.cuda.current_stream()
            driver.zero(scratch, stream)
            done["memsets"] += 1
            event = torch.cuda.Event()
            event.record(stream)
            for _ in range(args.queries):
                event.query()
            done["event_queries"] += args.queries
            event.synchronize()
            done["event_syncs"] += 1
            stream.synchronize()
            done["stream_syncs"] += 1
        loss.item()  # a device-to-host copy and a stream wait on a GPU
        done["dtoh_copies"] += cuda
        if nvtx:
            nvtx.range_pop()
        done["steps"] += 1
        if profiler is not None:
            done["profiler_steps"] += 1
            if done["profiler_steps"] == args.profiler_steps:
                profiler.__exit__(None, None, None)
                profiler = None
                if nvtx:
                    nvtx.mark("capture.profiler_stop")
    if profiler is not None:
        profiler.__exit__(None, None, None)
    if cuda:
        torch.cuda.synchronize()
        done["device_syncs"] += 1
        nvtx.mark("capture.done")
        done["gpu"] = torch.cuda.get_device_name(0)
        # The caching allocator as the program sees it (max_memory_*: since the start, the bootstrap's
        # per-step resets notwithstanding) and the GPU's capacity, to compare with the recording's memory.
        done.update(memory_allocated=torch.cuda.memory_allocated(), memory_reserved=torch.cuda.memory_reserved(),
                    max_memory_allocated=torch.cuda.max_memory_allocated(),
                    max_memory_reserved=torch.cuda.max_memory_reserved(),
                    total_memory=torch.cuda.get_device_properties(0).total_memory)
    done["seconds"] = time.perf_counter() - start
    with open(args.report + ".tmp", "w") as out:
        json.dump(done, out)
    os.replace(args.report + ".tmp", args.report)
    print("capture_workload: %d steps on %s in %.2f s" % (done["steps"], device.type, done["seconds"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
