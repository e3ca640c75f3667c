"""Gradient clipping under a GradScaler, in the wrong order: clip_grad_norm_ runs on the gradients while
they are still multiplied by the loss scale (65536 at first), so max_norm=1.0 clips gradients whose true
norm is 65536 times smaller: nearly every step is clipped to a tiny update. --fixed unscales first
(scaler.unscale_(optimizer)), then clips, as PyTorch's AMP examples do. On the CPU the model trains in fp32
with torch's GradScaler (GradScaler's algorithm on the CPU before PyTorch 2.3: cpu_grad_scaler.py)."""

import torch

import sample

args = sample.parse(__doc__, width=256, batch=64)
torch.manual_seed(0)
device = sample.device()
model = torch.nn.Sequential(torch.nn.Linear(args.width, args.width), torch.nn.ReLU(),
                            torch.nn.Linear(args.width, 10)).to(device)
optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
scaler = sample.grad_scaler(device)
inputs = torch.randn(args.batch, args.width, device=device)
targets = torch.randint(0, 10, (args.batch,), device=device)


def step(_):
    optimizer.zero_grad(set_to_none=True)
    with sample.autocast(device):
        loss = torch.nn.functional.cross_entropy(model(inputs), targets)
    scaler.scale(loss).backward()
    if args.fixed:
        scaler.unscale_(optimizer)
    torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm=1.0)
    scaler.step(optimizer)
    scaler.update()


sample.train("clip_before_unscale", args, step)
