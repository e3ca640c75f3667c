"""Tensors made on the CPU then copied: each step builds its noise and mask on the host and moves them
to the GPU (a pageable copy and a wait each). --fixed makes them on the device directly."""

import torch

import sample

args = sample.parse(__doc__)
torch.manual_seed(0)
device = sample.device()
model = torch.nn.Sequential(torch.nn.Linear(512, 512), torch.nn.ReLU(), torch.nn.Linear(512, 10)).to(device)
optimizer = sample.sgd(model)
inputs = torch.randn(128, 512, device=device)
targets = torch.randint(0, 10, (128,), device=device)


def step(_):
    if args.fixed:
        noise = torch.randn(128, 512, device=device)
        mask = torch.rand(128, 512, device=device) > 0.1
    else:
        noise = torch.randn(128, 512).to(device)
        mask = (torch.rand(128, 512) > 0.1).to(device)
    sample.sgd_step(model, optimizer, (inputs + 0.01 * noise) * mask, targets)


sample.train("cpu_tensor_copy", args, step)
