"""gpu-check: the GPU bundle's check driver (scripts/gpu-bundle.sh builds the bundle; docs/gpu-check.md).

    gpu-check OUT [--python PY] [--budget SECONDS] [--jobs N] [--steps N] [--overhead-reps N]
                  [--max-overhead PERCENT] [--work DIR]

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
import hashlib
import json
import os
import pathlib
import shutil
import signal
import sqlite3
import statistics
import struct
import subprocess
import sys
import tarfile
import tempfile
import threading
import time
import zlib

BUNDLE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DRIVER = os.path.join(BUNDLE, "driver")
TUNEUP = os.path.join(BUNDLE, "bin", "tuneup")
AGENT = os.path.join(BUNDLE, "lib", "libtuneup-agent.so")
CUDA_CHECK = os.path.join(BUNDLE, "bin", "cuda_check")
SAMPLES_DIR = os.path.join(BUNDLE, "samples", "python")
MANIFEST = "MANIFEST.json"
FIXTURES_LIMIT = 15 << 20  # the device tool brings back files of at most 16 MiB
CUPTI_DUMP_MB = 4  # raw CUPTI buffers of the capture workload; mostly zeros, they compress well

# Libraries a self-contained bundle binary may need: glibc's own.
GLIBC_LIBRARIES = {"libc.so.6", "libm.so.6", "libdl.so.2", "libpthread.so.0", "librt.so.1", "ld-linux-x86-64.so.2",
                   "ld-linux-aarch64.so.1"}


# --- ELF: what a binary needs from the machine -------------------------------------------------------------

def elf_needs(path):
    """The shared libraries (DT_NEEDED) and glibc symbol versions (GLIBC_x.y) an ELF64 file needs.
    Returns dict(static=bool, needed=[...], glibc=[(2, 34), ...]); raises ValueError on a file that
    is not ELF64 little-endian."""
    with open(path, "rb") as f:
        data = f.read()
    if data[:4] != b"\x7fELF" or data[4] != 2 or data[5] != 1:
        raise ValueError("%s is not a 64-bit little-endian ELF file" % path)
    shoff, = struct.unpack_from("<Q", data, 0x28)
    shentsize, shnum, _shstrndx = struct.unpack_from("<HHH", data, 0x3A)
    sections = []
    for i in range(shnum):
        _name, kind, _flags, _addr, offset, size, link, _info, _align, entsize = struct.unpack_from(
            "<IIQQQQIIQQ", data, shoff + i * shentsize)
        sections.append((kind, offset, size, link, entsize))

    def string(table, at):
        _, offset, size, _, _ = sections[table]
        end = data.index(b"\0", offset + at)
        return data[offset + at:end].decode()

    needed, versions, dynamic = [], set(), False
    for kind, offset, size, link, _ in sections:
        if kind == 6:  # SHT_DYNAMIC
            dynamic = True
            for at in range(offset, offset + size, 16):
                tag, value = struct.unpack_from("<qQ", data, at)
                if tag == 0:
                    break
                if tag == 1:  # DT_NEEDED
                    needed.append(string(link, value))
        elif kind == 0x6FFFFFFE:  # SHT_GNU_verneed
            at = offset
            while True:
                _version, count, _file, aux, nxt = struct.unpack_from("<HHIII", data, at)
                a = at + aux
                for _ in range(count):
                    _hash, _flags, _other, name, anext = struct.unpack_from("<IHHII", data, a)
                    text = string(link, name)
                    if text.startswith("GLIBC_") and text[6:].replace(".", "").isdigit():
                        versions.add(tuple(int(p) for p in text[6:].split(".")))
                    a += anext
                if not nxt:
                    break
                at += nxt
    return dict(static=not dynamic, needed=needed, glibc=sorted(versions))


def glibc_text(version):
    return ".".join(str(p) for p in version) if version else "none"


def machine_glibc():
    try:
        name, version = os.confstr("CS_GNU_LIBC_VERSION").split()
        return tuple(int(p) for p in version.split(".")[:2]) if name == "glibc" else None
    except (ValueError, OSError, AttributeError):
        return None


# --- The bundle's manifest (written by scripts/gpu-bundle.sh through --write-manifest) ---------------------

def sha256(path):
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def write_manifest(root, version, commit):
    files, binaries = {}, {}
    for folder, _, names in os.walk(root):
        for name in sorted(names):
            path = os.path.join(folder, name)
            relative = os.path.relpath(path, root)
            if relative == MANIFEST or "__pycache__" in relative:
                continue
            files[relative] = dict(bytes=os.path.getsize(path), sha256=sha256(path))
            with open(path, "rb") as f:
                if f.read(4) == b"\x7fELF":
                    info = elf_needs(path)
                    foreign = [n for n in info["needed"] if n not in GLIBC_LIBRARIES]
                    if foreign:
                        raise SystemExit("gpu-bundle: %s needs %s, which a machine with only glibc lacks: it must be "
                                         "linked statically (tuneup-static) or carry them" % (relative, ", ".join(foreign)))
                    binaries[relative] = dict(static=info["static"], needed=info["needed"],
                                              glibc=glibc_text(info["glibc"][-1] if info["glibc"] else None))
    manifest = dict(tuneup_version=version, git_commit=commit, built_at=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                    built_with_glibc=glibc_text(machine_glibc()), bytes=sum(f["bytes"] for f in files.values()),
                    binaries=binaries, files=files)
    with open(os.path.join(root, MANIFEST), "w") as out:
        json.dump(manifest, out, indent=1, sort_keys=True)
    return manifest


# --- The report ------------------------------------------------------------------------------------------

class Report:
    """The checks so far, rewritten to OUT/report.json after each one (a run stopped at its time limit
    still leaves what it found), printed as they come."""

    def __init__(self, out):
        self.out = out
        self.data = dict(gpu=None, checks=[], machine={}, bundle={}, overhead=None, notes=[], fixtures=None,
                         started_at=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), seconds=0.0)
        self.start = time.monotonic()
        self.lock = threading.Lock()

    def add(self, name, status, detail):
        assert status in ("pass", "fail", "skipped"), status
        with self.lock:
            self.data["checks"].append(dict(name=name, status=status, detail=detail))
            print("%-5s %-52s %s" % ({"pass": "PASS", "fail": "FAIL", "skipped": "SKIP"}[status], name, detail),
                  flush=True)
            self.save()

    def note(self, text):
        with self.lock:
            self.data["notes"].append(text)
            self.save()

    def failed(self):
        return sum(c["status"] == "fail" for c in self.data["checks"])

    def save(self):
        self.data["seconds"] = round(time.monotonic() - self.start, 1)
        path = os.path.join(self.out, "report.json")
        with open(path + ".tmp", "w") as f:
            json.dump(self.data, f, indent=1)
        os.replace(path + ".tmp", path)

    def summary(self):
        d = self.data
        lines = []
        b, m = d["bundle"], d["machine"]
        lines.append("tuneup GPU check: bundle %s (commit %s, built %s), %.0f s" % (
            b.get("tuneup_version", "?"), b.get("git_commit", "?"), b.get("built_at", "?"), d["seconds"]))
        lines.append("machine: Python %s, torch %s, CUDA %s, cuDNN %s, glibc %s, GPU: %s" % (
            m.get("python", "?"), m.get("torch", "?"), m.get("torch_cuda") or "-", m.get("cudnn") or "-",
            m.get("glibc", "?"), d["gpu"] or "none (%s)" % m.get("no_gpu_reason", "?")))
        lines.append("")
        for c in d["checks"]:
            lines.append("%-5s %-52s %s" % ({"pass": "PASS", "fail": "FAIL", "skipped": "SKIP"}[c["status"]],
                                             c["name"], c["detail"]))
        if d["overhead"]:
            lines += ["", "overhead: " + d["overhead"]["text"]]
        if d["notes"]:
            lines += ["", "notes:"] + ["- " + n for n in d["notes"]]
        counts = {s: sum(c["status"] == s for c in d["checks"]) for s in ("pass", "fail", "skipped")}
        lines += ["", "%d passed, %d failed, %d skipped" % (counts["pass"], counts["fail"], counts["skipped"])]
        return "\n".join(lines) + "\n"


# --- Running programs within the time budget -------------------------------------------------------------

class OutOfTime(Exception):
    pass


class Runner:
    def __init__(self, args, work):
        self.args = args
        self.work = work
        self.deadline = time.monotonic() + args.budget
        os.makedirs(os.path.join(work, "logs"), exist_ok=True)
        self.env = dict(os.environ, PYTHONUNBUFFERED="1", TUNEUP_AGENT=AGENT, PYTHONDONTWRITEBYTECODE="1")
        for name in ("TUNEUP_DISABLE", "TUNEUP_OUTPUT", "TUNEUP_TRACE", "TUNEUP_MAIN_PID", "LD_PRELOAD",
                     "CUDA_INJECTION64_PATH", "NVTX_INJECTION64_PATH"):
            self.env.pop(name, None)

    def left(self):
        return self.deadline - time.monotonic()

    def run(self, name, argv, limit=300, env=None):
        """Runs argv, its output to logs/NAME.log; returns (exit code, log text). Raises OutOfTime when
        the budget cannot hold it; a program past its own limit is killed (code 124)."""
        timeout = min(limit, self.left() - 10)
        if timeout < 5:
            raise OutOfTime("out of time: %.0f s of the %d s budget left" % (max(0, self.left()), self.args.budget))
        log = os.path.join(self.work, "logs", name + ".log")
        with open(log, "w") as out:
            out.write("$ %s\n" % " ".join(argv))
            out.flush()
            process = subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT, env=dict(self.env, **(env or {})),
                                       cwd=self.work, start_new_session=True)
            try:
                code = process.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait()
                code = 124
                out.write("\n[gpu-check: killed after %.0f s]\n" % timeout)
        with open(log, errors="replace") as f:
            return code, f.read()

    def record(self, name, db, argv, limit=300, env=None):
        os.makedirs(os.path.dirname(db), exist_ok=True)
        return self.run(name, [TUNEUP, "record", "-o", db, "--force", "--"] + argv, limit, env)

    def advise(self, name, db):
        """`tuneup advise DB --format json`, parsed; raises RuntimeError with the reason."""
        out = db + ".advice.json"
        code, log = self.run(name + ".advise", [TUNEUP, "advise", db, "--format", "json", "-o", out], 120)
        if code not in (0, 3):
            raise RuntimeError("tuneup advise %s: %s" % (exit_text(code), tail(log)))
        with open(out) as f:
            return json.load(f)


def overhead_problems(medians, max_percent):
    """Why tuneup's overhead is too much, from each variant's per-run median step times: more than
    max_percent over plain, and more than the plain runs' own spread (the noise)."""
    plain, tuneup = statistics.median(medians["plain"]), statistics.median(medians["tuneup"])
    overhead = (tuneup / plain - 1.0) * 100.0
    noise = (max(medians["plain"]) - min(medians["plain"])) / plain * 100.0
    if overhead > max_percent and overhead > noise:
        return ["tuneup adds %.1f %%, more than %.1f %% and more than the plain runs' spread (%.1f %%)" % (
            overhead, max_percent, noise)]
    return []


def compressed_size(path):
    """Bytes of PATH once gzipped (as the fixtures archive will hold it)."""
    packer, size = zlib.compressobj(6), 0
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            size += len(packer.compress(block))
    return size + len(packer.flush())


def exit_text(code):
    """How a program ended, for people: 'exited 2', 'killed by SIGSEGV'."""
    if code < 0:
        try:
            return "killed by %s" % signal.Signals(-code).name
        except ValueError:
            return "killed by signal %d" % -code
    return "killed after its time limit" if code == 124 else "exited %d" % code


def tail(text, size=400):
    text = text.strip()
    return ("…" + text[-size:]) if len(text) > size else text


# --- Reading recordings ---------------------------------------------------------------------------------

class Db:
    def __init__(self, path):
        if not os.path.isfile(path) or os.path.getsize(path) == 0:
            raise RuntimeError("%s was not written" % os.path.basename(path))
        self.path = path
        self.conn = sqlite3.connect(pathlib.Path(path).resolve().as_uri() + "?mode=ro", uri=True)

    def scalar(self, sql, *args):
        row = self.conn.execute(sql, args).fetchone()
        return None if row is None else row[0]

    def rows(self, sql, *args):
        return self.conn.execute(sql, args).fetchall()

    def count(self, table, where="1"):
        try:
            return self.scalar("select count(*) from %s where %s" % (table, where))
        except sqlite3.Error:
            return None

    def meta(self, key):
        return self.scalar("select value from meta where key = ?", key)

    def metas(self, prefix):
        return dict(self.rows("select key, value from meta where key like ? order by key", prefix + "%"))

    def flag(self, name):
        """The last value a torch probe read (None: never read or unknown)."""
        return self.scalar("select f.value from framework_flags f join strings s on s.id = f.name_id where s.value = ? "
                           "order by f.ts_ns desc, f.id desc limit 1", name)

    def flag_rows(self, name):
        return self.scalar("select count(*) from framework_flags f join strings s on s.id = f.name_id where s.value = ?",
                           name)

    def fact(self, name):
        return self.scalar("select m.payload from nvtx_marks m join strings s on s.id = m.name_id where s.value = ? "
                           "order by m.ts_ns desc limit 1", name)

    def ranges(self, name, like=False):
        return self.scalar("select count(*) from nvtx_ranges r join strings s on s.id = r.name_id where s.value %s ?"
                           % ("like" if like else "="), name)

    def complete(self):
        """The process closed its file (end_ns is NULL after a crash or a kill)."""
        return self.scalar("select count(*) from processes where end_ns is not null") > 0

    def dropped(self):
        return self.scalar("select coalesce(sum(value), 0) from stats where severity = 'data_loss'")

    def summary(self):
        parts = []
        for label, table in (("kernels", "kernels"), ("memcpys", "memcpys"), ("memsets", "memsets"), ("syncs", "syncs"),
                             ("API calls", "api_calls"), ("GEMM calls", "gemm_calls"), ("conv calls", "conv_calls"),
                             ("NVTX ranges", "nvtx_ranges"), ("flags", "framework_flags")):
            n = self.count(table)
            parts.append("%s %s" % (n if n is not None else "-", label))
        return ", ".join(parts)


# Measures shared by the samples and the capture checks.
CONV_RUNS = "select count(*) from conv_calls where call_kind = 1 and status = 0"
# The autotuner's search: cudnnFind* calls (legacy API), or a shape run with two or more execution plans
# (cuDNN v9 backend, as PyTorch 2.x runs convolutions), as the cudnn-autotuner-off rule reads them.
CONV_SEARCHES = (
    "select (select count(*) from conv_calls where call_kind = 2) + (select count(*) from (select 1 from conv_calls "
    "where call_kind = 1 and plan_id is not null group by api, direction, n, c, d, h, w, k, filter_c, t, r, s, pad_d, "
    "pad_h, pad_w, stride_d, stride_h, stride_w, dilation_d, dilation_h, dilation_w, groups, data_type, layout "
    "having count(distinct plan_id) >= 2))")
FILLS_PER_ZERO_GRAD = (
    "select count(*) * 1.0 / max(1, (select count(*) from nvtx_ranges r join strings s on s.id = r.name_id where "
    "s.value like 'Optimizer.zero_grad%')) from kernels k join api_calls a using (correlation_id) join nvtx_ranges r on "
    "r.tid = a.tid and a.start_ns between r.start_ns and r.end_ns join strings s on s.id = r.name_id where s.value "
    "like 'Optimizer.zero_grad%'")
COPIES_PER_STEP = (
    "select count(*) * 1.0 / max(1, (select count(*) from nvtx_ranges r join strings s on s.id = r.name_id where "
    "s.value = 'step')) from memcpys where copy_kind = 1")


# --- Samples: what each recording must show --------------------------------------------------------------

class Signal:
    """A measure (SQL giving one number, or FACT name) and the test on it for the sample and its twin
    (a Python expression on v, or None); gpu: the measure exists only with GPU capture."""

    def __init__(self, label, query, broken, fixed, gpu=True):
        self.label, self.query, self.broken, self.fixed, self.gpu = label, query, broken, fixed, gpu

    def value(self, db):
        if self.query.startswith("FACT "):
            return db.fact(self.query[5:])
        return db.scalar(self.query)


class Sample:
    def __init__(self, name, cpu_args, gpu_args, settings=(), signals=(), rule=None, rule_on_cpu=False, no_rule=""):
        self.name, self.cpu_args, self.gpu_args = name, cpu_args, gpu_args
        self.settings, self.signals = list(settings), list(signals)
        self.rule, self.rule_on_cpu, self.no_rule = rule, rule_on_cpu, no_rule


# CPU sizes as tests/samples/pattern_samples_test.cpp uses them; GPU sizes are the samples' defaults, with
# enough steps that one-time costs (cuDNN's search, worker start-up) are a small part of the run.
SAMPLES = [
    Sample("cudnn_autotuner", "--steps 4 --batch 2", "--steps 30",
           settings=[("cudnn.benchmark", "off", "on")],
           signals=[Signal("convolutions run", CONV_RUNS, "v > 0", "v > 0"),
                    Signal("autotuner searches (cudnnFind, or several plans for a shape)", CONV_SEARCHES, "v == 0",
                           "v > 0")],
           rule="cudnn-autotuner-off"),
    Sample("zero_grad_fill", "--steps 6 --layers 4", "--steps 30",
           settings=[("zero_grad.set_to_none", "0", "1")],
           signals=[Signal("fill kernels per zero_grad", FILLS_PER_ZERO_GRAD, "v >= 10", "v == 0")],
           rule="zero-grad-fill", rule_on_cpu=True),
    Sample("unaligned_linear", "--steps 4", "--steps 30",
           signals=[Signal("GEMM calls", "select count(*) from gemm_calls where status = 0", "v > 0", "v > 0"),
                    Signal("GEMMs with M, N or K off the multiples of 8",
                           "select count(*) from gemm_calls where status = 0 and (m % 8 or n % 8 or k % 8)", "v > 0",
                           "v == 0")],
           rule="gemm-dims-not-aligned"),
    Sample("dataloader_workers", "--steps 12 --load-ms 3 --batch 4", "--steps 400",
           settings=[("dataloader.num_workers", "0", "4")],
           rule="dataloader-stall", rule_on_cpu=True),
    Sample("anomaly", "--steps 4", "--steps 30",
           settings=[("autograd.anomaly", "on", "off")],
           rule="debug-api-enabled", rule_on_cpu=True),
    Sample("pageable_copy", "--steps 4 --batch 16", "--steps 30",
           signals=[Signal("pageable host-to-device copies",
                           "select count(*) from memcpys where copy_kind = 1 and src_kind = 1", "v > 0", None),
                    Signal("pinned host-to-device copies",
                           "select count(*) from memcpys where copy_kind = 1 and src_kind = 2", None, "v > 0")],
           rule="pageable-memcpy"),
    Sample("cpu_tensor_copy", "--steps 4", "--steps 30",
           signals=[Signal("host-to-device copies per step", COPIES_PER_STEP, "v >= 2", "v < 1")],
           no_rule="cpu-tensor-then-copy needs torch.profiler's CPU operators, which a tuneup recording does not hold"),
    Sample("conv_bias_bn", "--steps 4 --batch 2", "--steps 30",
           signals=[Signal("convolutions run", CONV_RUNS, "v > 0", "v > 0")],
           rule="conv-bias-before-batchnorm", rule_on_cpu=True),
    Sample("amp", "--steps 4 --hidden 128", "--steps 30",
           signals=[Signal("fp32 GEMMs", "select count(*) from gemm_calls where status = 0 and a_type = 0", "v > 0",
                           "v == 0"),
                    Signal("fp16/bf16 GEMMs", "select count(*) from gemm_calls where status = 0 and a_type in (2, 14)",
                           "v == 0", "v > 0")],
           rule="amp-unused"),
    Sample("data_parallel", "--steps 4 --batch 8", "--steps 30",
           settings=[("wrap.data_parallel", "1", "(not recorded)")],
           signals=[Signal("wrap.distributed_data_parallel fact", "FACT tuneup.wrap.distributed_data_parallel", None,
                           "v == 1", gpu=False)],
           no_rule="data-parallel needs two or more GPUs"),
]


# --- The checks ------------------------------------------------------------------------------------------

class Check:
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

    # The capture workload: each kind of work done a known number of times.
    def capture(self):
        steps = self.args.steps
        db = os.path.join(self.runner.work, "capture", "capture.db")
        done_path = os.path.join(self.runner.work, "capture", "capture.done.json")
        # CUPTI's raw activity buffers too, as the decoder's fixtures (docs/agent.md: TUNEUP_CUPTI_DUMP).
        dumps = os.path.join(self.runner.work, "capture", "cupti")
        code, log = self.runner.record("capture", db, [self.args.python, os.path.join(DRIVER, "capture_workload.py"),
                                                       "--report", done_path, "--steps", str(steps)], 300,
                                       env=dict(TUNEUP_CUPTI_DUMP=dumps, TUNEUP_CUPTI_DUMP_MB=str(CUPTI_DUMP_MB)))
        self.fixtures += [("capture/capture.db", db), ("logs/capture.log", os.path.join(self.runner.work, "logs",
                                                                                          "capture.log"))]
        if os.path.isdir(dumps):
            self.fixtures += [("cupti/" + n, os.path.join(dumps, n)) for n in sorted(os.listdir(dumps))]
        if code != 0 or not os.path.isfile(done_path):
            self.report.add("capture: recorded", "fail", "tuneup record %s: %s" % (exit_text(code), tail(log)))
            return
        with open(done_path) as f:
            done = json.load(f)
        d = Db(db)
        complete = d.complete()
        self.report.add("capture: recorded", "pass" if complete else "fail", "%d steps on %s in %.1f s; %s%s" % (
            done["steps"], done["device"], done["seconds"], d.summary(),
            "" if complete else "; the file is incomplete (the process did not close it)"))
        self.capture_cpu_checks(d, done)
        if self.gpu is None:
            for name in ("capture: GPU capture on", "capture: kernels", "capture: memcpys (pageable, pinned, DtoH)",
                         "capture: memsets", "capture: syncs", "capture: event queries are not syncs",
                         "capture: CUDA API calls", "capture: GEMM shapes (cuBLAS/cuBLASLt)",
                         "capture: cuDNN convolutions", "capture: NVTX ranges and marks"):
                self.report.add(name, "skipped", self.no_gpu)
            return
        for name, function in (("capture: GPU capture on", self.capture_on), ("capture: kernels", self.capture_kernels),
                               ("capture: memcpys (pageable, pinned, DtoH)", self.capture_memcpys),
                               ("capture: memsets", self.capture_memsets), ("capture: syncs", self.capture_syncs),
                               ("capture: event queries are not syncs", self.capture_queries),
                               ("capture: CUDA API calls", self.capture_api),
                               ("capture: GEMM shapes (cuBLAS/cuBLASLt)", self.capture_gemms),
                               ("capture: cuDNN convolutions", self.capture_convs),
                               ("capture: NVTX ranges and marks", self.capture_nvtx)):
            self.guard(name, function, name, d, done)

    def verdict(self, name, problems, detail):
        self.report.add(name, "fail" if problems else "pass", ("; ".join(problems) + " | " if problems else "")
                        + detail)

    def capture_cpu_checks(self, d, done):
        steps = done["steps"]

        def bootstrap(name):
            problems = []
            for label, range_name in (("zero_grad", "Optimizer.zero_grad#SGD.zero_grad"),
                                      ("optimizer step", "Optimizer.step#SGD.step"), ("backward", "tuneup.backward"),
                                      ("forward", "tuneup.forward#Sequential")):
                n = d.ranges(range_name)
                if n != steps:
                    problems.append("%s: %s ranges, want %d" % (range_name, n, steps))
            fact = d.fact("tuneup.zero_grad.set_to_none")
            if fact != 0:
                problems.append("tuneup.zero_grad.set_to_none = %s, want 0" % fact)
            self.verdict(name, problems, "%d ranges in the tuneup domain over %d steps, set_to_none fact %s" % (
                d.scalar("select count(*) from nvtx_ranges r join nvtx_domains n on n.id = r.domain_id join strings s "
                         "on s.id = n.name_id where s.value = 'tuneup'"), steps, fact))

        def settings(name):
            problems, seen = [], []
            for flag, want in (("cudnn.benchmark", 1), ("autograd.anomaly", 0), ("tf32.cublas", "known"),
                               ("tf32.cudnn", "known"), ("profiler.enabled", 0)):
                v = d.flag(flag)
                seen.append("%s=%s" % (flag, "unknown" if v is None else v))
                if d.flag_rows(flag) == 0:
                    problems.append("%s never read" % flag)
                elif (want == "known" and v is None) or (want != "known" and v != want):
                    problems.append("%s is %s, want %s" % (flag, "unknown" if v is None else v, want))
            self.verdict(name, problems, ", ".join(seen))

        def drops(name):
            lost = d.dropped()
            stats = dict(d.rows("select name, value from stats where name like 'events.%'"))
            rows = d.rows("select name, value from stats where severity = 'data_loss' and value > 0")
            self.verdict(name, ["%s = %s" % r for r in rows] if lost else [],
                         "events produced %s, written %s, dropped %s" % (stats.get("events.produced"),
                                                                         stats.get("events.written"),
                                                                         stats.get("events.dropped")))

        def states(name):
            n = d.count("thread_states")
            self.verdict(name, [] if n else ["no thread_states rows"], "%s main-thread state changes" % n)

        for name, function in (("capture: Python bootstrap ranges and facts", bootstrap),
                               ("capture: torch settings", settings), ("capture: nothing dropped", drops),
                               ("capture: main thread sampled", states)):
            self.guard(name, function, name)

    def capture_on(self, name, d, done):
        value = d.meta("capture.cuda")
        extra = d.metas("cupti.")
        self.verdict(name, [] if value == "on" else ["capture.cuda = %r" % value],
                     ", ".join("%s=%s" % kv for kv in extra.items()) or "no cupti.* meta")

    def capture_kernels(self, name, d, done):
        steps = done["steps"]
        n = d.count("kernels")
        sane = d.scalar("select count(*) from kernels where end_ns > start_ns and end_ns - start_ns < 1000000000")
        window = d.scalar("select count(*) from kernels k, processes p where k.start_ns < p.start_ns "
                          "or (p.end_ns is not null and k.end_ns > p.end_ns)")
        correlated = d.scalar("select count(*) from kernels k where exists (select 1 from api_calls a where "
                              "a.correlation_id = k.correlation_id)")
        devices = d.count("devices", "sm_count > 0")
        problems = []
        if n < 10 * steps:
            problems.append("%d kernels, want at least %d (10 per step)" % (n, 10 * steps))
        if sane != n:
            problems.append("%d kernels with end <= start or longer than 1 s" % (n - sane))
        if window:
            problems.append("%d kernels outside the process's lifetime (clock conversion?)" % window)
        if n and correlated < 0.95 * n:
            problems.append("only %d of %d kernels correlate with a launch" % (correlated, n))
        if not devices:
            problems.append("no device row with its properties")
        name_example = d.scalar("select s.value from kernels k join strings s on s.id = k.name_id limit 1")
        self.verdict(name, problems, "%d kernels (%.0f per step), %d correlated with launches, %d device(s); e.g. %s" % (
            n, n / max(1, steps), correlated, devices, (name_example or "-")[:60]))

    def capture_memcpys(self, name, d, done):
        n, c, h, w = 32, 3, 32, 32
        pageable = d.count("memcpys", "copy_kind = 1 and src_kind = 1")
        pinned = d.count("memcpys", "copy_kind = 1 and src_kind = 2")
        dtoh = d.count("memcpys", "copy_kind = 2")
        batch_bytes = d.count("memcpys", "copy_kind = 1 and bytes = %d" % (n * c * h * w * 4))
        problems = []
        if pageable < done["pageable_copies"]:
            problems.append("%d pageable HtoD, want >= %d" % (pageable, done["pageable_copies"]))
        if pinned < done["pinned_copies"]:
            problems.append("%d pinned HtoD, want >= %d" % (pinned, done["pinned_copies"]))
        if dtoh < done["dtoh_copies"]:
            problems.append("%d DtoH, want >= %d" % (dtoh, done["dtoh_copies"]))
        if batch_bytes < done["pageable_copies"] + done["pinned_copies"]:
            problems.append("%d HtoD copies of the batch's %d bytes, want %d" % (
                batch_bytes, n * c * h * w * 4, done["pageable_copies"] + done["pinned_copies"]))
        self.verdict(name, problems, "pageable HtoD %d, pinned HtoD %d, DtoH %d (done: %d, %d, %d)" % (
            pageable, pinned, dtoh, done["pageable_copies"], done["pinned_copies"], done["dtoh_copies"]))

    def capture_memsets(self, name, d, done):
        ours = d.count("memsets", "bytes = %d" % (1 << 20))
        self.verdict(name, [] if ours >= done["memsets"] else ["%d memsets of 1 MiB, want %d" % (ours, done["memsets"])],
                     "%d memsets, %d of them the workload's 1 MiB cuMemsetD8Async (done: %d)" % (
                         d.count("memsets"), ours, done["memsets"]))

    def capture_syncs(self, name, d, done):
        by_type = dict(d.rows("select t.name, count(*) from syncs s left join sync_types t on t.code = s.sync_type "
                              "group by s.sync_type"))
        problems = []
        for kind, want in (("event_synchronize", done["event_syncs"]), ("stream_synchronize", done["stream_syncs"]),
                           ("context_synchronize", done["device_syncs"])):
            if by_type.get(kind, 0) < want:
                problems.append("%d %s, want >= %d" % (by_type.get(kind, 0), kind, want))
        bad_times = d.count("syncs", "end_ns < start_ns")
        if bad_times:
            problems.append("%d syncs end before they start" % bad_times)
        self.verdict(name, problems, ", ".join("%s %d" % kv for kv in sorted(by_type.items())) + " (done: %d event, "
                     "%d stream, %d device synchronisations)" % (done["event_syncs"], done["stream_syncs"],
                                                                 done["device_syncs"]))

    def capture_queries(self, name, d, done):
        n = d.count("syncs")
        queries = done["event_queries"]
        sync_meta = d.meta("cupti.sync_queries")
        self.verdict(name, [] if n < queries / 2 else ["%d sync records for %d event queries: queries are recorded as "
                                                       "waits (issue 13, defect 4)" % (n, queries)],
                     "%d sync records, %d event queries made; cupti.sync_queries = %s" % (n, queries, sync_meta))

    def capture_api(self, name, d, done):
        runtime = d.count("api_calls", "api = 1")
        driver = d.count("api_calls", "api = 2")
        launches = d.count("api_calls a join strings s on s.id = a.name_id", "s.value like 'cudaLaunchKernel%' or "
                           "s.value like 'cuLaunchKernel%'")
        counted = d.rows("select name, value from stats where name like 'cupti.api_counted.%' order by value desc "
                         "limit 3")
        self.verdict(name, [] if runtime >= 100 else ["%d runtime API records, want >= 100" % runtime],
                     "runtime %d, driver %d, launches %d%s" % (runtime, driver, launches, (
                         "; counted, not stored: " + ", ".join("%s %d" % (k[18:], v) for k, v in counted))
                         if counted else ""))

    def capture_gemms(self, name, d, done):
        def calls(dims, a_type, batch=None):
            m, n, k = sorted(dims)
            sql = ("select count(*) from gemm_calls where status = 0 and min(m, n, k) = ? and max(m, n, k) = ? and "
                   "m + n + k = ? and a_type = ?")
            args = [m, k, m + n + k, a_type]
            if batch is not None:
                sql += " and batch = ?"
                args.append(batch)
            return d.scalar(sql, *args)

        from_workload = [("fp32 72x200x136", calls((72, 200, 136), 0), done["gemm_fp32"]),
                         ("fp16 64x128x256", calls((64, 128, 256), 2), done["gemm_fp16"]),
                         ("batched 7 x 40x24x56", calls((40, 24, 56), 0, 7), done["gemm_batched"])]
        problems = ["%s: %d calls, want %d" % (label, got, want) for label, got, want in from_workload if got < want]
        apis = dict(d.rows("select g.name, count(*) from gemm_calls c join gemm_apis g on g.code = c.api group by c.api"))
        failed = d.count("gemm_calls", "status != 0")
        if failed:
            problems.append("%d GEMM calls returned an error status" % failed)
        names = [r[0] for r in d.rows("select distinct s.value from gemm_calls c join strings s on s.id = c.name_id")]
        self.verdict(name, problems, "%s; by API: %s; functions: %s" % (
            ", ".join("%s %d" % (l, g) for l, g, _ in from_workload),
            ", ".join("%s %d" % kv for kv in apis.items()) or "none", ", ".join(names) or "none"))

    def capture_convs(self, name, d, done):
        ours = d.scalar("select count(*) from conv_calls where call_kind = 1 and status = 0 and direction = 1 and "
                        "n = 32 and c = 3 and h = 32 and w = 32 and k = 16 and r = 3 and s = 3")
        kinds = dict(d.rows("select k.name, count(*) from conv_calls c join conv_call_kinds k on k.code = c.call_kind "
                            "group by c.call_kind"))
        apis = dict(d.rows("select a.name, count(*) from conv_calls c join conv_apis a on a.code = c.api group by c.api"))
        sources = dict(d.rows("select a.name, count(*) from conv_calls c join algo_sources a on a.code = c.algo_source "
                              "where c.call_kind = 1 group by c.algo_source"))
        plans = d.scalar("select count(distinct plan_id) from conv_calls where plan_id is not null")
        searches = d.scalar(CONV_SEARCHES)
        problems = []
        if ours < done["steps"]:
            problems.append("%d forward runs of the first convolution's shape (32x3x32x32, 16x3x3x3), want %d" % (
                ours, done["steps"]))
        self.verdict(name, problems, "API %s; calls %s; algorithm from %s; %d plans; autotuner searches %d "
                     "(cudnn.benchmark on)" % (apis or "none", kinds or "none", sources or "none", plans, searches))

    def capture_nvtx(self, name, d, done):
        steps = done["steps"]
        step_ranges = d.ranges("step")
        inside = d.scalar("select count(*) from kernels k where exists (select 1 from nvtx_ranges r join strings s on "
                          "s.id = r.name_id where s.value = 'step' and k.start_ns >= r.start_ns)")
        mark = d.scalar("select count(*) from nvtx_marks m join strings s on s.id = m.name_id where s.value = "
                        "'capture.done'")
        problems = []
        if step_ranges != steps:
            problems.append("%s 'step' ranges, want %d" % (step_ranges, steps))
        if not mark:
            problems.append("the mark 'capture.done' is missing")
        if not inside:
            problems.append("no kernel inside a step range")
        self.verdict(name, problems, "%s step ranges, %s kernels after a step began, mark %s; capture.nvtx = %s" % (
            step_ranges, inside, "seen" if mark else "missing", d.meta("capture.nvtx")))

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
        for sample in SAMPLES:
            argv = (sample.gpu_args if self.gpu else sample.cpu_args).split()
            for fixed in (False, True):
                db = os.path.join(self.runner.work, "samples", sample.name, "fixed.db" if fixed else "broken.db")
                command = [self.args.python, os.path.join(SAMPLES_DIR, sample.name + ".py")] + argv + (
                    ["--fixed"] if fixed else [])
                jobs.append((sample, fixed, db, command))
        results = {}

        def one(job):
            sample, fixed, db, command = job
            label = "%s%s" % (sample.name, ".fixed" if fixed else "")
            try:
                code, log = self.runner.record("sample." + label, db, command, 300)
                if code != 0:
                    return job, ("tuneup record %s: %s" % (exit_text(code), tail(log)), None)
                return job, (None, self.runner.advise("sample." + label, db))
            except (OutOfTime, RuntimeError, ValueError, OSError) as e:
                return job, (str(e), None)

        with concurrent.futures.ThreadPoolExecutor(self.args.jobs) as pool:
            for job, result in pool.map(one, jobs):
                results[(job[0].name, job[1])] = (job[2], result)
        for sample in SAMPLES:
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
            if steps < 3:
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
