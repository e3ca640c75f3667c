"""The GPU bundle's check driver (scripts/gpu_bundle/gpu_check.py) on recordings made here with the trace
schema: the checks that only a GPU machine runs for real must pass on a recording that holds what the
capture workload did, and fail, saying what is missing, on one that lacks it. Also the overhead verdict,
the sample checks with GPU signals, and the ELF reader that says what the bundle's binaries need."""

import importlib.util
import os
import shutil
import sqlite3
import sys
import tempfile
import types
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..", "..")
DRIVER = os.path.join(ROOT, "scripts", "gpu_bundle")
sys.path.insert(0, DRIVER)  # the driver's own modules, as in the bundle's driver/
spec = importlib.util.spec_from_file_location("gpu_check", os.path.join(DRIVER, "gpu_check.py"))
gpu_check = importlib.util.module_from_spec(spec)
spec.loader.exec_module(gpu_check)
import sample_specs  # noqa: E402

SCHEMA = open(os.path.join(ROOT, "common", "schema", "schema.sql")).read()
STEPS = 4
STEP_NS = 10_000_000
# What capture_workload.py reports for STEPS steps on a GPU.
DONE = dict(device="cuda", steps=STEPS, pageable_copies=STEPS // 2, pinned_copies=STEPS // 2, dtoh_copies=STEPS,
            memsets=STEPS, event_syncs=STEPS, stream_syncs=STEPS, device_syncs=1, event_queries=50 * STEPS,
            gemm_fp32=STEPS, gemm_fp16=STEPS, gemm_batched=STEPS, profiler_steps=0, seconds=1.0,
            memory_allocated=50_000_000, memory_reserved=120_000_000, max_memory_allocated=90_000_000,
            max_memory_reserved=120_000_000, total_memory=85_020_000_000)


class Recording:
    """A tuneup file written row by row, as the agent would after the capture workload."""

    def __init__(self, path):
        self.db = sqlite3.connect(path)
        self.db.executescript(SCHEMA)
        self.strings = {}
        self.correlation = 0

    def string(self, text):
        if text not in self.strings:
            self.strings[text] = len(self.strings) + 1
            self.db.execute("insert into strings (id, value) values (?, ?)", (self.strings[text], text))
        return self.strings[text]

    def launch(self, start, kernel="void gemm_kernel<float>()"):
        self.correlation += 1
        self.db.execute("insert into api_calls (start_ns, end_ns, tid, api, cbid, name_id, correlation_id, "
                        "return_value) values (?, ?, 1, 1, 211, ?, ?, 0)",
                        (start, start + 2000, self.string("cudaLaunchKernel"), self.correlation))
        self.db.execute("insert into kernels (start_ns, end_ns, device_id, stream_id, correlation_id, name_id) values "
                        "(?, ?, 0, 7, ?, ?)", (start + 5000, start + 25000, self.correlation, self.string(kernel)))

    def close(self):
        self.db.commit()
        self.db.close()


def capture_recording(path, faults=()):
    """What the capture workload leaves on a GPU, with the faults named: a kind left out (memcpys, memsets,
    batched, convs, cupti_memory, peaks), event queries recorded as syncs (queries), or a peak below the
    totals read with it (low_peak)."""
    r = Recording(path)
    x = r.db.execute
    x("insert into meta values ('capture.cuda', 'on'), ('capture.nvtx', 'on'), ('cupti.version', '130000'), "
      "('format', 'tuneup'), ('cupti.sync_queries', 'off'), "
      "('cupti.kinds', 'kernel,memcpy,memcpy2,memset,sync,runtime,driver,memory,external_correlation')")
    x("insert into processes (pid, role, start_ns, end_ns) values (1, 'main', 0, ?)", ((STEPS + 1) * STEP_NS,))
    x("insert into devices (id, name, sm_count, global_memory_bytes) values (0, 'NVIDIA H100 80GB HBM3', 132, ?)",
      (DONE["total_memory"],))
    if "cupti_memory" not in faults:  # the caching allocator's segments, and the pinned batch
        for size, kind in ((2 << 20, 3), (20 << 20, 3), (100 << 20, 3), (-(2 << 20), 3), (4 << 20, 2)):
            x("insert into memory_events (ts_ns, device_id, source, delta_bytes, delta_of, memory_kind, address) "
              "values (?, 0, 1, ?, 2, ?, ?)", (STEP_NS + 10 + abs(size) % 977, size, kind, 0x7f0000000000 + abs(size)))
    x("insert into nvtx_domains (id, name_id) values (0, null), (1, ?)", (r.string("tuneup"),))
    batch = 32 * 3 * 32 * 32 * 4
    for step in range(STEPS):
        t = (step + 1) * STEP_NS
        x("insert into nvtx_ranges (start_ns, end_ns, tid, domain_id, name_id, kind, depth) values (?, ?, 1, 0, ?, 1, 0)",
          (t, t + STEP_NS - 1000, r.string("step")))
        for name in ("Optimizer.zero_grad#SGD.zero_grad", "Optimizer.step#SGD.step", "tuneup.backward",
                     "tuneup.forward#Sequential"):
            x("insert into nvtx_ranges (start_ns, end_ns, tid, domain_id, name_id, kind, depth) values "
              "(?, ?, 1, 1, ?, 1, 0)", (t + 100, t + 200, r.string(name)))
        for k in range(30):
            r.launch(t + 1000 + k * 50000)
        if "memcpys" not in faults:
            kind = 2 if step % 2 else 1
            x("insert into memcpys (start_ns, end_ns, device_id, copy_kind, src_kind, dst_kind, bytes) values "
              "(?, ?, 0, 1, ?, 3, ?)", (t + 500, t + 900, kind, batch))
            x("insert into memcpys (start_ns, end_ns, device_id, copy_kind, src_kind, dst_kind, bytes) values "
              "(?, ?, 0, 2, 3, 1, 4)", (t + 9_000_000, t + 9_000_100))
        if "peaks" not in faults:  # the bootstrap's reading after Optimizer.step
            read = t + 250
            x("insert into memory_events (ts_ns, device_id, source, delta_bytes, delta_of, allocated_bytes, "
              "reserved_bytes, memory_kind, tid) values (?, 0, 2, 0, 1, ?, ?, 3, 1)",
              (read, DONE["memory_allocated"], DONE["memory_reserved"]))
            peak = DONE["memory_allocated"] - 1 if "low_peak" in faults else DONE["max_memory_allocated"] - step
            x("insert into memory_peaks (start_ns, end_ns, device_id, tid, allocated_bytes, reserved_bytes) values "
              "(?, ?, 0, 1, ?, ?)", (read - STEP_NS, read, peak, DONE["max_memory_reserved"]))
        if "memsets" not in faults:
            x("insert into memsets (start_ns, end_ns, device_id, bytes, value, memory_kind) values (?, ?, 0, ?, 0, 3)",
              (t + 8_000_000, t + 8_000_100, 1 << 20))
        syncs = [(1, 1), (3, 2)] + ([(1, 50)] if "queries" in faults else [])
        for sync_type, n in syncs:
            for _ in range(n):
                x("insert into syncs (start_ns, end_ns, sync_type) values (?, ?, ?)", (t + 8_500_000, t + 8_600_000,
                                                                                      sync_type))
        gemms = [(136, 72, 200, 1, 0), (256, 64, 128, 1, 2)] + ([] if "batched" in faults else [(56, 40, 24, 7, 0)])
        for m, n, k, b, a_type in gemms:
            x("insert into gemm_calls (start_ns, end_ns, tid, api, name_id, m, n, k, batch, a_type, status) values "
              "(?, ?, 1, 2, ?, ?, ?, ?, ?, ?, 0)", (t + 3000, t + 4000, r.string("cublasLtMatmul"), m, n, k, b, a_type))
        if "convs" not in faults:
            x("insert into conv_calls (start_ns, end_ns, tid, api, name_id, call_kind, direction, n, c, h, w, k, "
              "filter_c, r, s, algo_source, plan_id, status) values (?, ?, 1, 2, ?, 1, 1, 32, 3, 32, 32, 16, 3, 3, 3, "
              "2, 1, 0)", (t + 2000, t + 2500, r.string("cudnnBackendExecute")))
    x("insert into syncs (start_ns, end_ns, sync_type) values (?, ?, 4)", ((STEPS + 1) * STEP_NS - 10, (STEPS + 1) * STEP_NS - 5))
    x("insert into nvtx_marks (ts_ns, tid, domain_id, name_id) values (?, 1, 0, ?)", ((STEPS + 1) * STEP_NS - 1,
                                                                                    r.string("capture.done")))
    r.close()


class FakeReport:
    def __init__(self):
        self.checks = {}
        self.data = dict(machine={"kineto": True, "torch": "2.11.0"}, notes=[])

    def add(self, name, status, detail):
        self.checks[name] = (status, detail)

    def note(self, text):
        self.data["notes"].append(text)


def checker():
    args = types.SimpleNamespace(max_overhead=5.0, python=sys.executable)
    check = gpu_check.Check(args, FakeReport(), runner=None)
    check.gpu = "NVIDIA H100 80GB HBM3"
    return check


CAPTURE_CHECKS = ["capture_on", "capture_kernels", "capture_memcpys", "capture_memsets", "capture_syncs",
                  "capture_queries", "capture_api", "capture_gemms", "capture_convs", "capture_nvtx", "capture_memory"]


class CaptureChecks(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="gpu_check_test.")

    def tearDown(self):
        shutil.rmtree(self.dir)

    def run_checks(self, faults=()):
        path = os.path.join(self.dir, "capture-%s.db" % "-".join(faults))
        capture_recording(path, faults)
        check = checker()
        db = gpu_check.Db(path)
        for method in CAPTURE_CHECKS:
            getattr(check, method)(method, db, DONE)
        return check.report.checks

    def test_a_full_recording_passes_every_check(self):
        for name, (status, detail) in self.run_checks().items():
            self.assertEqual(status, "pass", "%s: %s" % (name, detail))

    def test_each_missing_kind_fails_its_check(self):
        for fault, method, says in (("memcpys", "capture_memcpys", "pageable HtoD"),
                                      ("memsets", "capture_memsets", "memsets of 1 MiB"),
                                      ("batched", "capture_gemms", "batched 7 x 40x24x56: 0 calls"),
                                      ("convs", "capture_convs", "forward runs of the first convolution"),
                                      ("queries", "capture_queries", "queries are recorded as waits"),
                                      ("cupti_memory", "capture_memory", "no CUPTI memory allocation on GPU 0"),
                                      ("peaks", "capture_memory", "0 readings and 0 peaks of the allocator"),
                                      ("low_peak", "capture_memory", "4 peaks below the totals read with them")):
            checks = self.run_checks((fault,))
            status, detail = checks[method]
            self.assertEqual(status, "fail", "%s with fault %s: %s" % (method, fault, detail))
            self.assertIn(says, detail)
            others = [n for n, (s, _) in checks.items() if s != "pass" and n != method]
            self.assertEqual(others, [], "with fault %s, only %s may fail" % (fault, method))


class MemoryChecks(unittest.TestCase):
    """The capture's GPU memory beyond its rows: the capacity, memory-headroom's outcome, nothing without CUDA."""

    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="gpu_check_test.")
        self.path = os.path.join(self.dir, "capture.db")
        capture_recording(self.path)

    def tearDown(self):
        shutil.rmtree(self.dir)

    def test_reserved_more_than_cupti_saw_fails(self):
        check = checker()
        check.capture_memory("memory", gpu_check.Db(self.path), dict(DONE, memory_reserved=500_000_000))
        status, detail = check.report.checks["memory"]
        self.assertEqual(status, "fail", detail)
        self.assertIn("less than the 500000000 the allocator reserved", detail)

    def test_capacity_unlike_torchs_fails(self):
        check = checker()
        check.capture_memory("memory", gpu_check.Db(self.path), dict(DONE, total_memory=40_000_000_000))
        self.assertEqual(check.report.checks["memory"][0], "fail")
        self.assertIn("torch's total_memory 40000000000", check.report.checks["memory"][1])

    def headroom(self, advice):
        check = checker()
        check.runner = types.SimpleNamespace(advise=lambda name, db, *options: advice)
        check.capture_headroom("headroom", gpu_check.Db(self.path), DONE)
        return check.report.checks["headroom"]

    def test_memory_headroom_must_be_evaluated(self):
        raised = self.headroom(dict(findings=[dict(rule="memory-headroom", title="GPU memory peaks at 120 MB")]))
        self.assertEqual(raised, ("pass", "raised: GPU memory peaks at 120 MB"))
        clean = self.headroom(dict(rules_without_findings=[dict(rule="memory-headroom", status="clean",
                                                                reason="above the 50%")]))
        self.assertEqual(clean[0], "pass")
        missing = self.headroom(dict(rules_without_findings=[dict(rule="memory-headroom", status="not evaluated",
                                                                  reason="needs the GPU's memory capacity")]))
        self.assertEqual(missing[0], "fail")
        self.assertIn("memory-headroom is not evaluated", missing[1])

    def test_without_cuda_nothing_is_read(self):
        check = checker()
        check.capture_no_memory("none", gpu_check.Db(self.path), DONE)
        self.assertEqual(check.report.checks["none"][0], "fail")
        empty = os.path.join(self.dir, "cpu.db")
        Recording(empty).close()
        check.capture_no_memory("none", gpu_check.Db(empty), DONE)
        self.assertEqual(check.report.checks["none"], ("pass", "0 memory events, 0 peaks"))


class ProfilerHalfway(unittest.TestCase):
    """torch.profiler started at step 5 for 5 steps of 15: what the agent kept, and whether it said so."""

    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="gpu_check_test.")

    def tearDown(self):
        shutil.rmtree(self.dir)

    def checks(self, lost_while_on, meta=()):
        path = os.path.join(self.dir, "profiler-%d-%d.db" % (lost_while_on, len(meta)))
        r = Recording(path)
        x = r.db.execute
        x("insert into processes (pid, role, start_ns, end_ns) values (1, 'main', 0, ?)", (20 * STEP_NS,))
        x("insert into meta values ('capture.cuda', 'on')")
        for key, value in meta:
            x("insert into meta values (?, ?)", (key, value))
        for step in range(15):
            t = (step + 1) * STEP_NS
            if step in (5, 10):
                x("insert into nvtx_marks (ts_ns, tid, domain_id, name_id) values (?, 1, 0, ?)", (
                    t - 10, r.string("capture.profiler_start" if step == 5 else "capture.profiler_stop")))
            x("insert into nvtx_ranges (start_ns, end_ns, tid, domain_id, name_id, kind, depth) values "
              "(?, ?, 1, 0, ?, 1, 0)", (t, t + STEP_NS - 1000, r.string("step")))
            kernels = 200 if step == 0 else (0 if lost_while_on and 5 <= step < 10 else 40)
            for k in range(kernels):
                r.launch(t + 1000 + k * 1000)
        r.close()
        check = checker()
        check.profiler_checks(gpu_check.Db(path), 5, 5, 15)
        return check.report.checks

    def test_nothing_lost(self):
        checks = self.checks(False)
        self.assertEqual(checks["torch.profiler halfway: the run survives"][0], "pass")
        status, detail = checks["torch.profiler halfway: lost capture is reported"]
        self.assertEqual(status, "pass")
        self.assertIn("nothing was lost", detail)

    def test_lost_silently_fails(self):
        status, detail = self.checks(True)["torch.profiler halfway: lost capture is reported"]
        self.assertEqual(status, "fail")
        self.assertIn("does not say so", detail)

    def test_lost_and_said_passes(self):
        checks = self.checks(True, [("capture.cuda.lost", "kernel records while torch.profiler held CUPTI")])
        self.assertEqual(checks["torch.profiler halfway: lost capture is reported"][0], "pass")


class SampleChecks(unittest.TestCase):
    """A sample's GPU signal and finding, as the driver reads a recording and `tuneup advise --format json`."""

    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="gpu_check_test.")

    def tearDown(self):
        shutil.rmtree(self.dir)

    def recording(self, name, gemms):
        path = os.path.join(self.dir, name + ".db")
        r = Recording(path)
        r.db.execute("insert into processes (pid, role, start_ns, end_ns) values (1, 'main', 0, 100)")
        for m, n, k in gemms:
            r.db.execute("insert into gemm_calls (start_ns, end_ns, tid, api, name_id, m, n, k, batch, a_type, status) "
                         "values (1, 2, 1, 1, ?, ?, ?, ?, 1, 2, 0)", (r.string("cublasGemmEx"), m, n, k))
        r.close()
        return path

    def advice(self, rules):
        return {"inputs": [{"steps": {"count": 30}, "recorded_settings": {}}],
                "findings": [{"rule": r} for r in rules], "rules_without_findings": []}

    def test_unaligned_linear(self):
        sample = next(s for s in gpu_check.SAMPLES if s.name == "unaligned_linear")
        broken = self.recording("broken", [(30, 30, 1001)] * 3)
        fixed = self.recording("fixed", [(32, 32, 1008)] * 3)
        check = checker()
        check.sample_checks(sample, (broken, (None, self.advice(["gemm-dims-not-aligned"]))),
                            (fixed, (None, self.advice([]))))
        for what in ("recorded", "signal", "finding"):
            status, detail = check.report.checks["sample unaligned_linear: " + what]
            self.assertEqual(status, "pass", "%s: %s" % (what, detail))
        # The twin still off the multiples of 8, and the rule quiet on the sample: both said.
        check = checker()
        check.sample_checks(sample, (broken, (None, self.advice([]))), (broken, (None, self.advice([]))))
        self.assertEqual(check.report.checks["sample unaligned_linear: signal"][0], "fail")
        status, detail = check.report.checks["sample unaligned_linear: finding"]
        self.assertEqual(status, "fail")
        self.assertIn("does not fire on the sample", detail)

    def sync_batchnorm_recording(self, name, plain, sync, gathers):
        """Rank 0's file of sync_batchnorm: the bootstrap's facts, and SyncBatchNorm's gather kernels."""
        path = os.path.join(self.dir, name + ".rank0.db")
        r = Recording(path)
        r.db.execute("insert into processes (pid, role, start_ns, end_ns) values (1, 'rank', 0, 100)")
        for fact, value in (("tuneup.ddp.batchnorm_layers", plain), ("tuneup.ddp.sync_batchnorm_layers", sync),
                            ("tuneup.dataloader.batch_size", 8)):
            r.db.execute("insert into nvtx_marks (ts_ns, tid, domain_id, name_id, payload) values (1, 1, 1, ?, ?)",
                         (r.string(fact), value))
        for i in range(gathers):
            r.launch(1000 + i * 100000, "void at::native::batch_norm_reduce_statistics_kernel<float, float, int>")
        r.close()
        return path

    def test_sync_batchnorm_runs_two_ranks(self):
        sample = next(s for s in gpu_check.SAMPLES if s.name == "sync_batchnorm")
        self.assertEqual(sample.files("/w/samples/sync_batchnorm/broken.db"),
                         ["/w/samples/sync_batchnorm/broken.rank0.db", "/w/samples/sync_batchnorm/broken.rank1.db"])
        launcher = sample.launcher()
        self.assertEqual(launcher[:3], ["-m", "torch.distributed.run", "--standalone"])
        self.assertEqual(launcher[launcher.index("--nproc_per_node") + 1], "2")
        self.assertEqual(next(s for s in gpu_check.SAMPLES if s.name == "anomaly").launcher(), [])
        broken = self.sync_batchnorm_recording("broken", 2, 0, 0)
        advice = self.advice(["sync-batchnorm-missing"])
        advice["inputs"][0]["recorded_settings"] = {"ddp.batchnorm_layers": "2", "ddp.sync_batchnorm_layers": "0"}
        fixed_advice = self.advice([])
        fixed_advice["inputs"][0]["recorded_settings"] = {"ddp.batchnorm_layers": "0",
                                                          "ddp.sync_batchnorm_layers": "2"}
        # On a GPU, --fixed trains and runs SyncBatchNorm's gather kernels.
        check = checker()
        check.sample_checks(sample, (broken, (None, advice)),
                            (self.sync_batchnorm_recording("fixed", 0, 2, 4), (None, fixed_advice)))
        for what in ("recorded", "settings", "signal", "finding"):
            status, detail = check.report.checks["sample sync_batchnorm: " + what]
            self.assertEqual(status, "pass", "%s: %s" % (what, detail))
        # Without a GPU, --fixed trains no step and runs no kernel: neither is asked of it.
        fixed_advice["inputs"][0]["steps"]["count"] = 0
        no_kernels = self.sync_batchnorm_recording("cpu_fixed", 0, 2, 0)
        check = checker()
        check.gpu = None
        check.sample_checks(sample, (broken, (None, advice)), (no_kernels, (None, fixed_advice)))
        for what in ("recorded", "settings", "signal", "finding"):
            status, detail = check.report.checks["sample sync_batchnorm: " + what]
            self.assertEqual(status, "pass", "%s: %s" % (what, detail))
        self.assertIn("--fixed: no training on the CPU", check.report.checks["sample sync_batchnorm: recorded"][1])
        # On a GPU the same is a failure: no steps, no gather kernels.
        check = checker()
        check.sample_checks(sample, (broken, (None, advice)), (no_kernels, (None, fixed_advice)))
        self.assertEqual(check.report.checks["sample sync_batchnorm: recorded"][0], "fail")
        self.assertEqual(check.report.checks["sample sync_batchnorm: signal"][0], "fail")

    def test_a_failed_recording_skips_the_rest(self):
        sample = next(s for s in gpu_check.SAMPLES if s.name == "anomaly")
        check = checker()
        check.sample_checks(sample, ("/nonexistent.db", ("tuneup record killed by SIGSEGV: …", None)),
                            ("/nonexistent2.db", (None, self.advice([]))))
        self.assertEqual(check.report.checks["sample anomaly: recorded"][0], "fail")
        self.assertIn("SIGSEGV", check.report.checks["sample anomaly: recorded"][1])
        self.assertEqual(check.report.checks["sample anomaly: finding"][0], "skipped")


class Fixtures(unittest.TestCase):
    """The archive keeps the capture workload's raw CUPTI buffers (TUNEUP_CUPTI_DUMP) after the recordings."""

    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="gpu_check_test.")

    def tearDown(self):
        shutil.rmtree(self.dir)

    def test_cupti_buffers_are_kept(self):
        work, out = os.path.join(self.dir, "work"), os.path.join(self.dir, "out")
        for d in (os.path.join(work, "logs"), os.path.join(work, "capture", "cupti"), out):
            os.makedirs(d)
        capture_recording(os.path.join(work, "capture", "capture.db"))
        buffers = []
        for i in range(3):
            path = os.path.join(work, "capture", "cupti", "cupti.pid7.%05d.bin" % i)
            with open(path, "wb") as f:
                f.write(b"TUCUPTIB" + bytes(1 << 20))
            buffers.append(("cupti/" + os.path.basename(path), path))
        check = gpu_check.Check(types.SimpleNamespace(out=out), FakeReport(), types.SimpleNamespace(work=work))
        check.gpu = "NVIDIA H100 80GB HBM3"
        check.fixtures = [("capture/capture.db", os.path.join(work, "capture", "capture.db"))] + buffers
        check.write_fixtures()
        status, detail = check.report.checks["fixtures: recordings kept"]
        self.assertEqual(status, "pass", detail)
        self.assertIn("1 recordings, 3 CUPTI buffers", detail)
        with gpu_check.tarfile.open(os.path.join(out, "fixtures.tar.gz")) as archive:
            self.assertEqual(sorted(n for n in archive.getnames() if n.startswith("cupti/")), [n for n, _ in buffers])
        self.assertTrue(any("3 raw CUPTI buffers" in n for n in check.report.data["notes"]))


class Overhead(unittest.TestCase):
    def test_within_the_limit_or_the_noise(self):
        self.assertEqual(gpu_check.overhead_problems({"plain": [10.0, 10.1, 10.2], "tuneup": [10.3, 10.4, 10.2]}, 5),
                         [])
        # 8 % over, but plain itself spreads 10 %: noise, not overhead.
        self.assertEqual(gpu_check.overhead_problems({"plain": [10.0, 11.0, 10.2], "tuneup": [11.0, 11.0, 11.0]}, 5),
                         [])

    def test_too_much(self):
        problems = gpu_check.overhead_problems({"plain": [10.0, 10.1, 10.0], "tuneup": [11.0, 11.2, 11.1]}, 5)
        self.assertEqual(len(problems), 1)
        self.assertIn("tuneup adds 11.0 %", problems[0])


class Elf(unittest.TestCase):
    def test_python_itself(self):
        info = gpu_check.elf_needs(os.path.realpath(sys.executable))
        self.assertFalse(info["static"])
        self.assertIn("libc.so.6", info["needed"])
        self.assertTrue(info["glibc"] and info["glibc"][0][0] == 2)

    def test_not_elf(self):
        with self.assertRaises(ValueError):
            gpu_check.elf_needs(os.path.abspath(__file__))


class Searches(unittest.TestCase):
    def test_backend_plans_and_legacy_finds(self):
        db = sqlite3.connect(":memory:")
        db.executescript(SCHEMA)
        db.execute("insert into strings values (1, 'cudnnBackendExecute')")
        rows = [(2, 1, p) for p in (1, 2, 3, 2, 2)] + [(1, 2, None)]
        for i, (api, kind, plan) in enumerate(rows):
            db.execute("insert into conv_calls (start_ns, end_ns, tid, api, name_id, call_kind, direction, n, c, h, w, "
                       "k, filter_c, r, s, algo_source, plan_id, status) values (?, ?, 1, ?, 1, ?, 1, 32, 3, 32, 32, "
                       "16, 3, 3, 3, 2, ?, 0)", (i, i + 1, api, kind, plan))
        self.assertEqual(db.execute(sample_specs.CONV_SEARCHES).fetchone()[0], 2)


class SampleChoice(unittest.TestCase):
    """--samples: a few samples, or a clear usage error."""

    def run_check(self, *args):
        import subprocess
        return subprocess.run([sys.executable, os.path.join(DRIVER, "gpu_check.py"), "out", *args],
                              capture_output=True, text=True)

    def test_an_unknown_sample_is_a_usage_error(self):
        done = self.run_check("--samples", "zero_grad_fill,nope")
        self.assertEqual(done.returncode, 2, done.stderr)
        self.assertIn("no such sample nope", done.stderr)
        self.assertIn("zero_grad_fill", done.stderr)

    def test_an_empty_list_is_a_usage_error(self):
        done = self.run_check("--samples", ",")
        self.assertEqual(done.returncode, 2, done.stderr)
        self.assertIn("name at least one", done.stderr)

    def test_samples_left_out_say_so(self):
        report = FakeReport()
        args = types.SimpleNamespace(samples=[], jobs=1)
        check = gpu_check.Check(args, report, None)
        check.samples()
        left = [name for name, (status, detail) in report.checks.items()
                if status == "skipped" and detail == "left out by --samples"]
        self.assertEqual(len(left), len(sample_specs.SAMPLES))


if __name__ == "__main__":
    unittest.main()
