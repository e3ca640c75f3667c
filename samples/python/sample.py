"""What every Python sample shares: its command line (--steps N, --fixed), the device, and a
training loop that marks each step with an NVTX range when CUDA is there (on the CPU, tuneup finds
the steps from the optimizer ranges its Python bootstrap records). Each sample shows one
anti-pattern; --fixed runs its corrected twin."""

import argparse
import contextlib
import time

import torch


def parse(description, **extra):
    """The sample's options: --steps, --fixed and its own flags (name=default, typed by the default)."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--steps", type=int, default=20, help="training steps (default 20)")
    parser.add_argument("--fixed", action="store_true", help="run the corrected twin")
    for name, default in extra.items():
        parser.add_argument("--" + name.replace("_", "-"), type=type(default), default=default,
                            help="default %s" % default)
    args = parser.parse_args()
    if args.steps < 1:
        parser.error("--steps must be at least 1")
    return args


def device():
    return torch.device("cuda" if torch.cuda.is_available() else "cpu")


def step_range(name="step"):
    if torch.cuda.is_available():
        return torch.cuda.nvtx.range(name)
    return contextlib.nullcontext()


def train(name, args, step):
    """Runs step(i) args.steps times, each inside a "step" range, and prints the time per step."""
    start = time.perf_counter()
    for i in range(args.steps):
        with step_range():
            step(i)
    if torch.cuda.is_available():
        torch.cuda.synchronize()
    per_step = (time.perf_counter() - start) * 1000.0 / args.steps
    print("%s%s: %d steps on %s, %.2f ms per step" % (name, " --fixed" if args.fixed else "", args.steps,
                                                       device().type, per_step))


def sgd_step(model, optimizer, inputs, targets, set_to_none=True):
    optimizer.zero_grad(set_to_none=set_to_none)
    loss = torch.nn.functional.cross_entropy(model(inputs), targets)
    loss.backward()
    optimizer.step()
    return loss


def sgd(model):
    return torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)


def grad_scaler(device, **options):
    """The loss scaler for fp16 training on `device`: torch.amp.GradScaler (PyTorch 2.3 on), else
    torch.cuda.amp.GradScaler on a GPU, else GradScaler's algorithm on the CPU (cpu_grad_scaler.py)."""
    amp = getattr(torch, "amp", None)
    if hasattr(amp, "GradScaler"):
        return amp.GradScaler(device.type, **options)
    if device.type == "cuda":
        return torch.cuda.amp.GradScaler(**options)
    from cpu_grad_scaler import CpuGradScaler

    return CpuGradScaler(**options)


def autocast(device):
    """fp16 autocast on a GPU; on the CPU (no fp16 autocast there), nothing."""
    if device.type == "cuda":
        return torch.autocast("cuda", dtype=torch.float16)
    return contextlib.nullcontext()
