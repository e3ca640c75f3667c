"""Records every sample of samples/ (Python, and C++ when built) and its --fixed twin under `tuneup record`
on a GPU machine, prints a table of what each recording captured and PASS/FAIL against what it must show.
Called by scripts/gpu-check.sh; usable alone:

    python3 scripts/gpu_sample_check.py --tuneup build/gpu/bin/tuneup --out gpu-check-out \
        [--cpp-samples build/gpu-samples/samples] [--python python3] [--steps 30]

Exit status 0 when every check passed.
"""

import argparse
import json
import os
import sqlite3
import subprocess
import sys

# What a recording must show. `rule`: fires on the sample and not on its twin (None: tuneup files do not
# hold the rule's input; the checks say what must be there instead). `checks`: (label, SQL giving one
# number, test on the broken run, test on the fixed run); a test is a Python expression on v, or None.
SAMPLES = {
    "cudnn_autotuner": dict(rule="cudnn-autotuner-off", checks=[
        ("cudnn.benchmark", "FLAG cudnn.benchmark", "v == 0", "v == 1"),
        ("conv runs", "select count(*) from conv_calls where call_kind = 1 and status = 0", "v > 0", "v > 0"),
        # torch 2.x: cudnn-frontend runs several plans of a shape (backend API); legacy cuDNN: cudnnFind*.
        ("autotuner searches (find, or several plans of a shape)", "SEARCHES", "v == 0", "v > 0"),
    ]),
    "zero_grad_fill": dict(rule="zero-grad-fill", checks=[
        ("fills in zero_grad per step", "FILLS", "v >= 10", "v == 0"),
    ]),
    "unaligned_linear": dict(rule="gemm-dims-not-aligned", checks=[
        ("GEMM calls", "select count(*) from gemm_calls where status = 0", "v > 0", "v > 0"),
        ("GEMMs with M, N or K not a multiple of 8",
         "select count(*) from gemm_calls where status = 0 and (m % 8 or n % 8 or k % 8)", "v > 0", "v == 0"),
    ]),
    "dataloader_workers": dict(rule="dataloader-stall", checks=[
        ("dataloader.num_workers", "FACT tuneup.dataloader.num_workers", "v == 0", "v == 4"),
    ]),
    "anomaly": dict(rule="debug-api-enabled", checks=[
        ("autograd.anomaly", "FLAG autograd.anomaly", "v == 1", "v == 0"),
    ]),
    "pageable_copy": dict(rule="pageable-memcpy", checks=[
        ("pageable HtoD copies", "select count(*) from memcpys where copy_kind = 1 and src_kind = 1", "v > 0", None),
        ("pinned HtoD copies", "select count(*) from memcpys where copy_kind = 1 and src_kind = 2", None, "v > 0"),
    ]),
    "cpu_tensor_copy": dict(rule=None, checks=[  # the rule needs torch.profiler's CPU operators
        ("HtoD copies per step", "COPIES_PER_STEP", "v >= 2", "v < 1"),
    ]),
    "conv_bias_bn": dict(rule=None, checks=[  # the rule needs torch.profiler's operators and shapes
        ("conv runs", "select count(*) from conv_calls where call_kind = 1 and status = 0", "v > 0", "v > 0"),
    ]),
    "amp": dict(rule="amp-unused", checks=[
        ("fp32 GEMMs", "select count(*) from gemm_calls where status = 0 and a_type = 0", "v > 0", "v == 0"),
        ("fp16/bf16 GEMMs", "select count(*) from gemm_calls where status = 0 and a_type in (2, 14)", "v == 0",
         "v > 0"),
    ]),
    "unfused_optimizer": dict(rule="unfused-optimizer", python_only=True, checks=[
        ("optimizer foreach or fused (facts)", "select max(m.payload) from nvtx_marks m join strings s on s.id = "
         "m.name_id where s.value in ('tuneup.optimizer.foreach', 'tuneup.optimizer.fused')", "v == 0", "v == 1"),
        ("elementwise kernels per Optimizer.step",
         "select count(*) * 1.0 / max(1, (select count(*) from nvtx_ranges r join strings s on s.id = r.name_id "
         "where s.value like 'Optimizer.step%')) from kernels k join strings kn on kn.id = k.name_id join api_calls a "
         "using (correlation_id) join nvtx_ranges r on r.tid = a.tid and a.start_ns between r.start_ns and r.end_ns "
         "join strings s on s.id = r.name_id where s.value like 'Optimizer.step%' and kn.value like "
         "'%elementwise_kernel%'", "v >= 100", "v < 10"),
        # GPU memory: the bootstrap's reading of the caching allocator after each optimizer step, CUPTI's cudaMalloc.
        ("the allocator's peaks per Optimizer.step",
         "select count(*) * 1.0 / max(1, (select count(*) from nvtx_ranges r join strings s on s.id = r.name_id "
         "where s.value like 'Optimizer.step%')) from memory_peaks where allocated_bytes > 0", "v == 1", "v == 1"),
        ("CUPTI device memory allocations",
         "select count(*) from memory_events where source = 1 and memory_kind = 3 and delta_bytes > 0", "v > 0",
         "v > 0"),
    ]),
    "half_params": dict(rule="half-without-master-weights", python_only=True, checks=[
        ("fp16 parameters at the first step", "FACT tuneup.optimizer.params_fp16", "v == 2", "v == 0"),
    ]),
    "clip_before_unscale": dict(rule="clip-before-unscale", python_only=True, checks=[
        ("clippings before unscale_", "FACT tuneup.amp.clip_before_unscale", "v >= 4", None),
        ("clippings after unscale_", "FACT tuneup.amp.clip_after_unscale", None, "v >= 4"),
    ]),
    "amp_loss_scale": dict(rule="amp-loss-scale-instability", python_only=True, checks=[
        ("GradScaler enabled", "FACT tuneup.amp.grad_scaler", "v == 1", "v == 1"),
        ("skipped steps", "FACT tuneup.amp.skipped", "v >= 4", "v <= 1"),
    ]),
    "memory_headroom": dict(rule="memory-headroom", python_only=True, checks=[]),
    "data_parallel": dict(rule=None, python_only=True, checks=[  # data-parallel needs two GPUs
        ("wrap.data_parallel", "FACT tuneup.wrap.data_parallel", "v == 1", None),
        ("wrap.distributed_data_parallel", "FACT tuneup.wrap.distributed_data_parallel", None, "v == 1"),
    ]),
}

STEP_NAMES = "('step', 'ProfilerStep')"


def number(db, query):
    """The value a check's query gives: SQL, or one of the named measures below."""
    kind, _, name = query.partition(" ")
    if kind == "FLAG":
        query = ("select f.value from framework_flags f join strings s on s.id = f.name_id where s.value = '%s' "
                 "order by f.ts_ns desc limit 1" % name)
    elif kind == "FACT":
        query = ("select m.payload from nvtx_marks m join strings s on s.id = m.name_id where s.value = '%s' "
                 "order by m.ts_ns desc limit 1" % name)
    elif query == "FILLS":
        query = ("select count(*) * 1.0 / max(1, (select count(*) from nvtx_ranges r join strings s on s.id = "
                 "r.name_id where s.value like 'Optimizer.zero_grad%')) from kernels k join api_calls a using "
                 "(correlation_id) join nvtx_ranges r on r.tid = a.tid and a.start_ns between r.start_ns and "
                 "r.end_ns join strings s on s.id = r.name_id where s.value like 'Optimizer.zero_grad%'")
    elif query == "SEARCHES":
        # The autotuner's searches, as either API shows them: legacy cudnnFind* calls, and shapes whose
        # convolutions ran with two or more backend execution plans (cudnn-frontend timing its candidates).
        query = ("select (select count(*) from conv_calls where call_kind = 2) + (select count(*) from (select 1 "
                 "from conv_calls where call_kind = 1 and api = 2 and plan_id is not null group by direction, n, c, "
                 "d, h, w, k, filter_c, t, r, s, pad_d, pad_h, pad_w, stride_d, stride_h, stride_w, dilation_d, "
                 "dilation_h, dilation_w, groups, data_type, layout having count(distinct plan_id) >= 2))")
    elif query == "COPIES_PER_STEP":
        query = ("select count(*) * 1.0 / max(1, (select count(*) from nvtx_ranges r join strings s on s.id = "
                 "r.name_id where s.value = 'step')) from memcpys where copy_kind = 1")
    row = db.execute(query).fetchone()
    return None if row is None or row[0] is None else row[0]


def summary(db):
    """One line of what the file holds."""
    def count(sql):
        try:
            return db.execute(sql).fetchone()[0]
        except sqlite3.Error:
            return "-"
    return "kernels %s, GEMM calls %s, conv calls %s, memcpys %s, memsets %s, flags %s, facts %s" % (
        count("select count(*) from kernels"), count("select count(*) from gemm_calls"),
        count("select count(*) from conv_calls"), count("select count(*) from memcpys"),
        count("select count(*) from memsets"), count("select count(*) from framework_flags"),
        count("select count(*) from nvtx_marks m join nvtx_domains d on d.id = m.domain_id join strings s on "
              "s.id = d.name_id where s.value = 'tuneup'"))


def record(args, name, command, fixed):
    db = os.path.join(args.out, "%s%s.db" % (name, ".fixed" if fixed else ""))
    run = subprocess.run([args.tuneup, "record", "-o", db, "--force", "--"] + command + ["--steps", str(args.steps)]
                         + (["--fixed"] if fixed else []), capture_output=True, text=True, timeout=600)
    if run.returncode != 0:
        raise RuntimeError("%s exited %d: %s" % (" ".join(command), run.returncode, run.stderr[-800:]))
    advice = subprocess.run([args.tuneup, "advise", db, "--format", "json"], capture_output=True, text=True,
                            timeout=300)
    if advice.returncode not in (0, 3):
        raise RuntimeError("advise %s exited %d: %s" % (db, advice.returncode, advice.stderr[-800:]))
    return db, json.loads(advice.stdout)


def check_sample(args, name, command, expect):
    """Prints the sample's rows; returns the number of failed checks."""
    failed = 0
    runs = {}
    for fixed in (False, True):
        try:
            runs[fixed] = record(args, name, command, fixed)
        except Exception as error:  # one broken sample must not hide the others
            print("FAIL  %-44s %s" % (name + (" --fixed" if fixed else "") + ": recording", error))
            return 1
    for fixed, (db_path, advice) in runs.items():
        label = name + (" --fixed" if fixed else "")
        db = sqlite3.connect(db_path)
        print("      %-44s %s" % (label, summary(db)))
        raised = sorted({f["rule"] for f in advice.get("findings", [])})
        print("      %-44s findings: %s" % ("", ", ".join(raised) or "none"))
        for check_label, query, broken_test, fixed_test in expect["checks"]:
            test = fixed_test if fixed else broken_test
            if test is None:
                continue
            try:
                v = number(db, query)
                ok = v is not None and eval(test, {}, {"v": v})
            except sqlite3.Error as error:
                v, ok = "SQL error: %s" % error, False
            print("%s  %-44s %s (want %s)" % ("PASS" if ok else "FAIL", label + ": " + check_label, v, test))
            failed += not ok
        rule = expect.get("rule")
        if rule:
            ok = (rule in raised) != fixed
            print("%s  %-44s %s" % ("PASS" if ok else "FAIL", label + ": " + rule,
                                    "fires" if rule in raised else "quiet"))
            failed += not ok
    return failed


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tuneup", required=True)
    parser.add_argument("--out", required=True)
    parser.add_argument("--cpp-samples", help="folder of the built C++ samples (left out when absent)")
    parser.add_argument("--python", default=sys.executable)
    parser.add_argument("--steps", type=int, default=30)
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)
    here = os.path.dirname(os.path.abspath(__file__))
    python_samples = os.path.join(here, "..", "samples", "python")
    failed = 0
    for name, expect in SAMPLES.items():
        print("== sample %s (Python)" % name)
        failed += check_sample(args, "py_" + name, [args.python, os.path.join(python_samples, name + ".py")], expect)
        binary = os.path.join(args.cpp_samples or "", name)
        if expect.get("python_only"):
            continue
        if args.cpp_samples and os.access(binary, os.X_OK):
            print("== sample %s (C++)" % name)
            failed += check_sample(args, "cpp_" + name, [binary], expect)
        else:
            print("SKIP  %-44s C++ samples not built" % name)
    print("samples: %s" % ("ALL PASS" if failed == 0 else "%d checks FAILED" % failed))
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
