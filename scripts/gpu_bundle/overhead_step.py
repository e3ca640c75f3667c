"""The GPU bundle's overhead workload: ResNet-18-style training steps (convolutions, BatchNorm, residual
additions, SGD with momentum, cudnn.benchmark on), timed one by one after a warm-up. gpu-check runs it
plain, under `tuneup record` and under torch.profiler, interleaved, and compares the step times.

    python3 overhead_step.py --report FILE [--steps N] [--warmup N] [--batch N] [--size PIXELS] [--width N]
                             [--profiler [--trace FILE]]

Each timed step ends with loss.item(), as a training loop that logs its loss does, so the step's time
is its GPU time plus whatever the host adds. --profiler runs the steps inside torch.profiler.profile
(CPU and CUDA activities, one profiler.step() per step); --trace exports that profile (Kineto JSON)
after the timing. FILE gets the step times (ms) as JSON. Without a GPU it runs on the CPU (use small
sizes).
"""

import argparse
import json
import os
import sys
import time

import torch

nn = torch.nn


class Block(nn.Module):
    def __init__(self, cin, cout, stride):
        super().__init__()
        self.conv1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(cout)
        self.conv2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(cout)
        self.down = None
        if stride != 1 or cin != cout:
            self.down = nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout))

    def forward(self, x):
        y = torch.relu(self.bn1(self.conv1(x)))
        y = self.bn2(self.conv2(y))
        return torch.relu(y + (x if self.down is None else self.down(x)))


def resnet(width, classes=100):
    widths = [width, width * 2, width * 4, width * 8]
    layers = [nn.Conv2d(3, width, 7, 2, 3, bias=False), nn.BatchNorm2d(width), nn.ReLU(), nn.MaxPool2d(3, 2, 1)]
    cin = width
    for i, cout in enumerate(widths):
        layers += [Block(cin, cout, 1 if i == 0 else 2), Block(cout, cout, 1)]
        cin = cout
    layers += [nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(cin, classes)]
    return nn.Sequential(*layers)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--report", required=True)
    parser.add_argument("--steps", type=int, default=30)
    parser.add_argument("--warmup", type=int, default=10)
    parser.add_argument("--batch", type=int, default=64)
    parser.add_argument("--size", type=int, default=224)
    parser.add_argument("--width", type=int, default=64)
    parser.add_argument("--profiler", action="store_true")
    parser.add_argument("--trace", help="export the profile here (with --profiler)")
    args = parser.parse_args()
    if args.steps < 1 or args.warmup < 0:
        parser.error("--steps must be at least 1 and --warmup at least 0")

    cuda = torch.cuda.is_available()
    device = torch.device("cuda" if cuda else "cpu")
    torch.manual_seed(0)
    torch.backends.cudnn.benchmark = True
    model = resnet(args.width).to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    images = torch.randn(args.batch, 3, args.size, args.size, device=device)
    labels = torch.randint(0, 100, (args.batch,), device=device)

    def step():
        optimizer.zero_grad(set_to_none=True)
        loss = nn.functional.cross_entropy(model(images), labels)
        loss.backward()
        optimizer.step()
        return loss.item()

    for _ in range(args.warmup):
        step()
    if cuda:
        torch.cuda.synchronize()
    times = []
    profiler = None
    if args.profiler:
        activities = [torch.profiler.ProfilerActivity.CPU] + ([torch.profiler.ProfilerActivity.CUDA] if cuda else [])
        # A schedule, as training scripts use it: profiler.step() then marks each step (ProfilerStep#N).
        profiler = torch.profiler.profile(activities=activities,
                                          schedule=torch.profiler.schedule(wait=0, warmup=1, active=args.steps),
                                          on_trace_ready=(lambda p: p.export_chrome_trace(args.trace)) if args.trace
                                          else None)
        profiler.__enter__()
    for _ in range(args.steps):
        start = time.perf_counter()
        step()
        times.append((time.perf_counter() - start) * 1000.0)
        if profiler is not None:
            profiler.step()
    if profiler is not None:
        profiler.__exit__(None, None, None)
    result = dict(device=device.type, step_ms=times, batch=args.batch, size=args.size, width=args.width,
                  profiler=args.profiler, torch=torch.__version__)
    with open(args.report + ".tmp", "w") as out:
        json.dump(result, out)
    os.replace(args.report + ".tmp", args.report)
    times.sort()
    print("overhead_step: %d steps on %s, median %.2f ms" % (len(times), device.type, times[len(times) // 2]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
