"""What each recording must show: the measures shared by the samples and the capture checks, each sample's signals."""


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
# Elementwise kernels (mangled names hold the word too) launched inside Optimizer.step, per step: the per-parameter
# kernels of the unfused-optimizer rule.
ELEMENTWISE_PER_OPTIMIZER_STEP = (
    "select count(*) * 1.0 / max(1, (select count(*) from nvtx_ranges r join strings s on s.id = r.name_id where "
    "s.value like 'Optimizer.step%')) from kernels k join strings kn on kn.id = k.name_id join api_calls a using "
    "(correlation_id) join nvtx_ranges r on r.tid = a.tid and a.start_ns between r.start_ns and r.end_ns join strings "
    "s on s.id = r.name_id where s.value like 'Optimizer.step%' and kn.value like '%elementwise_kernel%'")
# The optimizer's step runs foreach or fused kernels (the bootstrap's facts; 1 when either is on).
OPTIMIZER_FOREACH_OR_FUSED = (
    "select max(m.payload) from nvtx_marks m join strings s on s.id = m.name_id where s.value in "
    "('tuneup.optimizer.foreach', 'tuneup.optimizer.fused')")
# SyncBatchNorm's gather of every rank's statistics (only batch_norm_gather_stats launches this kernel).
SYNC_BN_GATHERS = (
    "select count(*) from kernels k join strings s on s.id = k.name_id where s.value like "
    "'%batch_norm_reduce_statistics%'")
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
    """ranks: processes under torch.distributed.run (each records its own file; the checks read rank 0's and
    tuneup advise reads them all). fixed_trains_on_cpu: False when the --fixed twin cannot train without a GPU
    (it records its facts and stops), so that no steps are asked of it there."""

    def __init__(self, name, cpu_args, gpu_args, settings=(), signals=(), rule=None, rule_on_cpu=False, no_rule="",
                 ranks=1, fixed_trains_on_cpu=True):
        self.name, self.cpu_args, self.gpu_args = name, cpu_args, gpu_args
        self.settings, self.signals = list(settings), list(signals)
        self.rule, self.rule_on_cpu, self.no_rule = rule, rule_on_cpu, no_rule
        self.ranks, self.fixed_trains_on_cpu = ranks, fixed_trains_on_cpu

    def launcher(self):
        """What runs the script after the Python: nothing, or torch.distributed.run for several ranks
        (--redirects/--tee 1: torch 1.13's launcher cannot read "0" on Python 3.11)."""
        if self.ranks == 1:
            return []
        return ["-m", "torch.distributed.run", "--standalone", "--nproc_per_node", str(self.ranks), "--redirects", "1",
                "--tee", "1"]

    def files(self, db):
        """The recordings `tuneup record -o db` leaves: db itself, or one file per rank (rank 0 first)."""
        if self.ranks == 1:
            return [db]
        stem = db[:-3] if db.endswith(".db") else db
        return ["%s.rank%d.db" % (stem, rank) for rank in range(self.ranks)]


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
    # On the CPU a batch of 32: handing a batch from a worker to the main process costs 2-4 ms there whatever its
    # size, 12% of a batch of 4's step (the --fixed twin's finding then came and went with the machine's load).
    Sample("dataloader_workers", "--steps 12 --batch 64 --load-ms 0.5", "--steps 400",
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
    # Settings differ by device (--fixed: fused=True on CUDA with PyTorch 2.x, foreach=True elsewhere): the signal
    # is either.
    Sample("unfused_optimizer", "--steps 4 --layers 8 --width 32", "--steps 30",
           signals=[Signal("foreach or fused (bootstrap facts)", OPTIMIZER_FOREACH_OR_FUSED, "v == 0", "v == 1",
                           gpu=False),
                    Signal("elementwise kernels per Optimizer.step", ELEMENTWISE_PER_OPTIMIZER_STEP, "v >= 100",
                           "v < 10")],
           rule="unfused-optimizer"),
    # Mixed precision (Python; the bootstrap's GradScaler and optimizer facts, docs/agent.md): on a GPU with the real
    # torch.amp.GradScaler("cuda") and fp16 autocast.
    Sample("half_params", "--steps 4", "--steps 30",
           signals=[Signal("fp16 parameters at the first step", "FACT tuneup.optimizer.params_fp16", "v == 2", "v == 0",
                           gpu=False)],
           rule="half-without-master-weights", rule_on_cpu=True),
    Sample("clip_before_unscale", "--steps 4 --width 64", "--steps 30",
           signals=[Signal("clippings before unscale_", "FACT tuneup.amp.clip_before_unscale", "v >= 4", None,
                           gpu=False),
                    Signal("clippings after unscale_", "FACT tuneup.amp.clip_after_unscale", None, "v >= 4",
                           gpu=False)],
           rule="clip-before-unscale", rule_on_cpu=True),
    Sample("amp_loss_scale", "--steps 12 --width 64", "--steps 30",
           signals=[Signal("GradScaler enabled", "FACT tuneup.amp.grad_scaler", "v == 1", "v == 1", gpu=False),
                    Signal("skipped steps", "FACT tuneup.amp.skipped", "v >= 4", "v <= 1", gpu=False)],
           rule="amp-loss-scale-instability", rule_on_cpu=True),
    # GPU memory: the batch that fits is read on the GPU (--fixed fills about 70% of it); a CPU has none to read.
    Sample("memory_headroom", "--steps 4 --width 1024", "--steps 20",
           rule="memory-headroom"),
    # Two ranks (over gloo when the GPUs are fewer than the ranks). SyncBatchNorm runs only on a GPU: on the CPU
    # --fixed records what DDP was asked to wrap and stops; on a GPU its statistics gather kernels must run.
    Sample("sync_batchnorm", "--steps 4", "--steps 30",
           settings=[("ddp.batchnorm_layers", "2", "0"), ("ddp.sync_batchnorm_layers", "0", "2")],
           signals=[Signal("SyncBatchNorm layers (bootstrap facts)", "FACT tuneup.ddp.sync_batchnorm_layers", "v == 0",
                           "v == 2", gpu=False),
                    Signal("per-GPU batch (bootstrap facts)", "FACT tuneup.dataloader.batch_size", "v == 8", "v == 8",
                           gpu=False),
                    Signal("SyncBatchNorm statistics gather kernels", SYNC_BN_GATHERS, "v == 0", "v > 0")],
           rule="sync-batchnorm-missing", rule_on_cpu=True, ranks=2, fixed_trains_on_cpu=False),
    Sample("data_parallel", "--steps 4 --batch 8", "--steps 30",
           settings=[("wrap.data_parallel", "1", "(not recorded)")],
           signals=[Signal("wrap.distributed_data_parallel fact", "FACT tuneup.wrap.distributed_data_parallel", None,
                           "v == 1", gpu=False)],
           no_rule="data-parallel needs two or more GPUs"),
]
