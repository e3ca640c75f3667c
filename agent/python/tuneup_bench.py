"""`tuneup bench` inside the benchmarked Python program (docs/bench.md): the in-process fixes, the step
limit and the losses. The bootstrap (sitecustomize.py beside this file) loads it only when tuneup bench
runs the program (TUNEUP_BENCH_REPORT is set), and chains these hooks after its own.

Settings, from tuneup bench:
  TUNEUP_BENCH_REPORT      file this process appends JSON lines to: Python's version at start, torch's
                           and the device once torch is imported, each fix applied or not and why,
                           where it stopped, its losses
  TUNEUP_FIX               comma-separated fixes: cudnn-benchmark, anomaly-off, tf32, set-to-none,
                           dataloader-workers=N, pin-memory, persistent-workers, fused-optimizer,
                           amp-bf16, amp-fp16, channels-last
  TUNEUP_BENCH_STOP_AFTER  end the program (SystemExit(0), so `finally` blocks and atexit run) when the
                           first optimizer to step has stepped this many times

Every bench run, baseline or candidate, carries the same bookkeeping (a counter and a detached loss per
step), so that it weighs the same on both sides; what a fix adds is the fix.
"""

import collections
import json
import os
import sys

_KNOWN = ("cudnn-benchmark", "anomaly-off", "tf32", "set-to-none", "dataloader-workers", "pin-memory",
          "persistent-workers", "fused-optimizer", "amp-bf16", "amp-fp16", "channels-last")


class _Report:
    """JSON lines appended to TUNEUP_BENCH_REPORT by the process that installed the hooks (forked
    DataLoader workers inherit the module but write nothing)."""

    def __init__(self, path):
        self._path = path
        self._pid = os.getpid()
        self._said = set()

    def write(self, **fields):
        if os.getpid() != self._pid:
            return
        fields["pid"] = self._pid
        line = json.dumps(fields, sort_keys=True) + "\n"
        fd = os.open(self._path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            os.write(fd, line.encode())  # one write: lines of several processes never interleave
        finally:
            os.close(fd)

    def fix(self, name, applied, detail):
        """Once per fix and outcome: the first time it took effect, or why it could not."""
        key = (name, applied)
        if key not in self._said:
            self._said.add(key)
            self.write(event="fix", fix=name, status="applied" if applied else "not-applied", detail=detail)


def _parse_fixes(text):
    fixes = {}
    for item in filter(None, (part.strip() for part in text.split(","))):
        name, _, value = item.partition("=")
        fixes[name] = value
    return fixes


def _probe(function, *args):
    """Calls a torch function that may not exist in this version; None when it fails."""
    try:
        return function(*args)
    except Exception:  # torch raises AssertionError, AttributeError, RuntimeError for unknown settings
        return None


class _Bench:
    def __init__(self, report, fixes, stop_after):
        self.report = report
        self.fixes = fixes
        self.stop_after = stop_after
        self.steps = 0
        self.counted = None  # the optimizer whose steps are counted: the first one to step
        self.losses = collections.deque(maxlen=10000)  # detached: no sync with the GPU per step
        self.in_scaler = False
        self.scaler = None
        self.autocast = None
        self.torch = None
        self.anomaly_off = None  # turns anomaly detection off through torch's own setter

    # ---- settings re-asserted after every optimizer step (the program may set them back) ----

    def assert_settings(self):
        torch = self.torch
        if "cudnn-benchmark" in self.fixes and not _probe(lambda: torch.backends.cudnn.benchmark):
            _probe(setattr, torch.backends.cudnn, "benchmark", True)
        if "anomaly-off" in self.fixes and self.anomaly_off is not None and torch.is_anomaly_enabled():
            self.anomaly_off()
        if "tf32" in self.fixes:
            self.set_tf32()

    def set_tf32(self):
        torch = self.torch
        # torch 2.9+: the precision API; earlier: allow_tf32 and the matmul precision (1.12+).
        if _probe(setattr, torch.backends.cuda.matmul, "fp32_precision", "tf32") is None and \
                _probe(lambda: torch.backends.cuda.matmul.fp32_precision) == "tf32":
            _probe(setattr, torch.backends.cudnn.conv, "fp32_precision", "tf32")
            return
        _probe(setattr, torch.backends.cuda.matmul, "allow_tf32", True)
        _probe(setattr, torch.backends.cudnn, "allow_tf32", True)
        _probe(torch.set_float32_matmul_precision, "high")

    # ---- hooks, run right after the bootstrap's own for the same module ----

    def on_torch(self, torch):
        self.torch = torch
        cuda = bool(_probe(torch.cuda.is_available))
        self.report.write(event="torch", torch=torch.__version__, cuda=getattr(torch.version, "cuda", None),
                          device="cuda" if cuda else "cpu",
                          device_name=_probe(torch.cuda.get_device_name, 0) if cuda else None)
        self._wrap_backward(torch)
        if "anomaly-off" in self.fixes:
            original = torch.set_anomaly_enabled
            self.anomaly_off = lambda: original(False)

            def anomaly_kept_off(mode, *args, **kwargs):
                if mode:
                    self.report.fix("anomaly-off", True, "torch.set_anomaly_enabled(True) left anomaly detection off")
                return original(False, *args, **kwargs)

            torch.set_anomaly_enabled = anomaly_kept_off
            original(False)
        if "cudnn-benchmark" in self.fixes:
            if not cuda:
                self.report.fix("cudnn-benchmark", False, "no GPU: cuDNN runs only on a GPU")
            self._force_cudnn_benchmark(torch)
        if "tf32" in self.fixes:
            if not cuda:
                self.report.fix("tf32", False, "no GPU: TF32 is a GPU (Ampere and later) precision")
            else:
                self.set_tf32()
                self.report.fix("tf32", True, "TF32 allowed for matmuls and convolutions")
        for amp in ("amp-bf16", "amp-fp16"):
            if amp in self.fixes:
                self._start_autocast(torch, amp, cuda)

    def _force_cudnn_benchmark(self, torch):
        cudnn = torch.backends.cudnn
        prop = type(cudnn).__dict__.get("benchmark")
        get = getattr(prop, "getter", None) if prop is not None else None
        set_ = getattr(prop, "setter", None) if prop is not None else None
        if callable(get) and callable(set_):
            # torch.backends.cudnn.benchmark is a ContextProp on the module's class: keep its getter,
            # and make every assignment turn the autotuner on.
            type(cudnn).benchmark = property(lambda module: get(), lambda module, value: set_(True))
        _probe(setattr, cudnn, "benchmark", True)
        if _probe(torch.cuda.is_available):
            self.report.fix("cudnn-benchmark", True, "torch.backends.cudnn.benchmark forced on")

    def _start_autocast(self, torch, amp, cuda):
        dtype = torch.bfloat16 if amp == "amp-bf16" else torch.float16
        device = "cuda" if cuda else "cpu"
        if amp == "amp-fp16" and not cuda:
            self.report.fix(amp, False, "no GPU: float16 autocast with loss scaling is for GPUs; try amp-bf16")
            return
        try:
            self.autocast = lambda: torch.autocast(device_type=device, dtype=dtype)
            context = self.autocast()
            context.__enter__()
            self.autocast_context = context
        except Exception as error:  # this torch has no autocast for the device or dtype
            self.autocast = None
            self.report.fix(amp, False, "autocast(%s, %s) failed: %s" % (device, dtype, error))
            return
        if amp == "amp-fp16":
            # torch 2.3+: torch.amp.GradScaler(device); before: torch.cuda.amp.GradScaler().
            amp_scaler = getattr(getattr(torch, "amp", None), "GradScaler", None)
            self.scaler = amp_scaler("cuda") if amp_scaler is not None else torch.cuda.amp.GradScaler()
        self.report.fix(amp, True, "autocast(%s, %s) on the training thread, renewed after each optimizer step%s"
                        % (device, str(dtype).replace("torch.", ""), "; GradScaler" if self.scaler else ""))

    def _renew_autocast(self):
        # Leaving autocast drops its cache of low-precision weight copies, which the step made stale.
        self.autocast_context.__exit__(None, None, None)
        self.autocast_context = self.autocast()
        self.autocast_context.__enter__()

    def _wrap_backward(self, torch):
        backward = torch.Tensor.backward
        bench = self

        def backward_noting_loss(tensor, *args, **kwargs):
            if tensor.dim() == 0 and tensor.requires_grad:
                bench.losses.append(tensor.detach())
                if bench.scaler is not None:
                    tensor = bench.scaler.scale(tensor)
            return backward(tensor, *args, **kwargs)

        backward_noting_loss._tuneup_wrapped = True
        torch.Tensor.backward = backward_noting_loss

    def on_optimizer(self, module):
        Optimizer = module.Optimizer
        bench = self

        if "set-to-none" in self.fixes:
            zero_grad = Optimizer.zero_grad

            def zero_grad_to_none(optimizer, *args, **kwargs):
                kwargs.pop("set_to_none", None)
                bench.report.fix("set-to-none", True, "Optimizer.zero_grad(set_to_none=True)")
                return zero_grad(optimizer, set_to_none=True)

            Optimizer.zero_grad = zero_grad_to_none

        init = Optimizer.__init__

        def init_and_count(optimizer, *args, **kwargs):
            init(optimizer, *args, **kwargs)
            # The class in the optimizer's MRO that defines the step it runs (a subclass may inherit it).
            owner = next((k for k in type(optimizer).__mro__ if "step" in k.__dict__), None)
            step = owner.__dict__["step"] if owner is not None else None
            if step is not None and not getattr(step, "_tuneup_counted", False):
                owner.step = bench._counting(step)
            if "channels-last" in bench.fixes:
                bench._channels_last(optimizer)

        Optimizer.__init__ = init_and_count

    def _counting(self, step):
        import functools

        bench = self

        @functools.wraps(step)
        def counted_step(optimizer, *args, **kwargs):
            if bench.scaler is not None and not bench.in_scaler:
                bench.in_scaler = True
                try:
                    result = bench.scaler.step(optimizer, *args, **kwargs)  # calls this again, unscaled
                    bench.scaler.update()
                finally:
                    bench.in_scaler = False
            else:
                result = step(optimizer, *args, **kwargs)
                if bench.in_scaler:
                    return result
            if bench.autocast is not None:
                bench._renew_autocast()
            if bench.counted is None:
                bench.counted = optimizer
            if optimizer is bench.counted:
                bench.steps += 1
                bench.assert_settings()
                if bench.stop_after and bench.steps >= bench.stop_after:
                    bench.stop()
            return result

        counted_step._tuneup_counted = True
        counted_step._tuneup_wrapped = getattr(step, "_tuneup_wrapped", False)
        return counted_step

    def _channels_last(self, optimizer):
        torch = self.torch
        converted = 0
        for group in optimizer.param_groups:
            for p in group["params"]:
                if p.dim() == 4 and not p.is_contiguous(memory_format=torch.channels_last):
                    p.data = p.data.contiguous(memory_format=torch.channels_last)
                    converted += 1
        if converted:
            self.report.fix("channels-last", True, "%d 4-D parameters (convolution weights) made channels_last"
                            % converted)
        else:
            self.report.fix("channels-last", False, "the optimizer's parameters hold no 4-D tensor (no 2-D "
                                                    "convolution)")

    def on_optim_package(self, optim):
        if "fused-optimizer" not in self.fixes:
            return
        import inspect

        for name, cls in list(vars(optim).items()):
            if isinstance(cls, type) and issubclass(cls, optim.Optimizer) and cls is not optim.Optimizer:
                try:
                    parameters = inspect.signature(cls.__init__).parameters
                except (TypeError, ValueError):
                    continue
                if "fused" in parameters or "foreach" in parameters:
                    cls.__init__ = self._fusing(cls.__init__, name, "fused" in parameters, "foreach" in parameters)

    def _fusing(self, init, name, has_fused, has_foreach):
        bench = self

        def init_fused(optimizer, params, *args, **kwargs):
            params = list(params)
            if kwargs.get("fused") or kwargs.get("foreach"):
                return init(optimizer, params, *args, **kwargs)
            tensors = [t for p in params for t in (p["params"] if isinstance(p, dict) else [p])]
            on_gpu = bool(tensors) and all(getattr(t, "is_cuda", False) for t in tensors)
            if has_fused and on_gpu:
                try:
                    init(optimizer, params, *args, **dict(kwargs, fused=True))
                    bench.report.fix("fused-optimizer", True, "%s(fused=True)" % name)
                    return None
                except Exception:  # this optimizer's fused form refuses these parameters: try foreach
                    pass
            if has_foreach:
                init(optimizer, params, *args, **dict(kwargs, foreach=True))
                bench.report.fix("fused-optimizer", True, "%s(foreach=True)" % name)
                return None
            bench.report.fix("fused-optimizer", False, "%s has no fused or foreach form here" % name)
            return init(optimizer, params, *args, **kwargs)

        return init_fused

    def on_dataloader(self, module):
        wanted = {k: v for k, v in self.fixes.items() if k in ("dataloader-workers", "pin-memory",
                                                                 "persistent-workers")}
        if not wanted:
            return
        import inspect

        DataLoader = module.DataLoader
        init = DataLoader.__init__
        signature = inspect.signature(init)
        bench = self

        def init_fixed(loader, *args, **kwargs):
            try:
                bound = signature.bind(loader, *args, **kwargs)
            except TypeError:
                return init(loader, *args, **kwargs)  # the program's own error, as it would be
            bound.apply_defaults()
            a = bound.arguments
            bench._fix_loader(a, wanted)
            return init(*bound.args, **bound.kwargs)

        DataLoader.__init__ = init_fixed

    def _fix_loader(self, a, wanted):
        torch = self.torch
        from torch.utils.data import IterableDataset

        iterable = isinstance(a.get("dataset"), IterableDataset)
        if "dataloader-workers" in wanted:
            workers = int(wanted["dataloader-workers"])
            if iterable:
                self.report.fix("dataloader-workers", False, "an IterableDataset: more workers would each "
                                                             "yield the whole dataset unless it splits it itself")
            else:
                a["num_workers"] = workers
                self.report.fix("dataloader-workers", True, "DataLoader(num_workers=%d)" % workers)
        if "persistent-workers" in wanted:
            if (a.get("num_workers") or 0) > 0:
                a["persistent_workers"] = True
                self.report.fix("persistent-workers", True, "DataLoader(persistent_workers=True)")
            else:
                self.report.fix("persistent-workers", False, "the DataLoader has no workers (num_workers=0): "
                                                             "add dataloader-workers=N")
        if "pin-memory" in wanted:
            if torch is not None and _probe(torch.cuda.is_available):
                a["pin_memory"] = True
                self.report.fix("pin-memory", True, "DataLoader(pin_memory=True)")
            else:
                self.report.fix("pin-memory", False, "no GPU: pinned memory speeds up copies to a GPU")

    def stop(self):
        self.write_losses()
        self.report.write(event="stop", steps=self.steps)
        sys.stdout.flush()
        raise SystemExit(0)

    def write_losses(self):
        if not self.losses:
            return
        try:
            values = self.torch.stack([t.float() for t in self.losses]).cpu().tolist()  # one sync, at the end
        except Exception as error:
            self.report.write(event="losses", values=[], error=str(error))
            return
        self.report.write(event="losses", values=values)
        self.losses.clear()


def add_hooks(agent, hooks):
    """Chains tuneup bench's hooks after the bootstrap's own in `hooks` (module name -> function)."""
    report = _Report(os.environ["TUNEUP_BENCH_REPORT"])
    fixes = _parse_fixes(os.environ.get("TUNEUP_FIX", ""))
    for name in fixes:
        if name not in _KNOWN:
            report.fix(name, False, "unknown fix")
    try:
        stop_after = int(os.environ.get("TUNEUP_BENCH_STOP_AFTER", "0"))
    except ValueError:
        stop_after = 0
    bench = _Bench(report, fixes, stop_after)
    report.write(event="start", python=sys.version.split()[0], fixes=sorted(fixes))
    import atexit

    atexit.register(bench.write_losses)  # a program that ends on its own before the limit

    def chain(name, function):
        first = hooks.get(name)

        def both(module):
            if first is not None:
                first(module)
            function(module)

        hooks[name] = both

    chain("torch", bench.on_torch)
    chain("torch.optim.optimizer", bench.on_optimizer)
    chain("torch.optim", bench.on_optim_package)
    chain("torch.utils.data.dataloader", bench.on_dataloader)
