"""The capture workload's checks: each kind of GPU work done a known number of times, found in the recording."""

import json
import os

from bundle_files import CUPTI_DUMP_MB, DRIVER
from check_support import Db, exit_text, tail
from sample_specs import CONV_SEARCHES


class CaptureChecks:
    """Mixed into Check (gpu_check.py): uses its report, runner, args and verdict."""

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
                         "capture: cuDNN convolutions", "capture: NVTX ranges and marks", "capture: Python call sites",
                         "capture: GPU memory (CUPTI, the allocator's peaks, capacity)",
                         "capture: memory-headroom evaluated"):
                self.report.add(name, "skipped", self.no_gpu)
            self.guard("capture: no GPU memory read without CUDA", self.capture_no_memory,
                       "capture: no GPU memory read without CUDA", d, done)
            return
        for name, function in (("capture: GPU capture on", self.capture_on), ("capture: kernels", self.capture_kernels),
                               ("capture: memcpys (pageable, pinned, DtoH)", self.capture_memcpys),
                               ("capture: memsets", self.capture_memsets), ("capture: syncs", self.capture_syncs),
                               ("capture: event queries are not syncs", self.capture_queries),
                               ("capture: CUDA API calls", self.capture_api),
                               ("capture: GEMM shapes (cuBLAS/cuBLASLt)", self.capture_gemms),
                               ("capture: cuDNN convolutions", self.capture_convs),
                               ("capture: NVTX ranges and marks", self.capture_nvtx),
                               ("capture: Python call sites", self.capture_call_sites),
                               ("capture: GPU memory (CUPTI, the allocator's peaks, capacity)", self.capture_memory),
                               ("capture: memory-headroom evaluated", self.capture_headroom)):
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

    def capture_call_sites(self, name, d, done):
        """The bootstrap's call sites (docs/agent.md): each step's loss.item() waits for the GPU, so it is noted at
        its line of capture_workload.py, with the stream wait it caused inside it; torch.cuda.synchronize too."""
        workload = os.path.join(DRIVER, "capture_workload.py")
        with open(workload) as f:
            item_line = next(i for i, text in enumerate(f, 1) if "loss.item()  # a device-to-host copy" in text)
        calls = "select p.start_ns, p.end_ns, p.tid from python_calls p join strings c on c.id = p.call_id " \
                "join strings f on f.id = p.file_id where c.value = ? and f.value like ? and p.line = ?"
        items = d.rows(calls, "Tensor.item", "%capture_workload.py", item_line)
        problems = []
        if len(items) < done["dtoh_copies"]:
            problems.append("%d Tensor.item calls at capture_workload.py:%d, want >= %d" % (
                len(items), item_line, done["dtoh_copies"]))
        waits = d.scalar("select count(*) from api_calls a join strings s on s.id = a.name_id join python_calls p "
                         "on a.tid = p.tid and a.start_ns >= p.start_ns and a.end_ns <= p.end_ns join strings c on "
                         "c.id = p.call_id where c.value = 'Tensor.item' and s.value like 'cuda%Synchronize%'")
        if items and not waits:
            problems.append("no stream wait inside the Tensor.item calls")
        device_syncs = d.scalar("select count(*) from python_calls p join strings c on c.id = p.call_id "
                                "where c.value = 'torch.cuda.synchronize'")
        if device_syncs < done["device_syncs"]:
            problems.append("%d torch.cuda.synchronize calls noted, want >= %d" % (device_syncs, done["device_syncs"]))
        samples = d.count("python_samples")
        self.verdict(name, problems, "%d Tensor.item calls at line %d with %d CUDA waits inside; %d "
                     "torch.cuda.synchronize; %d Python samples" % (len(items), item_line, waits, device_syncs, samples))

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

    def capture_memory(self, name, d, done):
        """GPU memory (docs/agent.md): CUPTI's cudaMalloc/cudaFree records, whose net sum holds at least what the
        caching allocator reserved at the end; the bootstrap's reading of the allocator after each optimizer step
        (its totals, and its peaks since the previous reading, consistent with them and with what the program's
        own max_memory_* say); the GPU's capacity as torch sees it."""
        steps = done["steps"]
        problems = []
        if "memory" not in (d.meta("cupti.kinds") or ""):
            problems.append("cupti.kinds = %r lacks memory" % d.meta("cupti.kinds"))
        allocations = d.count("memory_events", "source = 1 and device_id = 0 and memory_kind = 3 and delta_bytes > 0")
        releases = d.count("memory_events", "source = 1 and device_id = 0 and memory_kind = 3 and delta_bytes < 0")
        net = d.scalar("select coalesce(sum(delta_bytes), 0) from memory_events where source = 1 and device_id = 0 "
                       "and memory_kind = 3 and delta_of = 2") or 0
        if not allocations:
            problems.append("no CUPTI memory allocation on GPU 0")
        elif net < done["memory_reserved"]:
            problems.append("CUPTI's cudaMalloc - cudaFree on GPU 0 is %d bytes, less than the %d the allocator "
                            "reserved" % (net, done["memory_reserved"]))
        readings = d.count("memory_events", "source = 2 and device_id = 0 and allocated_bytes is not null and "
                           "reserved_bytes is not null")
        peaks = d.count("memory_peaks", "device_id = 0 and allocated_bytes is not null and reserved_bytes is not null "
                        "and start_ns < end_ns")
        if readings != steps or peaks != steps:
            problems.append("%s readings and %s peaks of the allocator on GPU 0, want %d each (one per optimizer "
                            "step)" % (readings, peaks, steps))
        below = d.scalar("select count(*) from memory_peaks p join memory_events e on e.ts_ns = p.end_ns and "
                         "e.device_id = p.device_id and e.source = 2 where p.allocated_bytes < e.allocated_bytes or "
                         "p.reserved_bytes < e.reserved_bytes")
        if below:
            problems.append("%d peaks below the totals read with them" % below)
        peak_allocated = d.scalar("select max(allocated_bytes) from memory_peaks where device_id = 0") or 0
        peak_reserved = d.scalar("select max(reserved_bytes) from memory_peaks where device_id = 0") or 0
        if not 0 < peak_allocated <= done["max_memory_allocated"]:
            problems.append("the largest allocated peak %d, want in (0, %d] (the program's max_memory_allocated)"
                            % (peak_allocated, done["max_memory_allocated"]))
        if not 0 < peak_reserved <= done["max_memory_reserved"]:
            problems.append("the largest reserved peak %d, want in (0, %d] (the program's max_memory_reserved)"
                            % (peak_reserved, done["max_memory_reserved"]))
        capacity = d.scalar("select global_memory_bytes from devices where id = 0") or 0
        if abs(capacity - done["total_memory"]) > 0.01 * done["total_memory"]:
            problems.append("devices.global_memory_bytes %d, torch's total_memory %d" % (capacity,
                                                                                        done["total_memory"]))
        pinned = d.count("memory_events", "source = 1 and memory_kind = 2")
        self.verdict(name, problems, "CUPTI: %d allocations, %d releases on GPU 0 (net %.1f MB; reserved at the end "
                     "%.1f MB), %d pinned host; allocator: %d readings, %d peaks, largest %.1f MB allocated / %.1f MB "
                     "reserved (program: %.1f / %.1f MB); capacity %.1f GB (torch %.1f GB)" % (
                         allocations, releases, net / 1e6, done["memory_reserved"] / 1e6, pinned, readings, peaks,
                         peak_allocated / 1e6, peak_reserved / 1e6, done["max_memory_allocated"] / 1e6,
                         done["max_memory_reserved"] / 1e6, capacity / 1e9, done["total_memory"] / 1e9))

    def capture_headroom(self, name, d, done):
        """memory-headroom reads the recording: the allocator's peaks and the capacity are there, so it is
        evaluated (a small model on a large GPU: it fires)."""
        advice = self.runner.advise("capture", d.path, "--all")
        found = [f for f in advice.get("findings", []) if f.get("rule") == "memory-headroom"]
        if found:
            self.verdict(name, [], "raised: %s" % found[0].get("title"))
            return
        outcome = [r for r in advice.get("rules_without_findings", []) if r.get("rule") == "memory-headroom"]
        status = outcome[0].get("status") if outcome else "absent from the report"
        reason = (outcome[0].get("reason") or outcome[0].get("why") or "") if outcome else ""
        self.verdict(name, ["memory-headroom is %s" % status] if status in ("not evaluated", "absent from the report")
                     else [], "%s: %s" % (status, reason))

    def capture_no_memory(self, name, d, done):
        """Without CUDA the bootstrap reads no allocator and CUPTI records nothing."""
        events, peaks = d.count("memory_events"), d.count("memory_peaks")
        self.verdict(name, [] if events == 0 and peaks == 0 else ["%s memory events, %s peaks" % (events, peaks)],
                     "%s memory events, %s peaks" % (events, peaks))
