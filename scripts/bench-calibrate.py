#!/usr/bin/env python3
"""The calibration of tuneup's gain estimates (docs/bench.md#calibration): for every Python sample, the
estimate of the finding its baseline raises against what `tuneup bench` measures for the fix applied in
the process (automatic mode) and for the sample's --fixed twin (--candidate). Prints the Markdown table.

  scripts/bench-calibrate.py BUILD_DIR [--python /usr/bin/python3] [--runs 4] [--only NAME ...]

Samples whose finding needs a GPU (its kernels, copies or GEMM shapes) raise nothing on a CPU: their row
says so; the GPU bundle measures them.
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
SAMPLES = os.path.join(HERE, "..", "samples", "python")

# Each sample with arguments that make its steps a few tens of milliseconds on a CPU.
CASES = [
    ("dataloader_workers", ["--steps", "200", "--load-ms", "10"]),
    ("anomaly", ["--steps", "400", "--batch", "4", "--hidden", "30"]),
    ("zero_grad_fill", ["--steps", "400", "--batch", "1", "--layers", "24"]),
    ("conv_bias_bn", ["--steps", "200", "--batch", "4"]),
    ("cpu_tensor_copy", ["--steps", "200"]),
    ("pageable_copy", ["--steps", "200", "--batch", "64"]),
    ("unaligned_linear", ["--steps", "200"]),
    ("amp", ["--steps", "200", "--hidden", "512"]),
    ("cudnn_autotuner", ["--steps", "200", "--batch", "4"]),
]


def bench(tuneup, options, command, runs_dir):
    out = os.path.join(runs_dir, "bench.json")
    args = [tuneup, "bench", "--format", "json", "-o", out, "--runs-dir", runs_dir] + options + ["--"] + command
    result = subprocess.run(args, capture_output=True, text=True)
    if result.returncode not in (0, 1) or not os.path.exists(out):
        return None, result.stderr.strip().splitlines()[-1:] or ["exit %d" % result.returncode]
    with open(out) as f:
        return json.load(f), None


def times(x):
    return "-" if x is None else ("%.2fx" % x)


def measured(c):
    if c is None:
        return "-"
    if c["speedup"] is None:
        return c["verdict"] + (": " + c["why"][:60] if c["why"] else "")
    lo, hi = c["speedup_ci"]
    return "%s (%s-%s) %s" % (times(c["speedup"]), times(lo), times(hi), c["verdict"])


def off_by(estimate, c):
    """How far the estimate is from the measured speed-up, in percent of the measured one."""
    if estimate is None or c is None or c["speedup"] is None:
        return "-"
    return "%+.0f%%" % ((estimate / c["speedup"] - 1) * 100)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("build")
    parser.add_argument("--python", default="/usr/bin/python3")
    parser.add_argument("--runs", default="4")
    parser.add_argument("--only", nargs="*")
    args = parser.parse_args()
    tuneup = os.path.join(args.build, "bin", "tuneup")
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    common = ["--runs", args.runs, "--steps", "20", "--warmup", "5", "--max-time", "10m"]
    print("| sample | finding | fix | estimate | measured: fix in the process | off by | measured: --fixed twin | off by |")
    print("|---|---|---|---|---|---|---|---|")
    for name, extra in CASES:
        if args.only and name not in args.only:
            continue
        command = [args.python, os.path.join(SAMPLES, name + ".py")] + extra
        with tempfile.TemporaryDirectory(prefix="calibrate-") as tmp:
            auto, error = bench(tuneup, common, command, os.path.join(tmp, "auto"))
            twin, twin_error = bench(tuneup, common + ["--candidate", " ".join(command + ["--fixed"])], command,
                                     os.path.join(tmp, "twin"))
        if auto is None:
            print("| %s | - | - | - | failed: %s | - | - | - |" % (name, error[0]))
            continue
        fixes = [c for c in auto["candidates"] if c["kind"] == "fix"]
        twin_c = twin["candidates"][0] if twin and twin["candidates"] else None
        if not fixes:
            raised = ", ".join(n["rule"] for n in auto.get("not_benched", [])) or "none on a CPU"
            print("| %s | %s | - | - | - | - | %s | - |" % (name, raised, measured(twin_c)))
            continue
        for c in fixes:
            estimate = c["estimated_speedup"]
            print("| %s | %s | %s | %s | %s | %s | %s | %s |" % (name, c["finding"] or "-", c["name"], times(estimate),
                                                             measured(c), off_by(estimate, c), measured(twin_c),
                                                             off_by(estimate, twin_c)))
        sys.stdout.flush()


if __name__ == "__main__":
    main()
