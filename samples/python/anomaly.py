"""Anomaly detection left on: torch.autograd.set_detect_anomaly(True) records a stack trace for every
forward operation and checks every backward result, slowing each step. --fixed leaves it off."""

import warnings

import torch

import sample

args = sample.parse(__doc__, batch=64, hidden=1)
warnings.filterwarnings("ignore", message="Anomaly Detection has been enabled")
torch.autograd.set_detect_anomaly(not args.fixed)
torch.manual_seed(0)
device = sample.device()
hidden = []
for _ in range(args.hidden):
    hidden += [torch.nn.Linear(256, 256), torch.nn.ReLU()]
model = torch.nn.Sequential(torch.nn.Linear(128, 256), torch.nn.ReLU(), *hidden, torch.nn.Linear(256, 10)).to(device)
optimizer = sample.sgd(model)
inputs = torch.randn(args.batch, 128, device=device)
targets = torch.randint(0, 10, (args.batch,), device=device)
sample.train("anomaly", args, lambda _: sample.sgd_step(model, optimizer, inputs, targets))
