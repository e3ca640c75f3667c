"""Anomaly detection left on: torch.autograd.set_detect_anomaly(True) records a stack trace for every
forward operation and checks every backward result, slowing each step. --fixed leaves it off."""

import warnings

import torch

import sample

args = sample.parse(__doc__)
warnings.filterwarnings("ignore", message="Anomaly Detection has been enabled")
torch.autograd.set_detect_anomaly(not args.fixed)
torch.manual_seed(0)
device = sample.device()
model = torch.nn.Sequential(torch.nn.Linear(128, 256), torch.nn.ReLU(), torch.nn.Linear(256, 256),
                            torch.nn.ReLU(), torch.nn.Linear(256, 10)).to(device)
optimizer = sample.sgd(model)
inputs = torch.randn(64, 128, device=device)
targets = torch.randint(0, 10, (64,), device=device)
sample.train("anomaly", args, lambda _: sample.sgd_step(model, optimizer, inputs, targets))
