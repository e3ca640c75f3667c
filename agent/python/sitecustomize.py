"""tuneup's Python bootstrap, loaded as `sitecustomize` by `tuneup record` (see docs/agent.md).

Once torch is imported it marks, in the NVTX domain "tuneup", what the advisor's rules look for: DataLoader
iteration, Optimizer.zero_grad and Optimizer.step (named as torch.profiler names them), the model's forward
pass and backward, and each batch a DataLoader worker makes (in the worker's own file); and it records facts
as marks with an integer payload: the DataLoader's num_workers, pin_memory, persistent_workers and batch size,
zero_grad's set_to_none, each optimizer's foreach/fused implementation, parameter count, family and the
precision of its parameters, DataParallel or DistributedDataParallel wrapping (with the world size and the
model's BatchNorm layers), what a GradScaler does (its skipped steps, its scale, clipping before unscale_),
gradcheck; after each optimizer step, the GPUs' caching allocator (its totals and peaks). Where the agent
records, it also notes the line of the user's code behind the calls it watches and samples the main thread's
Python stack (tuneup_sites.py, beside it). It
chains any other sitecustomize on the path, is switched off with TUNEUP_PYTHON_BOOTSTRAP=0, and never breaks
the program: a failure of its own is reported once on stderr and the bootstrap steps aside. Under `tuneup
bench` it also loads tuneup_bench.py, beside it: the fixes bench applies in the process and its step limit
(docs/bench.md).
"""

import os
import sys
import threading

# Per thread: how deep in nn.Module calls it is, and whether it is making a DataLoader batch.
_thread_state = threading.local()

# The call sites and the sampler (tuneup_sites.Sites) where the agent records; None elsewhere.
_sites = None


def _not_compiling():
    return False


# torch.compiler.is_compiling once torch is imported (torch 2.x; 1.13 has none): while Dynamo traces, the
# forward marker does nothing, so that the compiled graph has no break. Dynamo reads this global as the
# function it is, which it knows to be constant.
_is_compiling = _not_compiling


def _chain_next_sitecustomize():
    """Runs the sitecustomize this one hides (later on sys.path), as Python would have."""
    import importlib.machinery
    import importlib.util

    here = os.path.dirname(os.path.abspath(__file__))
    path = [p for p in sys.path if os.path.abspath(p or os.curdir) != here]
    spec = importlib.machinery.PathFinder.find_spec("sitecustomize", path)
    if spec is None or spec.loader is None:
        return
    module = importlib.util.module_from_spec(spec)
    try:
        spec.loader.exec_module(module)
    except Exception:  # site.py reports a failing sitecustomize and goes on: so do we
        import traceback

        sys.stderr.write("Error in sitecustomize (%s); continuing:\n" % spec.origin)
        traceback.print_exc()


def _warn(what, error):
    sys.stderr.write("tuneup: Python bootstrap: %s: %s (recording goes on without it)\n" % (what, error))


_warned = set()  # what has been warned about once


def _warn_once(what, error):
    """_warn, the first time for `what` only: facts read at every step or of every object would repeat it."""
    if what not in _warned:
        _warned.add(what)
        _warn(what, error)


class _Agent:
    """The agent's bootstrap entry points, through ctypes (the agent is in the global scope)."""

    def __init__(self):
        import ctypes

        lib = ctypes.CDLL(None)
        self._push = lib.tuneup_range_push
        self._push.argtypes = [ctypes.c_char_p]
        self._push.restype = ctypes.c_int
        self._pop = lib.tuneup_range_pop
        self._pop.argtypes = []
        self._pop.restype = ctypes.c_int
        self._mark = lib.tuneup_mark
        self._mark.argtypes = [ctypes.c_char_p, ctypes.c_int64]
        self._mark.restype = None
        self._sample_ms = getattr(lib, "tuneup_python_sample_ms", None)  # an older agent has none
        self._facts = {}

    def python_sample_ms(self):
        """The agent's period for sampling the main thread's Python stack (0: none); -1: call sites are not
        recorded in this process."""
        if self._sample_ms is None:
            return -1
        self._sample_ms.restype = __import__("ctypes").c_int
        return self._sample_ms()

    def push(self, name):
        self._push(name.encode())

    def pop(self):
        self._pop()

    def fact(self, name, value):
        """A mark named `name` with payload `value`, when the value is new."""
        value = int(value)
        if self._facts.get(name) != value:
            self._facts[name] = value
            self._mark(name.encode(), value)


def _ranged(agent, name_of, function):
    """`function` inside a range named name_of(args); the program's own exceptions pass through."""
    import functools

    @functools.wraps(function)
    def wrapper(*args, **kwargs):
        agent.push(name_of(args))
        try:
            return function(*args, **kwargs)
        finally:
            agent.pop()

    wrapper._tuneup_wrapped = True
    return wrapper


def _watched(sites, name, function):
    """`function` with its call sites noted as `name` (tuneup_sites.py), or as it is without them."""
    return function if sites is None else sites.watch(name, function)


def _patch_optimizer(agent, sites, module):
    import functools
    import inspect

    Optimizer = module.Optimizer
    zero_grad = Optimizer.zero_grad
    try:
        default_set_to_none = inspect.signature(zero_grad).parameters["set_to_none"].default
    except (KeyError, ValueError, TypeError):
        default_set_to_none = None

    # zero_grad's default changed in PyTorch 2.0: the version goes with the setting. Not at import, where its
    # mark would take the torch probes' first sample before the program sets its flags.
    torch = sys.modules.get("torch")
    version = _torch_version_number(getattr(torch, "__version__", ""))
    version_recorded = []

    @functools.wraps(zero_grad)
    def zero_grad_with_fact(self, *args, **kwargs):
        set_to_none = kwargs.get("set_to_none", args[0] if args else default_set_to_none)
        if isinstance(set_to_none, bool):
            agent.fact("tuneup.zero_grad.set_to_none", set_to_none)
        if version is not None and not version_recorded:
            agent.fact("tuneup.torch.version", version)
            version_recorded.append(True)
        return zero_grad(self, *args, **kwargs)

    Optimizer.zero_grad = _watched(
        sites,
        "Optimizer.zero_grad",
        _ranged(agent, lambda a: "Optimizer.zero_grad#%s.zero_grad" % type(a[0]).__name__, zero_grad_with_fact),
    )

    # Subclasses define step: wrap each class's step once, from the first optimizer made of it
    # (after torch's own wrapper, so this range encloses it).
    init = Optimizer.__init__

    def step_name(args):
        return "Optimizer.step#%s.step" % type(args[0]).__name__

    def init_and_wrap_step(self, *args, **kwargs):
        init(self, *args, **kwargs)
        _record_optimizer(agent, self, version)
        cls = type(self)
        step = cls.__dict__.get("step")
        if step is not None and not getattr(step, "_tuneup_wrapped", False):
            cls.step = _watched(
                sites,
                "Optimizer.step",
                _after_step(sites, _ranged(agent, step_name, _counted(agent, step))),
            )

    Optimizer.__init__ = init_and_wrap_step


# What the optimizer's step runs as (docs/agent.md): tuneup.optimizer.family.
_FAMILY_OTHER, _FAMILY_TORCH, _FAMILY_APEX = 0, 1, 2


def _foreach_default(optimizer, version):
    """What foreach=None (the default) runs: from PyTorch 2.0, the foreach implementation when every parameter
    is a plain tensor on a device with foreach kernels (CUDA) and the optimizer is not differentiable
    (torch.optim.optimizer._default_to_fused_or_foreach); in 1.x, the per-parameter loop."""
    if version is None or version < 20000 or optimizer.defaults.get("differentiable"):
        return False
    import torch

    try:
        from torch.utils._foreach_utils import _get_foreach_kernels_supported_devices

        devices = set(_get_foreach_kernels_supported_devices())
    except Exception:  # older 2.x: CUDA only
        devices = {"cuda"}
    plain = (torch.Tensor, torch.nn.parameter.Parameter)
    params = [p for group in optimizer.param_groups for p in group["params"]]
    return bool(params) and all(type(p) in plain and p.device.type in devices for p in params)


def _record_optimizer(agent, optimizer, version):
    """Facts about an optimizer just made: which family its class is, how many parameters it updates, and
    whether its step runs foreach (multi-tensor) or fused kernels (1/0, -1 when it has no such option)."""
    try:
        defaults = getattr(optimizer, "defaults", None) or {}
        module = type(optimizer).__module__ or ""
        family = (_FAMILY_TORCH if module.startswith("torch.optim")
                  else _FAMILY_APEX if module.startswith("apex.") else _FAMILY_OTHER)
        # None is "the default": never fused (no PyTorch picks fused by itself); foreach as _foreach_default.
        fused = bool(defaults["fused"]) if "fused" in defaults else -1
        foreach = -1
        if "foreach" in defaults:
            setting = defaults["foreach"]
            if setting is not None:
                foreach = bool(setting)
            else:
                foreach = fused is not True and _foreach_default(optimizer, version)
        params = sum(len(group["params"]) for group in optimizer.param_groups)
        agent.fact("tuneup.optimizer.family", family)
        agent.fact("tuneup.optimizer.params", params)
        agent.fact("tuneup.optimizer.foreach", foreach)
        agent.fact("tuneup.optimizer.fused", fused)
    except Exception as error:  # an optimizer this does not understand: no facts, no harm
        _warn_once("reading the optimizer's settings", error)


# Optimizer steps run so far, in this process: a GradScaler's step that did not run one skipped it (_Amp).
_optimizer_steps = [0]


def _counted(agent, step):
    """An optimizer's `step`, counted, with the precision of its parameters recorded at its first step (when
    the update applies: a model made .half() after its optimizer holds fp16 parameters by then)."""
    import weakref

    stepped = weakref.WeakSet()  # the optimizers that have stepped

    def counted(self, *args, **kwargs):
        _optimizer_steps[0] += 1
        if self not in stepped:
            stepped.add(self)
            _record_parameter_types(agent, self)
        return step(self, *args, **kwargs)

    return counted


_parameter_types = {}  # fact -> parameters of that type over the optimizers that stepped


def _record_parameter_types(agent, optimizer):
    """tuneup.optimizer.params_fp16 / _bf16: the parameters an optimizer updates in half precision, over the
    optimizers of the process (half-without-master-weights)."""
    try:
        import torch

        facts = {torch.float16: "tuneup.optimizer.params_fp16", torch.bfloat16: "tuneup.optimizer.params_bf16"}
        for group in optimizer.param_groups:
            for p in group["params"]:
                fact = facts.get(p.dtype)
                if fact is not None:
                    _parameter_types[fact] = _parameter_types.get(fact, 0) + 1
        for fact in facts.values():
            agent.fact(fact, _parameter_types.get(fact, 0))
    except Exception as error:
        _warn_once("reading the optimizer's parameters", error)


def _after_step(sites, step):
    """The optimizer's `step`, then the GPUs' caching allocator read (_GpuMemory) and this thread's call sites handed
    to the agent: once per optimizer step."""

    def after_step(*args, **kwargs):
        try:
            result = step(*args, **kwargs)
            if _gpu_memory is not None:
                _gpu_memory.read()
            return result
        finally:
            if sites is not None:
                sites.hand()

    return after_step


def _patch_dataloader(agent, sites, module):
    Iter = module._BaseDataLoaderIter
    init = Iter.__init__

    def init_with_facts(self, loader, *args, **kwargs):
        init(self, loader, *args, **kwargs)
        agent.fact("tuneup.dataloader.num_workers", getattr(loader, "num_workers", 0) or 0)
        agent.fact("tuneup.dataloader.pin_memory", bool(getattr(loader, "pin_memory", False)))
        agent.fact("tuneup.dataloader.persistent_workers", bool(getattr(loader, "persistent_workers", False)))
        _record_batch_size(agent, loader)

    Iter.__init__ = init_with_facts
    Iter.__next__ = _watched(
        sites,
        "DataLoader.__next__",
        _ranged(agent, lambda a: "enumerate(DataLoader)#%s.__next__" % type(a[0]).__name__, Iter.__next__),
    )
    if sites is not None:
        sites.watch_method(module.DataLoader, "__init__", "DataLoader")


def _record_batch_size(agent, loader):
    """The DataLoader's batch size: its batch_size, or its batch_sampler's own when it was given one (batch_size
    is None then); none when neither says (a sampler that makes batches of its own sizes)."""
    try:
        size = getattr(loader, "batch_size", None)
        if size is None:
            size = getattr(getattr(loader, "batch_sampler", None), "batch_size", None)
        if isinstance(size, int) and not isinstance(size, bool) and size > 0:
            agent.fact("tuneup.dataloader.batch_size", size)
    except Exception as error:  # a loader this does not understand: no fact, no harm
        _warn_once("reading the DataLoader's batch size", error)


def _patch_fetchers(agent, module):
    """Each batch a DataLoader makes, in the process that makes it: a worker (which then writes its own
    file, with its worker id as a fact) or, with num_workers=0, the training process itself."""
    checked_in = [None]  # the pid that looked for its worker id (forked workers inherit this)

    def name_of(args):
        if checked_in[0] != os.getpid():
            checked_in[0] = os.getpid()
            # Imported at the first batch: torch.utils.data is still being imported when this is patched.
            from torch.utils.data import get_worker_info

            info = get_worker_info()
            if info is not None:
                agent.fact("tuneup.dataloader.worker_id", info.id)
        return "tuneup.dataloader.fetch"

    def fetching(fetch):
        """The batch's own modules (transforms, augmentation) are not the model's forward pass."""

        def fetch_marked(*args, **kwargs):
            outer = getattr(_thread_state, "fetching", False)
            _thread_state.fetching = True
            try:
                return fetch(*args, **kwargs)
            finally:
                _thread_state.fetching = outer

        fetch_marked._tuneup_wrapped = True
        return fetch_marked

    for name in ("_MapDatasetFetcher", "_IterableDatasetFetcher"):
        cls = getattr(module, name, None)
        if cls is not None and "fetch" in cls.__dict__:
            cls.fetch = _ranged(agent, name_of, fetching(cls.fetch))


class _Amp:
    """What the program's GradScalers do, read without a GPU sync (the scale lives on the GPU; reading it would
    stall the step): whether one is enabled, each update and whether the optimizer step before it was skipped
    (GradScaler.step ran no optimizer step: it found inf/NaN gradients), the loss scale as the scaler computes
    it from those skips, and gradient clipping while the gradients are still scaled (before `unscale_`).
    Facts tuneup.amp.* (docs/agent.md). Its bookkeeping never reaches the program: a failure is warned once."""

    def __init__(self, agent, sites):
        self._agent = agent
        self._sites = sites
        self._state = __import__("weakref").WeakKeyDictionary()  # scaler -> _ScalerState
        self._enabled = False  # an enabled scaler was used: clipping is judged from then on
        self._scaled = False  # an enabled scaler scaled a loss whose gradients are not unscaled yet
        self._updates = 0
        self._skipped = 0
        self._clips = [0, 0]  # clipping while scaled, after unscaling

    def patch(self, cls):
        """Wraps GradScaler `cls` so that each class made from it (a subclass may define its own methods) is
        wrapped when its first instance is made."""
        init = cls.__init__
        amp = self

        def init_and_wrap(scaler, *args, **kwargs):
            init(scaler, *args, **kwargs)
            amp._wrap_class(type(scaler))

        init_and_wrap._tuneup_wrapped = True
        if not getattr(init, "_tuneup_wrapped", False):
            cls.__init__ = init_and_wrap

    def patch_clipping(self, module):
        for name in ("clip_grad_norm_", "clip_grad_value_"):  # clip_grad_norm (deprecated) calls clip_grad_norm_
            function = getattr(module, name, None)
            if callable(function) and not getattr(function, "_tuneup_wrapped", False):
                setattr(module, name, _watched(self._sites, "torch.nn.utils." + name, self._clipping(function)))

    def _wrap_class(self, cls):
        for klass in cls.__mro__:
            for name, wrap in (("scale", self._scale), ("unscale_", self._unscale), ("step", self._step),
                               ("update", self._update)):
                method = klass.__dict__.get(name)
                if callable(method) and not getattr(method, "_tuneup_wrapped", False):
                    wrapped = wrap(method)
                    wrapped._tuneup_wrapped = True
                    if name == "scale":  # the line that scales the loss: where a finding about skips points
                        wrapped = _watched(self._sites, "GradScaler.scale", wrapped)
                    setattr(klass, name, wrapped)

    def _of(self, scaler):
        state = self._state.get(scaler)
        if state is None:
            state = self._state[scaler] = _ScalerState(scaler)
            self._enabled = self._enabled or state.enabled
            self._agent.fact("tuneup.amp.grad_scaler", state.enabled)
            self._note_scale(state.scale)
        return state

    def _scale(self, scale):
        amp = self

        def scaling(scaler, outputs):
            try:
                if amp._of(scaler).enabled:
                    amp._scaled = True
            except Exception as error:
                _warn_once("reading the GradScaler (scale)", error)
            return scale(scaler, outputs)

        return scaling

    def _unscale(self, unscale):
        amp = self

        def unscaling(scaler, optimizer):
            amp._scaled = False
            return unscale(scaler, optimizer)

        return unscaling

    def _step(self, step):
        amp = self

        def stepping(scaler, optimizer, *args, **kwargs):
            before = _optimizer_steps[0]
            result = step(scaler, optimizer, *args, **kwargs)
            try:
                state = amp._of(scaler)
                # A skip shows as no optimizer step run, when the step is one this counts (an Optimizer's) and
                # the scaler decides it: a fused optimizer takes the scaler and skips inside its own kernels.
                counted = getattr(type(optimizer).step, "_tuneup_wrapped", False)
                if state.enabled and (getattr(optimizer, "_step_supports_amp_scaling", False) or not counted):
                    state.skips_known = False
                elif state.enabled and _optimizer_steps[0] == before:
                    state.skipped = True
            except Exception as error:
                _warn_once("reading the GradScaler (step)", error)
            return result

        return stepping

    def _update(self, update):
        amp = self

        def updating(scaler, new_scale=None):
            result = update(scaler, new_scale)
            try:
                amp._note_update(scaler, new_scale)
            except Exception as error:
                _warn_once("reading the GradScaler (update)", error)
            return result

        return updating

    def _note_update(self, scaler, new_scale):
        state = self._of(scaler)
        self._scaled = False
        if not state.enabled:
            return
        agent = self._agent
        self._updates += 1
        agent.fact("tuneup.amp.updates", self._updates)
        if not state.skips_known:
            agent.fact("tuneup.amp.skipped", -1)
            return
        skipped, state.skipped = state.skipped, False
        if skipped:
            self._skipped += 1
        agent.fact("tuneup.amp.skipped", self._skipped)
        self._note_scale(state.follow(skipped, new_scale))

    def _note_scale(self, scale):
        if scale is not None:
            self._agent.fact("tuneup.amp.scale_milli", min(int(round(scale * 1000)), 1 << 62))

    def _clipping(self, clip):
        import functools

        amp = self

        @functools.wraps(clip)
        def clipping(*args, **kwargs):
            if amp._enabled:
                after = 0 if amp._scaled else 1
                amp._clips[after] += 1
                amp._agent.fact(("tuneup.amp.clip_before_unscale", "tuneup.amp.clip_after_unscale")[after],
                                amp._clips[after])
            return clip(*args, **kwargs)

        clipping._tuneup_wrapped = True
        return clipping


class _ScalerState:
    """One GradScaler: enabled, and its scale followed on the host as torch's _amp_update_scale_ computes it
    (a skip multiplies it by the backoff factor; growth_interval steps in a row without one by the growth
    factor), from the scale it starts with; None once it cannot be followed (an update to a tensor scale)."""

    def __init__(self, scaler):
        self.enabled = bool(scaler.is_enabled())
        self.skipped = False  # the optimizer step since the last update was skipped
        self.skips_known = True
        self.scale = None
        self.good_steps = 0
        if self.enabled and getattr(scaler, "_init_scale", None) is not None:
            self.scale = float(scaler._init_scale)
            self.good_steps = int(getattr(scaler, "_init_growth_tracker", 0) or 0)
            self.growth = float(scaler.get_growth_factor())
            self.backoff = float(scaler.get_backoff_factor())
            self.interval = int(scaler.get_growth_interval())

    def follow(self, skipped, new_scale):
        if self.scale is None:
            return None
        if new_scale is not None:
            self.scale = float(new_scale) if isinstance(new_scale, (int, float)) else None
            return self.scale
        if skipped:
            self.scale *= self.backoff
            self.good_steps = 0
        else:
            self.good_steps += 1
            if self.good_steps == self.interval:
                self.scale *= self.growth
                self.good_steps = 0
        return self.scale


def _patch_wrapper_class(agent, cls, fact):
    init = cls.__init__

    def init_with_fact(self, *args, **kwargs):
        init(self, *args, **kwargs)
        agent.fact(fact, 1)

    cls.__init__ = init_with_fact


def _patch_ddp(agent, cls):
    """As DistributedDataParallel starts wrapping a model: the world size (torch.distributed's default group,
    when initialised) and the model's BatchNorm layers, plain and SyncBatchNorm (sync-batchnorm-missing and
    -unneeded), before DDP's own __init__, which refuses SyncBatchNorm in a model on the CPU: the facts say what
    the program asked for either way. Once it has wrapped it, tuneup.wrap.distributed_data_parallel."""
    init = cls.__init__

    def init_with_facts(self, *args, **kwargs):
        _record_ddp_model(agent, args[0] if args else kwargs.get("module"))
        init(self, *args, **kwargs)
        agent.fact("tuneup.wrap.distributed_data_parallel", 1)

    cls.__init__ = init_with_facts


def _record_ddp_model(agent, model):
    try:
        import torch.distributed as dist
        from torch import nn

        if dist.is_available() and dist.is_initialized():
            agent.fact("tuneup.ddp.world_size", dist.get_world_size())
        if model is None:
            return
        plain = sync = 0
        for layer in model.modules():
            if isinstance(layer, nn.SyncBatchNorm):
                sync += 1
            elif isinstance(layer, nn.modules.batchnorm._BatchNorm):
                plain += 1
        agent.fact("tuneup.ddp.batchnorm_layers", plain)
        agent.fact("tuneup.ddp.sync_batchnorm_layers", sync)
    except Exception as error:  # a model this does not understand: no facts, no harm
        _warn_once("reading the BatchNorm layers of the model DistributedDataParallel wraps", error)


def _torch_version_number(version):
    """"2.11.0+cu130" -> 21100, "1.13.1" -> 11301, "2.5.0a0+git1234" -> 20500; None when unreadable."""
    import re

    match = re.match(r"(\d+)\.(\d+)(?:\.(\d+))?", str(version))
    if not match:
        return None
    major, minor, patch = (int(part or 0) for part in match.groups())
    return major * 10000 + minor * 100 + min(patch, 99)


# The calls whose lines the call sites name (docs/agent.md): those that wait for the GPU or copy, and the
# debugging and profiling APIs. (owner's path from torch, attribute, name; a path without attribute is a
# function.) Tensor methods are noted only when they took long enough to have done GPU work.
_TENSOR_CALLS = ("item", "cpu", "tolist", "numpy", "to", "cuda")
_WATCHED_CALLS = [
    ("cuda.synchronize", None, "torch.cuda.synchronize"),
    ("nn.Module", "half", "torch.nn.Module.half"),
    ("autograd.set_detect_anomaly", "__init__", "torch.autograd.set_detect_anomaly"),
    ("autograd.detect_anomaly", "__init__", "torch.autograd.detect_anomaly"),
    ("autograd.gradgradcheck", None, "torch.autograd.gradgradcheck"),
    ("autograd.profiler.profile", "__init__", "torch.autograd.profiler.profile"),
    ("autograd.profiler.emit_nvtx", "__init__", "torch.autograd.profiler.emit_nvtx"),
    ("profiler.profile", "__init__", "torch.profiler.profile"),
]


def _watch_calls(sites, torch):
    for method in _TENSOR_CALLS:
        sites.watch_method(torch.Tensor, method, "Tensor." + method, sites.MIN_TENSOR_CALL_NS)
    for path, attribute, name in _WATCHED_CALLS:
        owner = torch
        parts = path.split(".")
        if attribute is None:  # a function: watched where it is looked up
            parts, attribute = parts[:-1], parts[-1]
        for part in parts:
            owner = getattr(owner, part, None)
        if owner is not None:
            sites.watch_method(owner, attribute, name)


def _in_main_process():
    """Not a multiprocessing child (a spawned DataLoader worker imports torch too)."""
    import multiprocessing

    parent = getattr(multiprocessing, "parent_process", None)
    return parent is None or parent() is None


def _patch_torch(agent, sites, torch):
    import functools

    global _is_compiling
    compiler = getattr(torch, "compiler", None) or sys.modules.get("torch.compiler")
    is_compiling = getattr(compiler, "is_compiling", None)
    if callable(is_compiling):
        _is_compiling = is_compiling

    torch.Tensor.backward = _watched(
        sites, "Tensor.backward", _ranged(agent, lambda a: "tuneup.backward", torch.Tensor.backward)
    )
    gradcheck = getattr(torch.autograd, "gradcheck", None)
    if callable(gradcheck):

        @functools.wraps(gradcheck)
        def gradcheck_with_fact(*args, **kwargs):
            agent.fact("tuneup.gradcheck", 1)
            return gradcheck(*args, **kwargs)

        torch.autograd.gradcheck = _watched(sites, "torch.autograd.gradcheck", gradcheck_with_fact)
    if sites is not None:
        sites.set_is_compiling(_is_compiling)
        sites.exclude(os.path.dirname(os.path.abspath(torch.__file__)))
        _watch_calls(sites, torch)
        if _in_main_process():
            sites.start_sampling()


# Modules whose calls are data transforms, not a model's forward pass (torchvision.transforms.v2 and
# torchaudio.transforms are nn.Modules).
_TRANSFORM_PACKAGES = ("torchvision.transforms", "torchaudio.transforms")


def _patch_module(agent, module):
    """The model's forward pass: the top nn.Module call on a thread, as a range named
    tuneup.forward#<class>. The modules it calls are not ranges of their own (a depth per thread), nor
    are DataParallel's replicas (their calls run inside the wrapper's forward), data transforms and the
    modules a DataLoader batch is made with, nor anything while torch.compile traces (no graph break)."""
    import functools

    Module = module.Module
    call = Module.__call__
    inspected = set()  # ids of the top-level modules whose structure was recorded
    transforms = {}  # class -> whether its calls are transforms

    def is_transform(cls):
        known = transforms.get(cls)
        if known is None:
            known = transforms[cls] = (getattr(cls, "__module__", "") or "").startswith(_TRANSFORM_PACKAGES)
        return known

    @functools.wraps(call)
    def call_marking_top(self, *args, **kwargs):
        if _is_compiling():
            return call(self, *args, **kwargs)
        state = _thread_state
        depth = getattr(state, "depth", 0)
        state.depth = depth + 1
        try:
            if (depth or getattr(state, "fetching", False) or getattr(self, "_is_replica", False)
                    or is_transform(type(self))):
                return call(self, *args, **kwargs)
            model = getattr(self, "_orig_mod", self)  # torch.compile's wrapper: name the model
            if id(model) not in inspected:
                inspected.add(id(model))
                _record_structure(agent, model)
            agent.push("tuneup.forward#" + type(model).__name__)
            try:
                return call(self, *args, **kwargs)
            finally:
                agent.pop()
        finally:
            state.depth = depth

    Module.__call__ = call_marking_top


def _record_structure(agent, model):
    """Facts about a model's layers, once per top-level module: convolutions with a bias whose next
    layer is a BatchNorm or InstanceNorm over their output channels (the norm cancels the bias)."""
    try:
        from torch import nn

        conv_types = nn.modules.conv._ConvNd
        norm_types = (nn.modules.batchnorm._BatchNorm, nn.modules.instancenorm._InstanceNorm)
        convs = wasted = 0
        for parent in model.modules():
            children = list(parent.children())
            convs += sum(isinstance(c, conv_types) for c in children)
            for conv, norm in zip(children, children[1:]):
                if (isinstance(conv, conv_types) and conv.bias is not None and isinstance(norm, norm_types)
                        and norm.num_features == conv.out_channels):
                    wasted += 1
        if convs:
            agent.fact("tuneup.model.convolutions", convs)
            agent.fact("tuneup.model.conv_bias_before_norm", wasted)
    except Exception as error:  # a model this scan does not understand: no facts, no harm
        _warn("reading the model's layers", error)


# When the bootstrap started (CLOCK_MONOTONIC, as the agent's times): the caching allocator's peaks cover
# the process from here until their first reset.
_started_ns = __import__("time").perf_counter_ns()

# The GPUs' caching allocator, read once per optimizer step (_GpuMemory) where the agent records; else None.
_gpu_memory = None


class _GpuMemory:
    """PyTorch's caching allocator, read after each optimizer step on each GPU it uses: its totals then
    (allocated to tensors, reserved from the driver) and their peaks since the last reset, handed to the agent
    (tuneup_memory_reading); then the peaks are reset, so that each reading holds one step's peak. The
    program's own max_memory_allocated/max_memory_reserved still answer since its own last reset (the peaks
    the bootstrap's resets hid are added back); memory_stats() and memory_summary() show the bootstrap's
    window. Nothing is read before the program has initialised CUDA, and a failure stops the readings, with
    one warning."""

    RESCAN_STEPS = 64  # how often the GPUs not in use are looked at again

    def __init__(self, memory):
        import ctypes
        import time

        reading = ctypes.CDLL(None).tuneup_memory_reading  # AttributeError: an older agent
        reading.argtypes = [ctypes.c_int64] * 7
        reading.restype = None
        self._reading = reading
        self._now = time.perf_counter_ns
        self._memory = memory  # torch.cuda.memory
        self._reset = memory.reset_peak_memory_stats  # the program's wrapper (below) is not ours
        self._since = {}  # device -> when its peaks were last reset
        self._hidden = {}  # device -> [allocated, reserved]: the peaks the bootstrap's resets hid
        self._devices = None  # the GPUs in use at the last scan
        self._steps = 0
        self._on = True

    def _totals(self, torch, device):
        """(allocated, reserved, peak allocated, peak reserved) bytes of one GPU."""
        nested = getattr(torch._C, "_cuda_memoryStats", None)  # one C++ call, no flattening
        if nested is not None:
            stats = nested(device)
            allocated, reserved = stats["allocated_bytes"]["all"], stats["reserved_bytes"]["all"]
            return allocated["current"], reserved["current"], allocated["peak"], reserved["peak"]
        stats = self._memory.memory_stats(device)
        return tuple(stats.get(key, 0) for key in ("allocated_bytes.all.current", "reserved_bytes.all.current",
                                                    "allocated_bytes.all.peak", "reserved_bytes.all.peak"))

    def read(self):
        """After an optimizer step. Never raises."""
        if not self._on:
            return
        try:
            torch = sys.modules["torch"]
            if not torch.cuda.is_initialized():  # CPU-only programs and torch builds: nothing to read
                return
            scan = self._devices is None or self._steps % self.RESCAN_STEPS == 0
            self._steps += 1
            in_use = []
            for device in range(torch.cuda.device_count()) if scan else self._devices:
                allocated, reserved, peak_allocated, peak_reserved = self._totals(torch, device)
                if not reserved and not peak_reserved:
                    continue  # a GPU the allocator has not used
                in_use.append(device)
                now = self._now()
                self._reading(now, device, self._since.get(device, _started_ns), allocated, reserved,
                              peak_allocated, peak_reserved)
                self._reset(device)
                self._since[device] = self._now()
                hidden = self._hidden.setdefault(device, [0, 0])
                hidden[0], hidden[1] = max(hidden[0], peak_allocated), max(hidden[1], peak_reserved)
            if scan:
                self._devices = in_use
        except Exception as error:  # a torch this does not understand: no readings, no harm
            self._on = False
            _warn("reading the GPU memory's peaks", error)

    def _index(self, device):
        try:
            return sys.modules["torch"].cuda._utils._get_device_index(device, optional=True)
        except Exception:
            return None

    def max_memory(self, function, which):
        """The program's max_memory_allocated (which=0) or max_memory_reserved (1), since its own last reset."""

        def max_memory(device=None):
            value = function(device)
            hidden = self._hidden.get(self._index(device)) if self._hidden else None
            return max(value, hidden[which]) if hidden else value

        return max_memory

    def program_reset(self, function):
        """The program's reset_peak_memory_stats: the peaks start again from here for the bootstrap too."""

        def reset_peak_memory_stats(device=None):
            function(device)
            index = self._index(device)
            self._hidden.pop(index, None)
            self._since[index] = self._now()

        return reset_peak_memory_stats


def _patch_cuda_memory(module):
    """torch.cuda.memory, imported with torch (and torch.cuda takes its names from it)."""
    global _gpu_memory
    try:
        memory = _GpuMemory(module)
    except AttributeError:  # an agent without the entry point
        return
    import functools

    for name, which in (("max_memory_allocated", 0), ("max_memory_reserved", 1)):
        function = getattr(module, name)
        setattr(module, name, functools.wraps(function)(memory.max_memory(function, which)))
    reset = module.reset_peak_memory_stats
    module.reset_peak_memory_stats = functools.wraps(reset)(memory.program_reset(reset))
    _gpu_memory = memory


class _AfterImport:
    """Runs a hook on a module right after it is first imported (a meta path finder that hands the
    import on to the others and wraps the loader it gets)."""

    def __init__(self, hooks):
        self._hooks = dict(hooks)

    def find_spec(self, name, path=None, target=None):
        hook = self._hooks.pop(name, None)
        if hook is None:
            return None
        for finder in sys.meta_path:
            if finder is self or not hasattr(finder, "find_spec"):
                continue
            spec = finder.find_spec(name, path, target)
            if spec is not None:
                break
        else:
            return None
        loader = spec.loader
        exec_module = getattr(loader, "exec_module", None)
        if exec_module is None:
            return spec

        def exec_and_hook(module):
            exec_module(module)
            try:
                hook(module)
            except Exception as error:  # a torch we do not know: record without this part
                _warn("patching " + name, error)

        loader.exec_module = exec_and_hook
        return spec


def _load_sites(agent):
    """tuneup_sites.py, beside this file, when the agent records this process's bootstrap events."""
    import importlib.util

    sample_ms = agent.python_sample_ms()
    if sample_ms < 0:
        return None
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "tuneup_sites.py")
    try:
        spec = importlib.util.spec_from_file_location("_tuneup_sites", path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module.Sites(sample_ms)
    except Exception as error:
        _warn("call sites (%s)" % path, error)
        return None


def _add_bench_hooks(agent, hooks):
    """Under `tuneup bench`: its fixes and step limit (tuneup_bench.py, beside this file), after ours."""
    import importlib.util

    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "tuneup_bench.py")
    try:
        spec = importlib.util.spec_from_file_location("_tuneup_bench", path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        module.add_hooks(agent, hooks)
    except Exception as error:
        _warn("tuneup bench's fixes (%s)" % path, error)


def _install():
    try:
        agent = _Agent()
    except (OSError, AttributeError):
        return  # not under the agent (e.g. LD_PRELOAD was cleared): nothing to do
    global _sites
    sites = _sites = _load_sites(agent)
    hooks = {
        "torch": lambda m: _patch_torch(agent, sites, m),
        "torch.optim.optimizer": lambda m: _patch_optimizer(agent, sites, m),
        "torch.nn.modules.module": lambda m: _patch_module(agent, m),
        "torch.cuda.memory": _patch_cuda_memory,
        "torch.utils.data.dataloader": lambda m: _patch_dataloader(agent, sites, m),
        "torch.utils.data._utils.fetch": lambda m: _patch_fetchers(agent, m),
        "torch.nn.parallel.data_parallel": lambda m: _patch_wrapper_class(
            agent, m.DataParallel, "tuneup.wrap.data_parallel"
        ),
        "torch.nn.parallel.distributed": lambda m: _patch_ddp(agent, m.DistributedDataParallel),
    }
    amp = _Amp(agent, sites)
    for name in ("torch.cuda.amp.grad_scaler", "torch.amp.grad_scaler"):  # 2.3 moved it; the old one subclasses
        hooks[name] = lambda m: amp.patch(m.GradScaler)
    hooks["torch.nn.utils.clip_grad"] = amp.patch_clipping
    hooks["torch.nn.utils"] = amp.patch_clipping
    if os.environ.get("TUNEUP_BENCH_REPORT"):
        _add_bench_hooks(agent, hooks)
    for name in list(hooks):
        if name in sys.modules:  # already imported (unusual this early): patch now
            try:
                hooks.pop(name)(sys.modules[name])
            except Exception as error:
                _warn("patching " + name, error)
    sys.meta_path.insert(0, _AfterImport(hooks))


if os.environ.get("TUNEUP_PYTHON_BOOTSTRAP", "1") != "0":
    try:
        _install()
    except Exception as error:
        _warn("start", error)
_chain_next_sitecustomize()
