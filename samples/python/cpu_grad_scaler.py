"""GradScaler's algorithm on CPU tensors, for the samples on PyTorch before 2.3 without CUDA: those have no
GradScaler("cpu"), and torch.cuda.amp.GradScaler disables itself without a GPU. It keeps torch's GradScaler
interface and arithmetic (scale, unscale_, step, update; a skipped step multiplies the scale by
backoff_factor, growth_interval good steps in a row by growth_factor), so the samples and tuneup's bootstrap
see what they would see on a GPU. Not for training: the samples use torch.amp.GradScaler wherever it runs."""

import warnings

import torch


class CpuGradScaler(torch.cuda.amp.GradScaler):
    def __init__(self, init_scale=2.0**16, growth_factor=2.0, backoff_factor=0.5, growth_interval=2000):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            super().__init__(enabled=False)
        self._enabled = True
        self._init_scale = float(init_scale)
        self._growth_factor = float(growth_factor)
        self._backoff_factor = float(backoff_factor)
        self._growth_interval = int(growth_interval)
        self._init_growth_tracker = 0
        self._scale = None
        self._growth_tracker = None
        self._found_inf = False
        self._unscaled = set()  # ids of the optimizers unscaled since the last update

    def _lazy_init(self):
        if self._scale is None:
            self._scale = torch.full((), self._init_scale, dtype=torch.float32)
            self._growth_tracker = self._init_growth_tracker

    def scale(self, outputs):
        self._lazy_init()
        return outputs * self._scale

    def unscale_(self, optimizer):
        if id(optimizer) in self._unscaled:
            raise RuntimeError("unscale_() has already been called on this optimizer since the last update().")
        self._lazy_init()
        inverse = 1.0 / self._scale.item()
        with torch.no_grad():
            for group in optimizer.param_groups:
                for p in group["params"]:
                    if p.grad is None:
                        continue
                    if p.grad.dtype == torch.float16:
                        raise ValueError("Attempting to unscale FP16 gradients.")
                    p.grad.mul_(inverse)
                    if not torch.isfinite(p.grad).all():
                        self._found_inf = True
        self._unscaled.add(id(optimizer))

    def step(self, optimizer, *args, **kwargs):
        if id(optimizer) not in self._unscaled:
            self.unscale_(optimizer)
        if not self._found_inf:
            return optimizer.step(*args, **kwargs)
        return None

    def update(self, new_scale=None):
        self._lazy_init()
        if new_scale is not None:
            self._scale.fill_(float(new_scale))
        elif self._found_inf:
            self._scale.mul_(self._backoff_factor)
            self._growth_tracker = 0
        else:
            self._growth_tracker += 1
            if self._growth_tracker == self._growth_interval:
                self._scale.mul_(self._growth_factor)
                self._growth_tracker = 0
        self._found_inf = False
        self._unscaled.clear()

    def get_scale(self):
        return self._init_scale if self._scale is None else self._scale.item()
