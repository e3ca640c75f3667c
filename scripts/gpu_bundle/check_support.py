"""What gpu-check's checks stand on: the report, running programs within the time budget, reading recordings."""

import json
import os
import pathlib
import signal
import sqlite3
import statistics
import subprocess
import threading
import time
import zlib

from bundle_files import AGENT, TUNEUP


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

    def advise(self, name, db, *options):
        """`tuneup advise DB --format json [OPTIONS]`, parsed; raises RuntimeError with the reason."""
        out = db + ".advice.json"
        code, log = self.run(name + ".advise", [TUNEUP, "advise", db, "--format", "json", "-o", out, *options], 120)
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
