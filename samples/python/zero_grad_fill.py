"""Gradients zeroed by fills: optimizer.zero_grad(set_to_none=False) overwrites every parameter's
gradient with zeros, one fill kernel per parameter per step. --fixed uses set_to_none=True (the default
since PyTorch 2.0): no kernels, and backward writes fresh gradients."""

import torch

import sample

args = sample.parse(__doc__, layers=12, batch=64)
torch.manual_seed(0)
device = sample.device()
layers = []
for _ in range(args.layers):
    layers += [torch.nn.Linear(256, 256), torch.nn.ReLU()]
model = torch.nn.Sequential(*layers, torch.nn.Linear(256, 10)).to(device)
optimizer = sample.sgd(model)
inputs = torch.randn(args.batch, 256, device=device)
targets = torch.randint(0, 10, (args.batch,), device=device)
sample.train("zero_grad_fill", args,
             lambda _: sample.sgd_step(model, optimizer, inputs, targets, set_to_none=args.fixed))
