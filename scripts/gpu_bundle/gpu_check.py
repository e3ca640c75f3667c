"""gpu-check: the GPU bundle's check driver (scripts/gpu-bundle.sh builds the bundle; docs/gpu-check.md).

    gpu-check OUT [--python PY] [--budget SECONDS] [--jobs N] [--steps N] [--overhead-reps N]
                  [--max-overhead PERCENT] [--samples NAME,...] [--work DIR]

Records, with the bundle's own `tuneup` and agent, a capture workload that does each kind of GPU work a
known number of times, a driver-API program, every Python sample and its --fixed twin, and a run that
starts torch.profiler halfway; checks what each recording holds and what `tuneup advise --format json`
finds; measures the agent's overhead on a ResNet-style training step (plain, `tuneup record`,
torch.profiler; interleaved runs). Writes OUT/report.json ({"gpu": name or null, "checks": [{"name",
"status": "pass"|"fail"|"skipped", "detail"}], ...}, rewritten after every check), OUT/summary.txt, and
OUT/fixtures.tar.gz (the recordings, logs and a torch.profiler trace, at most 15 MiB). Without a GPU every
check that needs one is "skipped" with the reason, and the rest run on the CPU.

Uses nothing outside the bundle but the Python it runs under (or --python), which must import torch.
Exit status: 0 when no check failed, 1 when one did, 2 on a usage error.
"""

import argparse
import concurrent.futures
import gzip
import json
import os
import shutil
import sqlite3
import statistics
import sys
import tarfile
import tempfile
import time

from bundle_files import (BUNDLE, CUDA_CHECK, DRIVER, FIXTURES_LIMIT, GLIBC_LIBRARIES, MANIFEST, SAMPLES_DIR, TUNEUP,
                          elf_needs, glibc_text, machine_glibc, sha256, write_manifest)
from check_support import Db, OutOfTime, Report, Runner, compressed_size, exit_text, overhead_problems, tail
from capture_checks import CaptureChecks
from sample_specs import SAMPLES


# --- The checks ------------------------------------------------------------------------------------------

class Check(CaptureChecks):
    """Runs the checks in order; each one's failure is its own (an exception fails that check only)."""

    def __init__(self, args, report, runner):
        self.args, self.report, self.runner = args, report, runner
        self.gpu = None  # the GPU's name when torch sees one
        self.no_gpu = "no GPU"
        self.fixtures = []  # (path inside the archive, file), in order of importance

    def guard(self, name, function, *a):
        try:
            function(*a)
        except OutOfTime as e:
            self.report.add(name, "skipped", str(e))
        except Exception as e:  # a check that breaks fails alone, saying why
            self.report.add(name, "fail", "%s: %s" % (type(e).__name__, e))

    def need_gpu(self, name):
        if self.gpu is None:
            self.report.add(name, "skipped", self.no_gpu)
            return False
        return True

    # The bundle and the machine.
    def bundle(self):
        path = os.path.join(BUNDLE, MANIFEST)
        if not os.path.isfile(path):
            self.report.add("bundle: files intact", "fail", "%s is missing: rebuild the bundle with scripts/gpu-bundle.sh"
                            % path)
            return
        with open(path) as f:
            manifest = json.load(f)
        self.report.data["bundle"] = {k: manifest.get(k) for k in ("tuneup_version", "git_commit", "built_at",
                                                                   "built_with_glibc", "bytes")}
        bad = []
        for relative, entry in sorted(manifest["files"].items()):
            file = os.path.join(BUNDLE, relative)
            if not os.path.isfile(file):
                bad.append(relative + " missing")
            elif os.path.getsize(file) != entry["bytes"] or sha256(file) != entry["sha256"]:
                bad.append(relative + " changed")
        if bad:
            self.report.add("bundle: files intact", "fail", "; ".join(bad[:8]) + ": copy the whole bundle again")
        else:
            self.report.add("bundle: files intact", "pass", "%d files, %.1f MiB, as built" % (
                len(manifest["files"]), manifest["bytes"] / 1048576.0))
        have = machine_glibc()
        problems, needs = [], []
        for relative in sorted(manifest["binaries"]):
            file = os.path.join(BUNDLE, relative)
            if not os.path.isfile(file):
                continue
            info = elf_needs(file)
            newest = info["glibc"][-1] if info["glibc"] else None
            needs.append("%s %s" % (relative, "static" if info["static"] else "glibc " + glibc_text(newest)))
            foreign = [n for n in info["needed"] if n not in GLIBC_LIBRARIES]
            if foreign:
                problems.append("%s needs %s" % (relative, ", ".join(foreign)))
            if newest and have and newest > have:
                problems.append("%s needs glibc %s, this machine has %s" % (relative, glibc_text(newest),
                                                                              glibc_text(have)))
        if problems:
            self.report.add("bundle: runs on this machine's glibc", "fail", "; ".join(problems)
                            + ": build the bundle on a machine whose glibc is not newer than this one's")
        else:
            self.report.add("bundle: runs on this machine's glibc", "pass", "glibc %s; %s" % (glibc_text(have),
                                                                                                ", ".join(needs)))
        code, log = self.runner.run("tuneup-version", [TUNEUP, "--version"], 30)
        want = "tuneup %s" % manifest.get("tuneup_version")
        if code == 0 and log.strip().splitlines()[-1].strip() == want:
            self.report.add("bundle: tuneup runs", "pass", want)
        else:
            self.report.add("bundle: tuneup runs", "fail", "%s, wanted '%s': %s" % (exit_text(code), want, tail(log)))

    def machine(self):
        probe = os.path.join(DRIVER, "probe.py")
        code, log = self.runner.run("probe", [self.args.python, probe], 120)
        lines = [l for l in log.splitlines() if l.startswith("{")]
        if code != 0 or not lines:
            self.no_gpu = "no GPU: %s cannot import torch" % self.args.python
            raise RuntimeError("%s cannot run the probe (%s): %s; point --python (or PYTHON) at a Python "
                               "with PyTorch" % (self.args.python, exit_text(code), tail(log)))
        m = json.loads(lines[-1])
        m["glibc"] = glibc_text(machine_glibc())
        self.report.data["machine"] = m
        if m.get("cuda_available"):
            self.gpu = m.get("gpu_name")
            self.report.data["gpu"] = self.gpu
        else:
            self.no_gpu = "no GPU: %s" % m.get("no_gpu_reason")
            m["no_gpu_reason"] = m.get("no_gpu_reason")
        self.report.add("machine: Python with torch", "pass", "Python %s, torch %s, CUDA %s, cuDNN %s, GPU %s" % (
            m["python"], m["torch"], m.get("torch_cuda") or "-", m.get("cudnn") or "-",
            self.gpu or "none (%s)" % m.get("no_gpu_reason")))

    # The driver-API program (no PyTorch).
    def cuda_check(self):
        name = "cuda_check: driver API kernels, copies, memset, syncs"
        if not os.path.isfile(CUDA_CHECK):
            self.report.add(name, "skipped", "bin/cuda_check is not in this bundle")
            return
        if not self.need_gpu(name):
            return
        db = os.path.join(self.runner.work, "capture", "cuda_check.db")
        code, log = self.runner.record("cuda_check", db, [CUDA_CHECK], 120)
        self.fixtures.append(("capture/cuda_check.db", db))
        if code != 0:
            self.report.add(name, "fail", "tuneup record %s: %s" % (exit_text(code), tail(log)))
            return
        d = Db(db)
        want = [("capture.cuda on", "select value = 'on' from meta where key = 'capture.cuda'", "v == 1"),
                ("10 kernels", "select count(*) from kernels", "v == 10"),
                ("kernel times sane", "select count(*) from kernels where end_ns > start_ns and "
                 "end_ns - start_ns < 1000000000", "v == 10"),
                ("pageable HtoD", "select count(*) from memcpys where copy_kind = 1 and src_kind = 1", "v >= 1"),
                ("pinned HtoD", "select count(*) from memcpys where copy_kind = 1 and src_kind = 2", "v >= 1"),
                ("DtoH", "select count(*) from memcpys where copy_kind = 2", "v >= 1"),
                ("memset", "select count(*) from memsets", "v >= 1"),
                ("syncs", "select count(*) from syncs", "v >= 1"),
                ("driver API records", "select count(*) from api_calls where api = 2", "v >= 10"),
                ("launches correlate", "select count(*) from kernels k join api_calls a using (correlation_id)",
                 "v == 10"),
                ("nothing dropped", "select coalesce(sum(value), 0) from stats where severity = 'data_loss'", "v == 0")]
        problems, seen = [], []
        for label, sql, test in want:
            try:
                v = d.scalar(sql)
            except sqlite3.Error as e:
                v = "SQL error: %s" % e
            seen.append("%s %s" % (label, v))
            if not isinstance(v, (int, float)) or not eval(test, {}, {"v": v}):
                problems.append("%s: %s (want %s)" % (label, v, test))
        self.verdict(name, problems, ", ".join(seen))

    # torch.profiler starting halfway: CUPTI's other client.
    def profiler(self):
        survive = "torch.profiler halfway: the run survives"
        said = "torch.profiler halfway: lost capture is reported"
        if self.gpu is None:
            for name in (survive, said):
                self.report.add(name, "skipped", self.no_gpu + " (on the CPU torch.profiler does not use CUPTI)")
            return
        db = os.path.join(self.runner.work, "capture", "profiler.db")
        done_path = os.path.join(self.runner.work, "capture", "profiler.done.json")
        at, during, steps = 5, 5, 15
        code, log = self.runner.record("profiler", db, [self.args.python, os.path.join(DRIVER, "capture_workload.py"),
                                                        "--report", done_path, "--steps", str(steps), "--profiler-at",
                                                        str(at), "--profiler-steps", str(during)], 300)
        self.fixtures.append(("capture/profiler.db", db))
        if code != 0 or not os.path.isfile(done_path):
            self.report.add(survive, "fail", "tuneup record %s: %s" % (exit_text(code), tail(log)))
            self.report.add(said, "skipped", "the run did not finish")
            return
        self.profiler_checks(Db(db), at, during, steps)

    def profiler_checks(self, d, at, during, steps):
        survive = "torch.profiler halfway: the run survives"
        said = "torch.profiler halfway: lost capture is reported"

        def mark(text):
            return d.scalar("select m.ts_ns from nvtx_marks m join strings s on s.id = m.name_id where s.value = ?", text)

        start, stop = mark("capture.profiler_start"), mark("capture.profiler_stop")
        if start is None or stop is None:
            self.report.add(survive, "fail", "the marks capture.profiler_start/stop are missing")
            self.report.add(said, "skipped", "the profiler's marks are missing")
            return
        # Kernels per step, by when they were launched; step 0 holds cuDNN's search, so the steady rate is
        # that of steps 1 to at-1.
        per_step = [n for _, n in d.rows(
            "select r.id, (select count(*) from kernels k join api_calls a using (correlation_id) where a.start_ns "
            "between r.start_ns and r.end_ns) from nvtx_ranges r join strings s on s.id = r.name_id where s.value = "
            "'step' order by r.start_ns")]
        if len(per_step) != steps:
            self.report.add(survive, "fail", "%d step ranges, want %d" % (len(per_step), steps))
            self.report.add(said, "skipped", "the steps cannot be told apart")
            return
        steady = statistics.median(per_step[1:at])
        while_on = statistics.median(per_step[at:at + during])
        after = statistics.median(per_step[at + during:])
        problems = []
        if not d.complete():
            problems.append("the file is incomplete")
        if steady == 0:
            problems.append("no kernel before torch.profiler started")
        capture = d.meta("capture.cuda")
        detail = "kernels per step (median): %g before torch.profiler, %g while it ran (%d steps), %g after; " \
                 "capture.cuda = %r" % (steady, while_on, during, after, capture)
        self.verdict(survive, problems, detail)
        lost = while_on < 0.8 * steady or after < 0.8 * steady
        cuda_meta = d.metas("capture.cuda")
        loss_stats = d.rows("select name, value from stats where severity = 'data_loss' and value > 0")
        told = capture != "on" or len(cuda_meta) > 1 or loss_stats or any(
            "profil" in (v or "") for v in d.metas("cupti.").values())
        if not lost:
            self.report.add(said, "pass", "nothing was lost: " + detail)
        else:
            self.verdict(said, [] if told else ["kernels were lost while torch.profiler ran, and the file does not say "
                                                "so (issue 13, defect 2)"],
                         "meta %s; data loss %s" % (cuda_meta, loss_stats or "none"))

    # Samples and their twins.
    def samples(self):
        jobs = []
        chosen = [sample for sample in SAMPLES if sample.name in self.args.samples]
        for sample in SAMPLES:
            if sample not in chosen:
                self.report.add("sample %s: recorded" % sample.name, "skipped", "left out by --samples")
        for sample in chosen:
            argv = (sample.gpu_args if self.gpu else sample.cpu_args).split()
            for fixed in (False, True):
                db = os.path.join(self.runner.work, "samples", sample.name, "fixed.db" if fixed else "broken.db")
                command = [self.args.python] + sample.launcher() + [os.path.join(SAMPLES_DIR, sample.name + ".py")] + (
                    argv + (["--fixed"] if fixed else []))
                jobs.append((sample, fixed, db, command))
        results = {}

        def one(job):
            sample, fixed, db, command = job
            label = "%s%s" % (sample.name, ".fixed" if fixed else "")
            files = sample.files(db)
            try:
                code, log = self.runner.record("sample." + label, db, command, 300)
                if code != 0:
                    return files[0], ("tuneup record %s: %s" % (exit_text(code), tail(log)), None)
                missing = [f for f in files if not os.path.isfile(f)]
                if missing:
                    return files[0], ("no recording %s: %s" % (", ".join(missing), tail(log)), None)
                # Without a GPU, a pattern may cost too little on the CPU to clear the materiality floor (a fill of
                # four small layers): --all holds each rule to its pattern there, as pattern_samples_test does.
                return files[0], (None, self.runner.advise("sample." + label, *files, *([] if self.gpu else ["--all"])))
            except (OutOfTime, RuntimeError, ValueError, OSError) as e:
                return files[0], (str(e), None)

        with concurrent.futures.ThreadPoolExecutor(self.args.jobs) as pool:
            for job, (first, result) in zip(jobs, pool.map(one, jobs)):
                results[(job[0].name, job[1])] = (first, result)
        for sample in chosen:
            self.guard("sample %s" % sample.name, self.sample_checks, sample, results[(sample.name, False)],
                       results[(sample.name, True)])

    def sample_checks(self, sample, broken, fixed):
        prefix = "sample %s: " % sample.name
        runs = {False: broken, True: fixed}
        for twin, (db, _) in runs.items():
            if os.path.isfile(db):
                self.fixtures.append(("samples/%s/%s" % (sample.name, os.path.basename(db)), db))
        errors = ["%s: %s" % ("--fixed" if twin else "sample", error) for twin, (_, (error, _)) in runs.items() if error]
        if errors:
            self.report.add(prefix + "recorded", "fail", "; ".join(errors))
            for what in ["settings"] * bool(sample.settings) + ["signal"] * bool(sample.signals) + ["finding"]:
                self.report.add(prefix + what, "skipped", "the recording failed")
            return
        dbs = {twin: Db(db) for twin, (db, _) in runs.items()}
        advice = {twin: result[1] for twin, (_, result) in runs.items()}
        problems, parts = [], []
        for twin in (False, True):
            steps = advice[twin]["inputs"][0]["steps"]["count"]
            if twin and self.gpu is None and not sample.fixed_trains_on_cpu:
                parts.append("--fixed: no training on the CPU (it needs a GPU)")
            elif steps < 3:
                problems.append("%s: %d steps found" % ("--fixed" if twin else "sample", steps))
            if not dbs[twin].complete():
                problems.append("%s: the file is incomplete" % ("--fixed" if twin else "sample"))
            parts.append("%s: %d steps, %s" % ("--fixed" if twin else "sample", steps, dbs[twin].summary()))
        self.verdict(prefix + "recorded", problems, "; ".join(parts))

        if sample.settings:
            problems, parts = [], []
            for name, want_broken, want_fixed in sample.settings:
                got = [advice[t]["inputs"][0].get("recorded_settings", {}).get(name, "(not recorded)")
                       for t in (False, True)]
                parts.append("%s %s / %s" % (name, got[0], got[1]))
                if got != [want_broken, want_fixed]:
                    problems.append("%s is %s / %s, want %s / %s" % (name, got[0], got[1], want_broken, want_fixed))
            self.verdict(prefix + "settings", problems, "sample / --fixed: " + ", ".join(parts))

        signals = [s for s in sample.signals if self.gpu or not s.gpu]
        if sample.signals and not signals:
            self.report.add(prefix + "signal", "skipped", self.no_gpu + " (the signal is GPU work)")
        elif signals:
            problems, parts = [], []
            for signal_ in signals:
                for twin, test in ((False, signal_.broken), (True, signal_.fixed)):
                    if test is None:
                        continue
                    v = signal_.value(dbs[twin])
                    ok = v is not None and eval(test, {}, {"v": v})
                    text = "%s%s = %s (want %s)" % (signal_.label, " --fixed" if twin else "",
                                                    "%.3g" % v if isinstance(v, float) else v, test)
                    parts.append(text)
                    if not ok:
                        problems.append(text)
            self.verdict(prefix + "signal", problems, "; ".join(parts))

        if not sample.rule:
            self.report.add(prefix + "finding", "skipped", sample.no_rule)
        elif self.gpu is None and not sample.rule_on_cpu:
            self.report.add(prefix + "finding", "skipped", "%s (%s's signal is GPU work)" % (self.no_gpu, sample.rule))
        else:
            raised = [sorted({f["rule"] for f in advice[t].get("findings", [])}) for t in (False, True)]
            problems = []
            if sample.rule not in raised[0]:
                why = [r for r in advice[False].get("rules_without_findings", []) if r.get("rule") == sample.rule]
                problems.append("%s does not fire on the sample%s" % (sample.rule, (" (%s: %s)" % (
                    why[0].get("status"), why[0].get("why") or why[0].get("reason"))) if why else ""))
            if sample.rule in raised[1]:
                problems.append("%s fires on --fixed" % sample.rule)
            self.verdict(prefix + "finding", problems, "%s; findings: sample [%s], --fixed [%s]" % (
                sample.rule, ", ".join(raised[0]) or "none", ", ".join(raised[1]) or "none"))

    # The agent's overhead on a ResNet-style step, and the profiler's trace.
    def overhead(self):
        name = "overhead: tuneup record on a ResNet-style step"
        trace_check = "torch.profiler trace: tuneup advise reads it"
        work = os.path.join(self.runner.work, "overhead")
        os.makedirs(work, exist_ok=True)
        if self.gpu:
            size_args = ["--batch", "64", "--size", "224", "--width", "64", "--steps", "30", "--warmup", "10"]
            reps = self.args.overhead_reps
        else:  # the CPU here only exercises the measurement
            size_args = ["--batch", "2", "--size", "32", "--width", "8", "--steps", "5", "--warmup", "2"]
            reps = 1
        variants = ("plain", "tuneup", "profiler")
        medians = {v: [] for v in variants}
        trace = os.path.join(work, "profiler.pt.trace.json")
        started = time.monotonic()
        rounds = 0
        for rep in range(reps):
            if rep:
                per_round = (time.monotonic() - started) / rep
                if self.runner.left() - 60 < per_round:
                    self.report.note("overhead: %d of %d rounds fit in the time budget" % (rep, reps))
                    break
            order = variants[rep % 3:] + variants[:rep % 3]  # interleaved, each variant first in turn
            for variant in order:
                result = os.path.join(work, "%s.%d.json" % (variant, rep))
                command = [self.args.python, os.path.join(DRIVER, "overhead_step.py"), "--report", result] + size_args
                label = "overhead.%s.%d" % (variant, rep)
                if variant == "tuneup":
                    db = os.path.join(work, "tuneup.%d.db" % rep)
                    code, log = self.runner.record(label, db, command, 300)
                    if rep == 0:
                        self.fixtures.append(("overhead/tuneup.db", db))
                else:
                    if variant == "profiler":
                        command += ["--profiler"] + (["--trace", trace] if rep == 0 else [])
                    code, log = self.runner.run(label, command, 300)
                if code != 0:
                    raise RuntimeError("%s run %d %s: %s" % (variant, rep, exit_text(code), tail(log)))
                with open(result) as f:
                    times = json.load(f)["step_ms"]
                medians[variant].append(statistics.median(times))
            rounds += 1
        text = self.overhead_text(medians, rounds, size_args)
        self.report.data["overhead"] = dict(text=text, rounds=rounds, step_ms_median_per_run=medians,
                                            workload=" ".join(size_args), device=self.gpu or "cpu")
        if not self.gpu:
            self.report.add(name, "skipped", "%s; measured on the CPU only to exercise the measurement: %s" % (
                self.no_gpu, text))
        elif rounds < 3:
            self.report.add(name, "fail", "only %d rounds fit in the time budget (3 needed for a spread): %s" % (
                rounds, text))
        else:
            self.verdict(name, overhead_problems(medians, self.args.max_overhead), text)
        self.guard(trace_check, self.profiler_trace, trace_check, trace)

    @staticmethod
    def overhead_text(medians, rounds, size_args):
        plain = statistics.median(medians["plain"])
        parts = []
        for variant, label in (("plain", "plain"), ("tuneup", "tuneup record"), ("profiler", "torch.profiler")):
            m = statistics.median(medians[variant])
            spread = "%.2f-%.2f" % (min(medians[variant]), max(medians[variant]))
            parts.append("%s %.2f ms [%s]%s" % (label, m, spread, "" if variant == "plain" else " (%+.1f %%)" % (
                (m / plain - 1.0) * 100.0)))
        return "median step over %d interleaved rounds (%s): %s" % (rounds, " ".join(size_args), "; ".join(parts))

    def profiler_trace(self, name, trace):
        if not self.report.data["machine"].get("kineto"):
            self.report.add(name, "skipped", "torch %s is built without Kineto: its profiler writes the legacy "
                            "trace format, not the Kineto JSON tuneup reads" % self.report.data["machine"]["torch"])
            return
        if not os.path.isfile(trace):
            self.report.add(name, "fail", "torch.profiler wrote no trace")
            return
        with open(trace, "rb") as src, open(trace + ".gz", "wb") as raw:
            with gzip.GzipFile(fileobj=raw, mode="wb", compresslevel=6, mtime=0) as dst:
                shutil.copyfileobj(src, dst)
        self.fixtures.append(("overhead/profiler.pt.trace.json.gz", trace + ".gz"))
        advice = self.runner.advise("trace", trace + ".gz")
        steps = advice["inputs"][0]["steps"]
        self.verdict(name, [] if steps["count"] >= 3 else ["%d steps found" % steps["count"]],
                     "%d steps (%s), %d findings, %.1f MiB gzipped" % (
                         steps["count"], steps.get("source"), len(advice.get("findings", [])),
                         os.path.getsize(trace + ".gz") / 1048576.0))

    # Fixtures: what to keep as tests' inputs, in one archive (the device tool brings back few files).
    def write_fixtures(self):
        name = "fixtures: recordings kept"
        path = os.path.join(self.args.out, "fixtures.tar.gz")
        logs = os.path.join(self.runner.work, "logs")
        entries = list(self.fixtures) + [("logs/" + n, os.path.join(logs, n)) for n in sorted(os.listdir(logs))]
        kept, left_out, seen, total = [], [], set(), 0
        for arcname, file in entries:  # in order of importance, as many as fit once compressed
            if arcname in seen or not os.path.isfile(file):
                continue
            seen.add(arcname)
            size = compressed_size(file) + 1024
            if total + size > FIXTURES_LIMIT - 256 * 1024:
                left_out.append(arcname)
                continue
            total += size
            kept.append((arcname, file))
        with tarfile.open(path + ".tmp", "w:gz", compresslevel=6) as archive:
            for arcname, file in kept:
                archive.add(file, arcname)
        kept = [arcname for arcname, _ in kept]
        os.replace(path + ".tmp", path)
        size = os.path.getsize(path)
        self.report.data["fixtures"] = dict(file="fixtures.tar.gz", bytes=size, files=kept, left_out=left_out)
        buffers = sum(k.startswith("cupti/") for k in kept)
        self.report.note("%d raw CUPTI buffers of the capture workload are among the fixtures (cupti/*.bin: "
                         "tests/fixtures/cupti_buffers/README.md)%s" % (
                             buffers, "" if buffers or self.gpu else "; none without a GPU"))
        problems = [] if size <= FIXTURES_LIMIT else ["%.1f MiB, over the 15 MiB the device tool brings back" % (
            size / 1048576.0)]
        dbs = sum(k.endswith(".db") for k in kept)
        self.verdict(name, problems, "fixtures.tar.gz: %d recordings, %d CUPTI buffers and %d other files, "
                     "%.1f MiB%s" % (dbs, buffers, len(kept) - dbs - buffers, size / 1048576.0,
                                     ("; left out: " + ", ".join(left_out)) if left_out else ""))


def main():
    parser = argparse.ArgumentParser(prog="gpu-check", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("out", nargs="?", help="folder for report.json, summary.txt and fixtures.tar.gz")
    parser.add_argument("--python", default=os.environ.get("PYTHON") or sys.executable,
                        help="the Python with PyTorch that runs the workloads (default: $PYTHON, else this one)")
    parser.add_argument("--budget", type=int, default=540, help="seconds for everything (default 540)")
    parser.add_argument("--jobs", type=int, default=0, help="recordings at a time (default: 4 with 8 cores or more)")
    parser.add_argument("--steps", type=int, default=20, help="steps of the capture workload (default 20)")
    parser.add_argument("--overhead-reps", type=int, default=5, help="interleaved rounds (default 5)")
    parser.add_argument("--max-overhead", type=float, default=5.0,
                        help="the overhead check fails above this many percent (default 5)")
    parser.add_argument("--samples", default="all", metavar="NAME,...",
                        help="the samples to record with their twins (default: all; the CPU test of the bundle "
                             "records a few: tests/gpu/bundle_test.sh)")
    parser.add_argument("--work", help="keep the recordings and logs here (default: a temporary folder, removed)")
    parser.add_argument("--write-manifest", metavar="VERSION:COMMIT", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.write_manifest:
        version, _, commit = args.write_manifest.partition(":")
        manifest = write_manifest(BUNDLE, version, commit)
        print("%d files, %d bytes" % (len(manifest["files"]), manifest["bytes"]))
        return 0
    if not args.out:
        parser.error("say where to write the report: gpu-check OUT")
    if args.budget < 60 or args.steps < 2 or args.overhead_reps < 1:
        parser.error("--budget must be at least 60, --steps at least 2, --overhead-reps at least 1")
    names = [s.name for s in SAMPLES]
    args.samples = names if args.samples == "all" else [n for n in args.samples.split(",") if n]
    unknown = [n for n in args.samples if n not in names]
    if unknown or not args.samples:
        parser.error("--samples: %s; the samples are %s, or all" % (
            "no such sample " + ", ".join(unknown) if unknown else "name at least one", ", ".join(names)))
    if args.jobs <= 0:
        args.jobs = 4 if (os.cpu_count() or 1) >= 8 else 1
    args.out = os.path.abspath(args.out)
    os.makedirs(args.out, exist_ok=True)
    for stale in ("report.json", "summary.txt", "fixtures.tar.gz"):
        if os.path.exists(os.path.join(args.out, stale)):
            os.remove(os.path.join(args.out, stale))
    work = os.path.abspath(args.work) if args.work else tempfile.mkdtemp(prefix="tuneup-gpu-check.")
    os.makedirs(work, exist_ok=True)
    report = Report(args.out)
    runner = Runner(args, work)
    check = Check(args, report, runner)
    print("gpu-check: bundle %s, work in %s, report in %s" % (BUNDLE, work, args.out), flush=True)
    try:
        check.guard("bundle", check.bundle)
        check.guard("machine: Python with torch", check.machine)
        if report.data["machine"]:
            check.guard("capture: recorded", check.capture)
            check.guard("cuda_check: driver API kernels, copies, memset, syncs", check.cuda_check)
            check.guard("samples", check.samples)
            check.guard("torch.profiler halfway: the run survives", check.profiler)
            check.guard("overhead: tuneup record on a ResNet-style step", check.overhead)
        else:
            report.note("nothing was recorded: the Python (%s) cannot import torch" % args.python)
        check.guard("fixtures: recordings kept", check.write_fixtures)
    finally:
        report.save()
        with open(os.path.join(args.out, "summary.txt"), "w") as f:
            f.write(report.summary())
        if not args.work:
            shutil.rmtree(work, ignore_errors=True)
    print("\n" + report.summary(), end="", flush=True)
    return 1 if report.failed() else 0


if __name__ == "__main__":
    sys.exit(main())
